import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gatewayProtection } from "../bin/wiring.ts";
import { loadConfig } from "../core/config.ts";
import { startTestStack, type TestStack } from "../test/stack.ts";

// The points budget end to end under the default settings: each client (here: its own loopback
// address, 127.0.0.x) pays for what its requests cost, so one address cannot repeat the most
// expensive requests the limits accept, while another address is still served.
// The buckets run on a frozen clock: nothing refills while a test runs, so the counts are exact.

let t: TestStack;
beforeAll(async () => {
  const protection = gatewayProtection(loadConfig(["gateway"], {}));
  t = await startTestStack(
    { bets: 120 },
    { protection: { ...protection, rateLimit: protection.rateLimit && { ...protection.rateLimit, now: () => 1_000_000 } } },
  );
});
afterAll(async () => {
  await t?.close();
});

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: { data?: unknown; errors?: { message: string; extensions: Record<string, unknown> }[]; extensions?: Record<string, unknown> };
}

/** POSTs a query from one loopback address (the client the gateway charges). */
function postFrom(localAddress: string, query: string): Promise<Answer> {
  const url = new URL(`${t.url}/graphql`);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path: url.pathname, method: "POST", localAddress, headers: { "content-type": "application/json" } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) as Answer["body"] }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify({ query }));
  });
}

describe("aliased aggregates are paid for by what they cost", () => {
  const attacks = {
    "bets with two aliased totalCounts under a game filter": () => `{ bets(first: 1, filter: { game: "dice" }) { a: totalCount b: totalCount } }`,
    "nine aliased playerBets { totalCount } under a game filter": () =>
      `{ ${Array.from({ length: 9 }, (_, i) => `p${i}: playerBets(wallet: "${t.fixtures.whale}", filter: { game: "dice" }) { totalCount }`).join(" ")} }`,
  };
  let address = 10;
  it.each(Object.keys(attacks) as (keyof typeof attacks)[])("%s: one address is refused within a few, another is still served", async (name) => {
    const attacker = `127.0.0.${address++}`;
    const bystander = `127.0.0.${address++}`;
    const query = attacks[name]();
    const served: number[] = [];
    let refused: Answer | undefined;
    for (let i = 0; i < 8 && !refused; i++) {
      const answer = await postFrom(attacker, query);
      if (answer.status === 200) served.push(i);
      else refused = answer;
    }
    // Accepted by the query limits (under 5 000 each), so the first ones are served ...
    expect(served.length).toBeGreaterThanOrEqual(2);
    // ... but not for long: a budget of 10 000 points pays for two or three of them.
    expect(served.length).toBeLessThanOrEqual(3);
    expect(refused?.status).toBe(429);
    expect(refused?.body.errors?.[0]?.extensions).toMatchObject({ code: "RATE_LIMITED" });
    expect(Number(refused?.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect(refused?.body.errors?.[0]?.extensions.retryAfterSeconds).toBe(Number(refused?.headers["retry-after"]));

    const other = await postFrom(bystander, query);
    expect(other.status).toBe(200);
    expect(other.body.errors).toBeUndefined();
  });
});
