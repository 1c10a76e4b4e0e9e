import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startTestStack, type TestStack } from "../test/stack.ts";

// The API is public: introspection answers in every mode. Apollo Server turns it off when
// NODE_ENV is `production` unless told otherwise, so this runs the stack under that environment.

let t: TestStack;
beforeAll(async () => {
  vi.stubEnv("NODE_ENV", "production");
  t = await startTestStack({ bets: 4 }, { production: true });
});
afterAll(async () => {
  await t?.close();
  vi.unstubAllEnvs();
});

const QUERY = `{ __schema { queryType { name } } }`;

describe("introspection under NODE_ENV=production", () => {
  it("answers at the gateway", async () => {
    expect(process.env.NODE_ENV).toBe("production");
    const { status, data, errors } = await t.gql(QUERY);
    expect(errors).toBeUndefined();
    expect(status).toBe(200);
    expect(data).toEqual({ __schema: { queryType: { name: "Query" } } });
  });

  it("answers at every subgraph", async () => {
    const names = Object.keys(t.stack.subgraphUrls);
    expect(names.length).toBeGreaterThanOrEqual(3);
    for (const name of names) {
      const { data, errors } = await t.gql(QUERY, undefined, t.stack.subgraphUrls[name]);
      expect(errors, name).toBeUndefined();
      expect(data, name).toEqual({ __schema: { queryType: { name: "Query" } } });
    }
  });
});
