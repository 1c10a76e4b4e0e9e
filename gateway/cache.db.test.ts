import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestStack, type TestStack } from "../test/stack.ts";

// Cache-Control as a CDN in front of GET /graphql sees it: long for finalized bets, short for
// anything that moves with the head, no-store for health and errors.

let t: TestStack;
beforeAll(async () => {
  t = await startTestStack({ bets: 120 });
});
afterAll(async () => {
  await t?.close();
});

async function cacheControlOf(query: string): Promise<string | null> {
  const response = await fetch(`${t.url}/graphql?query=${encodeURIComponent(query)}`);
  const body = (await response.json()) as { errors?: unknown };
  return body.errors ? `errors:${response.headers.get("cache-control")}` : response.headers.get("cache-control");
}

describe("Cache-Control", () => {
  it("lets a finalized settled bet, with its proof and history fields, live an hour", async () => {
    const { chainId, betId } = t.fixtures.sampleSettled!;
    expect(
      await cacheControlOf(
        `{ betResult(chainId: ${chainId}, betId: "${betId}") { betId player stake status network { name } result { outcome proof { piA verified } } } }`,
      ),
    ).toBe("max-age=60, public"); // network { name } is a setting: 60 s
    expect(
      await cacheControlOf(`{ betResult(chainId: ${chainId}, betId: "${betId}") { betId player stake status result { outcome proof { piA verified } } } }`),
    ).toBe("max-age=3600, public");
  });

  it("keeps what moves with the head short", async () => {
    const { chainId, betId } = t.fixtures.sampleSettled!;
    expect(await cacheControlOf(`{ betResult(chainId: ${chainId}, betId: "${betId}") { confirmations } }`)).toBe("max-age=2, public");
    expect(await cacheControlOf(`{ betResult(chainId: ${chainId}, betId: "99999") { betId } }`)).toBe("max-age=2, public");
    expect(await cacheControlOf(`{ playerBets(wallet: "${t.fixtures.whale}") { nodes { betId } } }`)).toBe("max-age=2, public");
    expect(await cacheControlOf(`{ networkConfigs { name indexing { headBlock } } }`)).toBe("max-age=2, public");
    const pending = await t.db.prisma.bet.findFirstOrThrow({ where: { status: "PENDING" }, orderBy: { placedBlock: "desc" } });
    expect(await cacheControlOf(`{ betResult(chainId: ${pending.chainId}, betId: "${pending.betId.toFixed(0)}") { betId status } }`)).toBe("max-age=2, public");
  });

  it("never lets health or an error be stored", async () => {
    expect(await cacheControlOf(`{ health { status } }`)).toBe("no-store");
    expect(await cacheControlOf(`{ betResult(chainId: 5, betId: "1") { betId } }`)).toBe("errors:no-store");
  });
});
