import { request, type ClientRequest } from "node:http";
import type { ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gatewayProtection } from "../bin/wiring.ts";
import { loadConfig } from "../core/config.ts";
import { type LoopbackAnswer, requestFrom } from "../test/loopback-request.ts";
import { startTestStack, type TestStack } from "../test/stack.ts";

// The per-client cap on requests in flight (gateway/in-flight.ts), under the default configuration
// (RATE_LIMIT_MAX_IN_FLIGHT = 8, the points budget on) but with every open request running
// (RATE_LIMIT_RUNNING_PER_CLIENT = 0): turns are in-flight-turns.test.ts's. The slow path is a route of the API port
// that holds its answer until the test lets it go: requests held there are in flight exactly as a
// stalled subgraph's would be, and the test knows when each one is past the door.

const config = loadConfig(["shared", "gateway"], { RATE_LIMIT_RUNNING_PER_CLIENT: "0" });
const CAP = config.RATE_LIMIT_MAX_IN_FLIGHT;

/** Requests that entered the held route, and waiters for a count. */
let entered = 0;
let closed = 0;
const waiters: { count: () => number; at: number; resolve: () => void }[] = [];
const notify = () => {
  for (const waiter of [...waiters]) {
    if (waiter.count() < waiter.at) continue;
    waiters.splice(waiters.indexOf(waiter), 1);
    waiter.resolve();
  }
};
const when = (count: () => number, at: number) =>
  new Promise<void>((resolve) => {
    waiters.push({ count, at, resolve });
    notify();
  });

let releaseHeld: () => void = () => {};
let gate = Promise.resolve();
const closeGate = () => {
  gate = new Promise((resolve) => {
    releaseHeld = resolve;
  });
};

const heldRoute = async (_req: unknown, res: ServerResponse) => {
  entered++;
  res.once("close", () => {
    closed++;
    notify();
  });
  notify();
  await gate;
  if (!res.closed) res.end("released");
};

/** A stack of 40 bets whose gateway has the held route, protected as `settings` say. */
const heldStack = (settings: typeof config) =>
  startTestStack({ bets: 40 }, { protection: gatewayProtection(settings), web: { routes: { "/held": heldRoute } } });

let t: TestStack;
beforeAll(async () => {
  t = await heldStack(config);
});
afterAll(async () => {
  releaseHeld();
  await t?.close();
});

type Answer = LoopbackAnswer;

/** One request on its own connection from a loopback address, to `stack` (default: the stack with every request running). */
const from = (localAddress: string, path: string, body?: string, stack = t) => requestFrom(stack.url, localAddress, path, body);

const QUERY = JSON.stringify({ query: `{ playerBets(wallet: "0x000000000000000000000000000000000000dead", first: 1) { totalCount } }` });
const graphqlFrom = (address: string) => from(address, "/graphql", QUERY).answer;

/** Holds one request from `address` in the route; resolves once it is past the door, fails if it was answered instead. */
async function hold(address: string, stack = t): Promise<{ req: ClientRequest; answer: Promise<Answer> }> {
  const held = from(address, "/held", undefined, stack);
  const at = entered + 1;
  await Promise.race([
    when(() => entered, at),
    held.answer.then((answer) => {
      throw new Error(`not held: answered ${answer.status} ${answer.body}`);
    }),
  ]);
  return held;
}

const expectRefusedInFlight = (answer: Answer) => {
  expect(answer.status).toBe(429);
  expect(answer.headers["retry-after"]).toBe("1");
  // The budget as every other answer says it (points; this refusal charged none of them).
  expect(answer.headers["ratelimit-limit"]).toBe(String(config.RATE_LIMIT_POINTS));
  expect(answer.headers["ratelimit-remaining"]).toMatch(/^\d+$/);
  expect(Number(answer.headers["ratelimit-remaining"])).toBeLessThanOrEqual(config.RATE_LIMIT_POINTS);
  expect(answer.headers["ratelimit-reset"]).toMatch(/^\d+$/);
  const body = JSON.parse(answer.body) as { errors: { message: string; extensions: Record<string, unknown> }[] };
  expect(body.errors[0]?.extensions.code).toBe("RATE_LIMITED");
  expect(body.errors[0]?.message).toContain(`too many requests in flight from this address (${CAP})`);
};

describe("the per-client cap on requests in flight", () => {
  it("serves N requests from one address, refuses the next at every door, serves other addresses meanwhile, and that address again after", async () => {
    expect(CAP).toBe(8);
    closeGate();
    const held = [];
    for (let i = 0; i < CAP; i++) held.push(await hold("127.0.0.2"));

    expectRefusedInFlight(await graphqlFrom("127.0.0.2"));
    expectRefusedInFlight(await from("127.0.0.2", `/wallets/${t.fixtures.whale}/bets.csv`).answer);
    expectRefusedInFlight(await from("127.0.0.2", "/schema.graphql").answer);
    const other = await graphqlFrom("127.0.0.3");
    expect(other.status).toBe(200);
    expect(JSON.parse(other.body)).toHaveProperty("data.playerBets.totalCount", 0);

    releaseHeld();
    expect((await Promise.all(held.map((h) => h.answer))).map((a) => a.status)).toEqual(Array.from({ length: CAP }, () => 200));
    expect((await graphqlFrom("127.0.0.2")).status).toBe(200);

    const metrics = await from("127.0.0.9", "/metrics").answer;
    expect(metrics.body).toMatch(/gateway_refusals_total\{[^}]*reason="in_flight"[^}]*\} 3\b/);
  });

  it("frees the slot of a client that disconnects, exactly once", async () => {
    closeGate();
    const held = [];
    for (let i = 0; i < CAP; i++) held.push(await hold("127.0.0.4"));
    const aborted = held.shift()!;
    aborted.answer.catch(() => {}); // its socket is destroyed: the client sees an error, as it asked
    const closedBefore = closed;
    aborted.req.destroy();
    await when(() => closed, closedBefore + 1); // the door's own close listener ran before the route's

    held.push(await hold("127.0.0.4")); // the freed slot is taken again...
    expectRefusedInFlight(await graphqlFrom("127.0.0.4")); // ...and it was freed once: the cap is full again

    releaseHeld();
    expect((await Promise.all(held.map((h) => h.answer))).map((a) => a.status)).toEqual(Array.from({ length: CAP }, () => 200));
    expect((await graphqlFrom("127.0.0.4")).status).toBe(200);
  });
});

