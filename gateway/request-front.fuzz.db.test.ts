import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gatewayProtection } from "../bin/wiring.ts";
import { loadConfig } from "../core/config.ts";
import { startTestStack, type TestStack } from "../test/stack.ts";
import { REQUEST_POINTS } from "./points-budget.ts";
import { createMemoryResponseCacheStore } from "./response-cache.ts";

// The request front attacked as a structure-aware fuzzer would: raw HTTP requests of every method,
// content type, body shape and size the limits allow (deep nesting within MAX_BODY_BYTES, huge
// strings, wrong types for every request field, APQ extensions of every shape), variables nested
// deep, and headers of every kind (X-Forwarded-For garbage, large headers, odd Accept and
// Accept-Encoding). Against the production gateway with its default protection on a frozen clock:
// - never a 5xx (no dependency is down here) and never INTERNAL_SERVER_ERROR;
// - every error carries a code the reference documents;
// - what the budget lost for one request (RateLimit-Remaining before and after, nothing refills)
//   is at least the door's price and never more than the price it was quoted (extensions.cost).

const KNOWN_CODES = new Set([
  "BAD_USER_INPUT",
  "GRAPHQL_VALIDATION_FAILED",
  "GRAPHQL_PARSE_FAILED",
  "BAD_REQUEST",
  "PAYLOAD_TOO_LARGE",
  "QUERY_TOO_COMPLEX",
  "RATE_LIMITED",
  "PERSISTED_QUERY_NOT_FOUND",
  "PERSISTED_QUERY_NOT_SUPPORTED",
  "NOT_FOUND",
  "METHOD_NOT_ALLOWED",
  "UNSUPPORTED_MEDIA_TYPE",
  "NOT_ACCEPTABLE",
]);

const config = loadConfig(["shared", "gateway"], {});
const MAX_BODY = config.MAX_BODY_BYTES;
let t: TestStack;
beforeAll(async () => {
  const protection = gatewayProtection(config);
  t = await startTestStack(
    { bets: 60 },
    {
      production: true,
      protection: { ...protection, rateLimit: protection.rateLimit && { ...protection.rateLimit, now: () => 1_000_000 } },
      responseCache: createMemoryResponseCacheStore({ maxEntries: 1000, maxBytes: 16 * 1024 * 1024 }),
    },
  );
});
afterAll(async () => {
  await t?.close();
});

interface RawRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
  localAddress?: string;
}
interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

function send(r: RawRequest): Promise<RawAnswer> {
  const url = new URL(t.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: r.path, method: r.method, headers: r.headers, localAddress: r.localAddress }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString("latin1") }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(r.body);
  });
}

interface Body {
  errors?: { message?: string; extensions?: { code?: string } }[];
  extensions?: { cost?: { requested: number; actual: number } };
}
const parsed = (answer: RawAnswer): Body | undefined => {
  if (!String(answer.headers["content-type"] ?? "").includes("json") || answer.headers["content-encoding"]) return undefined;
  try {
    return JSON.parse(answer.text) as Body;
  } catch {
    return undefined;
  }
};

/** The properties every answer keeps, whatever was asked. */
function expectWellBehaved(answer: RawAnswer, what: string) {
  expect(answer.status, `${what} → ${answer.status} ${answer.text.slice(0, 300)}`).toBeLessThan(500);
  const body = parsed(answer);
  for (const error of body?.errors ?? []) {
    const code = error.extensions?.code ?? "";
    expect(KNOWN_CODES.has(code), `${what} → ${code}: ${error.message}`).toBe(true);
  }
}

// One loopback address per request: its own full budget, so the charge is read exactly.
let nextHost = 0;
const freshAddress = () => {
  nextHost++;
  return `127.0.${1 + Math.floor(nextHost / 250)}.${1 + (nextHost % 250)}`;
};

