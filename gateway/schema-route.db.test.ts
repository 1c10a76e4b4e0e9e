import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestStack, type TestStack } from "../test/stack.ts";

// GET /schema.graphql prints the supergraph the gateway serves, held in memory: it never reads the
// file per request (a public, unpriced route would otherwise be a disk read per request, and fail
// while the file is being replaced).

const dir = mkdtempSync(join(tmpdir(), "schema-route-"));
const supergraphPath = join(dir, "supergraph.graphql");
let t: TestStack;

beforeAll(async () => {
  copyFileSync("supergraph.graphql", supergraphPath);
  t = await startTestStack({ bets: 4 }, { supergraphPath });
});
afterAll(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("GET /schema.graphql", () => {
  it("answers the served schema from memory, even while the file is gone", async () => {
    const first = await fetch(`${t.url}/schema.graphql`);
    const sdl = await first.text();
    expect(first.status).toBe(200);
    expect(sdl).toMatch(/type Query/);
    rmSync(supergraphPath);
    const again = await fetch(`${t.url}/schema.graphql`);
    expect(again.status).toBe(200);
    expect(await again.text()).toBe(sdl);
  });
});