/** A GraphQL POST from `address` whose body is half sent: in flight at the door, before it can run. */
function halfSentGraphQL(address: string): { req: ClientRequest; answer: Promise<Answer>; finish: () => void } {
  const url = new URL(t.url);
  const body = Buffer.from(QUERY);
  const half = Math.floor(body.length / 2);
  let req: ClientRequest | undefined;
  const answer = new Promise<Answer>((resolve, reject) => {
    req = request(
      {
        host: url.hostname,
        port: url.port,
        path: "/graphql",
        method: "POST",
        localAddress: address,
        agent: false,
        headers: { "content-type": "application/json", "content-length": body.length },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.write(body.subarray(0, half));
  });
  return { req: req!, answer, finish: () => req!.end(body.subarray(half)) };
}

/** Asks from `address` until the answer has `status`: the server's count of its open requests has reached the state the test waits for. */
async function askUntil(address: string, status: 200 | 429): Promise<Answer> {
  for (;;) {
    const answer = await graphqlFrom(address);
    expect([200, 429]).toContain(answer.status);
    if (answer.status === 429) expectRefusedInFlight(answer); // never the points budget: the loop must not outlast it
    if (answer.status === status) return answer;
  }
}

describe("a GraphQL request in flight", () => {
  it("holds its slot until its answer ends, and frees it once when its client leaves mid-body", async () => {
    closeGate();
    const held = [];
    for (let i = 0; i < CAP - 1; i++) held.push(await hold("127.0.0.5"));

    const slow = halfSentGraphQL("127.0.0.5");
    expectRefusedInFlight(await askUntil("127.0.0.5", 429)); // the half-sent request took the last slot
    slow.finish();
    expect((await slow.answer).status).toBe(200);
    expect((await graphqlFrom("127.0.0.5")).status).toBe(200); // its answer ended: its slot is free

    const abandoned = halfSentGraphQL("127.0.0.5");
    abandoned.answer.catch(() => {});
    await askUntil("127.0.0.5", 429);
    abandoned.req.destroy();
    await askUntil("127.0.0.5", 200); // freed when its client left
    held.push(await hold("127.0.0.5"));
    expectRefusedInFlight(await graphqlFrom("127.0.0.5")); // freed once: the cap is full again

    releaseHeld();
    expect((await Promise.all(held.map((h) => h.answer))).map((a) => a.status)).toEqual(Array.from({ length: CAP }, () => 200));
  });
});

describe("the whole stack under the default turns (RATE_LIMIT_RUNNING_PER_CLIENT = 2)", () => {
  const defaults = loadConfig(["shared", "gateway"], {});
  let stack: TestStack;
  beforeAll(async () => {
    stack = await heldStack(defaults);
  });
  afterAll(async () => {
    releaseHeld();
    await stack?.close();
  });
  const metric = async (name: string) => {
    const text = (await from("127.0.0.9", "/metrics", undefined, stack).answer).body;
    const value = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\d+)$`, "m").exec(text)?.[1];
    if (value === undefined) throw new Error(`no ${name} in /metrics`);
    return Number(value);
  };

  it("runs two of an address's requests, keeps the others waiting at the door while other addresses are served, then runs them", async () => {
    expect(defaults.RATE_LIMIT_RUNNING_PER_CLIENT).toBe(2);
    closeGate();
    const running = [await hold("127.0.0.6", stack), await hold("127.0.0.6", stack)];
    const enteredBefore = entered;
    // A body over Node's 16 KiB read buffer: read only once its turn comes.
    const padded = JSON.stringify({ query: `# ${"x".repeat(20_000)}\n${JSON.parse(QUERY).query}` });
    const waiting = [from("127.0.0.6", "/graphql", padded, stack), from("127.0.0.6", "/held", undefined, stack)];
    while ((await metric("gateway_requests_waiting_turn")) < 2) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(entered).toBe(enteredBefore);

    const other = await from("127.0.0.7", "/graphql", QUERY, stack).answer;
    expect(other.status).toBe(200);

    releaseHeld();
    const answers = await Promise.all([...running, ...waiting].map((r) => r.answer));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    expect(JSON.parse(answers[2]!.body)).toHaveProperty("data.playerBets.totalCount", 0);
    expect(entered).toBe(enteredBefore + 1);
    expect(await metric("gateway_requests_waiting_turn")).toBe(0);
    expect(await metric("gateway_requests_waited_turn_total")).toBe(2);
  });
});
