import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReadStatement } from "./db.ts";
import { createTestDatabase, type TestDatabase } from "../test/db.ts";

// Database.read, the driver-level read of hot paths (subgraphs/results/data.ts): the same rows on
// PGlite and PostgreSQL for the casts the callers rely on, a statement reused with other values
// (prepared once per connection on PostgreSQL), and seen by `onQuery` as Prisma's statements are.

const MAX_UINT256 = ((1n << 256n) - 1n).toString();
const STATEMENT: ReadStatement = {
  name: "db-read-test",
  text: `SELECT x::text AS x, to_json(ARRAY[x::text, 'b']) AS list, json_build_object('n', 1) AS doc, x > 0 AS positive
         FROM unnest($1::text[]::numeric[]) WITH ORDINALITY AS t(x, i) ORDER BY i`,
};

describe("Database.read", () => {
  let db: TestDatabase;
  const seen: string[] = [];
  beforeAll(async () => {
    db = await createTestDatabase({ onQuery: (sql) => seen.push(sql) });
  });
  afterAll(() => db?.close());

  it("returns 256-bit numerics cast to text exactly, JSON parsed, in the statement's order, and again with other values", async () => {
    const first = await db.read<{ x: string; list: string[]; doc: { n: number }; positive: boolean }>(STATEMENT, [[MAX_UINT256, "0"]]);
    expect(first).toEqual([
      { x: MAX_UINT256, list: [MAX_UINT256, "b"], doc: { n: 1 }, positive: true },
      { x: "0", list: ["0", "b"], doc: { n: 1 }, positive: false },
    ]);
    const second = await db.read<{ x: string }>(STATEMENT, [["7"]]);
    expect(second.map((row) => row.x)).toEqual(["7"]);
    expect(seen.filter((sql) => sql === STATEMENT.text)).toHaveLength(2);
  });
});