/** Sends a request from a fresh address after a probe, and checks what the budget lost against its price. */
async function sendPriced(r: RawRequest, what: string): Promise<RawAnswer> {
  const localAddress = freshAddress();
  const probe = await send({ method: "GET", path: "/graphql?query=%7B__typename%7D", headers: {}, localAddress });
  const before = Number(probe.headers["ratelimit-remaining"]);
  const answer = await send({ ...r, localAddress });
  expectWellBehaved(answer, what);
  // The settlement reaches the store in the background: read after it with another cheap probe.
  const after = await waitForSettled(localAddress, answer);
  const charged = before - after - REQUEST_POINTS; // the second probe paid the door too
  // Node's HTTP parser refuses oversized headers (431) and malformed requests (400) before any handler: no work, no charge.
  if (answer.status === 431 || (answer.status === 400 && !parsed(answer))) {
    expect(charged, `${what}: refused by the HTTP parser yet charged ${charged}`).toBe(0);
    return answer;
  }
  const cost = parsed(answer)?.extensions?.cost;
  expect(charged, `${what}: charged ${charged}`).toBeGreaterThanOrEqual(REQUEST_POINTS);
  if (cost) {
    expect(charged, `${what}: charged ${charged}, cost ${JSON.stringify(cost)}`).toBeLessThanOrEqual(Math.max(cost.requested, REQUEST_POINTS));
    expect(charged, `${what}: charged ${charged}, cost ${JSON.stringify(cost)}`).toBe(cost.actual);
  } else if (answer.status !== 429) {
    // An answer that says no cost (a refusal before Apollo Server, a cache replay) paid the door alone.
    expect(charged, `${what}: charged ${charged} with no cost extension`).toBe(REQUEST_POINTS);
  }
  return answer;
}

async function waitForSettled(localAddress: string, _answer: RawAnswer): Promise<number> {
  // The settlement is a background store call; the memory store applies it before the next take
  // in practice, but give it a turn of the event loop on both ends.
  await new Promise((resolve) => setImmediate(resolve));
  const probe = await send({ method: "GET", path: "/graphql?query=%7B__typename%7D", headers: {}, localAddress });
  return Number(probe.headers["ratelimit-remaining"]);
}

const json = (value: unknown): RawRequest => ({
  method: "POST",
  path: "/graphql",
  headers: { "content-type": "application/json" },
  body: JSON.stringify(value),
});
const nested = (depth: number, leaf: string) => "[".repeat(depth) + leaf + "]".repeat(depth);

describe("defects found by fuzzing the request front", () => {
  it("answers betResults with $ids nested 30 000 deep with a clear error, not INTERNAL_SERVER_ERROR", async () => {
    const query = `query ($ids: [UInt256!]!) { betResults(chainId: 31337, betIds: $ids) { betId } }`;
    const body = `{"query":${JSON.stringify(query)},"variables":{"ids":${nested(30_000, '"1"')}}}`;
    expect(body.length).toBeLessThanOrEqual(MAX_BODY);
    const answer = await sendPriced({ method: "POST", path: "/graphql", headers: { "content-type": "application/json" }, body }, "ids nested 30 000 deep");
    expect(answer.status).toBe(400);
    expect(parsed(answer)?.errors?.[0]?.extensions?.code).toBe("BAD_REQUEST");
  });

  it("answers the same $ids nested 2 500 deep in a GET's variables with a clear error", async () => {
    const query = `query ($ids: [UInt256!]!) { betResults(chainId: 31337, betIds: $ids) { betId } }`;
    const search = new URLSearchParams({ query, variables: `{"ids":${nested(2_500, '"1"')}}` });
    const answer = await sendPriced({ method: "GET", path: `/graphql?${search}`, headers: {} }, "GET ids nested 2 500 deep");
    expect(answer.status).toBe(400);
    expect(parsed(answer)?.errors?.[0]?.extensions?.code).toBe("BAD_REQUEST");
  });

  it("still answers variables as deep as the schema's inputs nest", async () => {
    const query = `query ($w: Address!, $f: PlayerBetsFilter) { playerBets(wallet: $w, filter: $f, first: 1) { nodes { betId } } }`;
    const answer = await sendPriced(json({ query, variables: { w: t.fixtures.whale, f: { status: ["SETTLED"] } } }), "a filter with a list");
    expect(answer.status).toBe(200);
    expect(parsed(answer)?.errors).toBeUndefined();
  });
});
