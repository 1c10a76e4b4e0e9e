import { createServer, get, request, type Server } from "node:http";
import { type AddressInfo, connect } from "node:net";
import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { createGraphQLRequestListener, listen } from "../core/http.ts";
import { createInFlightCap, type InFlightCap, type InFlightSettings } from "./in-flight.ts";

// The process's seats at the door (gateway/in-flight.ts with gateway/fair-share.ts): past its own
// client's turn a GraphQL request waits for a seat when `runningPerGateway` run already, and a freed
// seat goes to the client used least lately, a client the process has just met ranking as a heavy
// one. A real HTTP server on loopback; its handler holds each answer until the test lets it go.

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

const until = async (ready: () => boolean) => {
  while (!ready()) await new Promise((resolve) => setTimeout(resolve, 5));
};

/** A server behind a door with `settings`; `/graphql?big` answers 16 MiB at once, every other request is held until released. */
async function door(settings: Partial<InFlightSettings>) {
  const registry = new Registry();
  const cap: InFlightCap = createInFlightCap({ maxPerClient: 8, runningPerClient: 2, trustProxyHops: 0, ...settings }, registry);
  const ran: string[] = [];
  const holds = new Map<string, () => void>();
  const server = createServer(async (req, res) => {
    if (!(await cap.admit(req, res))) return;
    const path = req.url ?? "";
    // core/http.ts seats GraphQL requests only, once their body has arrived (a GET has none).
    if (path.startsWith("/graphql") && !(await cap.takeSeat(req, res))) return;
    ran.push(path);
    if (path === "/graphql?big") return void res.end(Buffer.alloc(16 * 1024 * 1024));
    await new Promise<void>((resolve) => holds.set(path, resolve));
    if (!res.closed) res.end(path);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const send = (address: string, path: string) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      get({ host: "127.0.0.1", port, path, localAddress: address, agent: false }, (res) => {
        let body = "";
        res.on("data", (chunk: Buffer) => {
          body += chunk.toString("utf8");
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      }).on("error", reject);
    });
  const release = async (path: string) => {
    await until(() => holds.has(path));
    holds.get(path)?.();
  };
  return { cap, ran, send, release, port, registry };
}

/** A GET from `address` that waits for a seat (the only one waiting), then its client leaves: out of the queue. */
async function leaveWhileWaiting(cap: InFlightCap, port: number, address: string, path: string): Promise<void> {
  const leaver = connect({ host: "127.0.0.1", port, localAddress: address });
  leaver.on("error", () => {});
  leaver.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
  await until(() => cap.seats!.waiting() === 1);
  leaver.destroy();
  await until(() => cap.seats!.waiting() === 0);
}
describe("seats at the door", () => {
  it("lets a light client's request run while a crowd holds every seat", async () => {
    const { cap, ran, send, release } = await door({ runningPerGateway: 1, fairShare: { halfLifeMs: 50 } });
    const light = send("127.0.0.41", "/graphql?l1"); // a newcomer: it takes the free seat
    await release("/graphql?l1");
    await light;
    await new Promise((resolve) => setTimeout(resolve, 500)); // ten half-lives: light now
    const holder = send("127.0.0.42", "/graphql?hold-l");
    await until(() => cap.seats!.running() === 1);
    const waiting = send("127.0.0.43", "/graphql?new"); // another newcomer: waits
    await until(() => cap.seats!.waiting() === 1);
    const again = send("127.0.0.41", "/graphql?l2");
    await until(() => ran.includes("/graphql?l2"));
    expect(cap.seats!.waiting()).toBe(1);
    for (const path of ["/graphql?l2", "/graphql?hold-l", "/graphql?new"]) await release(path);
    expect((await Promise.all([again, holder, waiting])).map((r) => r.status)).toEqual([200, 200, 200]);
  });

  it("gives a freed seat to a client served lately before an address just met, whichever came first", async () => {
    const { cap, ran, send, release } = await door({ runningPerGateway: 2, fairShare: { halfLifeMs: 50, lightUses: 0 } });
    const seats = cap.seats!;
    // The senior client was served once, long enough ago (ten half-lives) to rank as light.
    const first = send("127.0.0.31", "/graphql?s1");
    await release("/graphql?s1");
    expect((await first).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 500));

    // A heavy newcomer takes both seats.
    const heavy = [send("127.0.0.32", "/graphql?h1"), send("127.0.0.32", "/graphql?h2")];
    await until(() => ran.length === 3);
    // Another newcomer arrives before the senior client: both wait for a seat.
    const newcomer = send("127.0.0.33", "/graphql?n1");
    await until(() => seats.waiting() === 1);
    const senior = send("127.0.0.31", "/graphql?s2");
    await until(() => seats.waiting() === 2);
    // Other routes take no seat: /health answers while every seat is taken.
    const health = send("127.0.0.34", "/health");
    await release("/health");
    expect(await health).toEqual({ status: 200, body: "/health" });

    await release("/graphql?h1");
    await until(() => ran.length === 5);
    expect(ran.slice(3)).toEqual(["/health", "/graphql?s2"]);
    await release("/graphql?h2");
    await until(() => ran.length === 6);
    expect(ran[5]).toBe("/graphql?n1");
    for (const path of ["/graphql?s2", "/graphql?n1"]) await release(path);
    expect((await Promise.all([...heavy, newcomer, senior])).map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect([seats.running(), seats.waiting()]).toEqual([0, 0]);
  });

  it("takes a seat back when the answer is handed to the socket, not when a reader that stopped reading takes it", async () => {
    const { cap, ran, send, release, port } = await door({ runningPerGateway: 1, fairShare: { lightUses: 0 } });
    const stalled = connect({ host: "127.0.0.1", port, localAddress: "127.0.0.35" });
    stalled.on("error", () => {});
    stalled.write("GET /graphql?big HTTP/1.1\r\nHost: x\r\n\r\n");
    stalled.pause(); // never reads: 16 MiB stay in the kernel's and Node's buffers
    await until(() => ran.includes("/graphql?big"));
    const next = send("127.0.0.36", "/graphql?after");
    await until(() => ran.includes("/graphql?after"));
    await release("/graphql?after");
    expect((await next).status).toBe(200);
    expect(cap.seats!.waiting()).toBe(0);
    stalled.destroy();
  });

  it("answers 503 SERVICE_BUSY with Retry-After a request that waited its whole bound for a seat", async () => {
    const { cap, send, release } = await door({ runningPerGateway: 1, maxWaitMs: 200, fairShare: { lightUses: 0 } });
    const holder = send("127.0.0.37", "/graphql?hold");
    await until(() => cap.seats!.running() === 1);
    const waited = await send("127.0.0.38", "/graphql?late");
    expect(waited.status).toBe(503);
    expect(JSON.parse(waited.body).errors[0].extensions).toEqual({ code: "SERVICE_BUSY", retryAfterSeconds: 1 });
    expect(cap.seats!.waiting()).toBe(0);
    await release("/graphql?hold");
    expect((await holder).status).toBe(200);
    expect(cap.open("127.0.0.38")).toBe(0);
  });

  it("frees the seat of a request whose client left while it waited, and never runs it", async () => {
    const { cap, ran, send, release, port } = await door({ runningPerGateway: 1, fairShare: { lightUses: 0 } });
    const holder = send("127.0.0.39", "/graphql?hold2");
    await until(() => cap.seats!.running() === 1);
    await leaveWhileWaiting(cap, port, "127.0.0.40", "/graphql?gone");
    await release("/graphql?hold2");
    expect((await holder).status).toBe(200);
    expect(ran).not.toContain("/graphql?gone");
    expect(cap.seats!.running()).toBe(0);
  });

  it("counts no 503 for a request whose client left while it waited for a seat, once its bound has passed", async () => {
    const { cap, send, release, port, registry } = await door({ runningPerGateway: 1, maxWaitMs: 100, fairShare: { lightUses: 0 } });
    const holder = send("127.0.0.45", "/graphql?hold3");
    await until(() => cap.seats!.running() === 1);
    await leaveWhileWaiting(cap, port, "127.0.0.46", "/graphql?gone2");
    // Before: its bound still fired after it had gone, and counted a seat_wait refusal nobody was sent.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const refusals = (await registry.getSingleMetric("gateway_refusals_total")!.get()).values;
    expect(refusals.filter((v) => v.labels.reason === "seat_wait")).toEqual([]);
    await release("/graphql?hold3");
    expect((await holder).status).toBe(200);
  });
});

/**
 * The door as the gateway wires it (gateway/server.ts): core/http.ts's listener with the client's
 * turn at `limitInFlight` and the seat at `takeSeat` and `leaveSeat`, in front of Apollo Server, whose `held` field
 * answers when the test lets it go.
 */
async function gatewayDoor(settings: Partial<InFlightSettings>) {
  const { ApolloServer } = await import("@apollo/server");
  const cap = createInFlightCap({ maxPerClient: 8, runningPerClient: 2, trustProxyHops: 0, ...settings }, new Registry());
  const holds: (() => void)[] = [];
  const apollo = new ApolloServer({
    typeDefs: "type Query { a: Int, held: Int, big: String }",
    resolvers: { Query: { a: () => 1, held: () => new Promise<number>((resolve) => holds.push(() => resolve(2))), big: () => "x".repeat(16 * 1024 * 1024) } },
  });
  await apollo.start();
  const listener = createGraphQLRequestListener({
    server: apollo,
    context: async () => ({}),
    maxBodyBytes: 16_384,
    limitInFlight: cap.admit,
    takeSeat: cap.takeSeat,
    leaveSeat: cap.leaveSeat,
  });
  const running = await listen(listener, "127.0.0.1", 0);
  stops.push(async () => {
    await running.close(0);
    await apollo.stop();
  });
  const post = (address: string, path: string, query: string) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const body = JSON.stringify({ query });
      const req = request(
        {
          host: "127.0.0.1",
          port: running.port,
          path,
          method: "POST",
          localAddress: address,
          agent: false,
          headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
        },
        (res) => {
          let text = "";
          res.on("data", (chunk: Buffer) => {
            text += chunk.toString("utf8");
          });
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
        },
      );
      req.on("error", reject);
      req.end(body);
    });
  return { cap, seats: cap.seats!, holds, post, port: running.port };
}

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

describe("seats in the gateway's order (core/http.ts)", () => {
  it("gives no seat to a request whose body is still arriving: a client that sends its headers and trickles its body holds none", async () => {
    const { cap, seats, post, port } = await gatewayDoor({ runningPerGateway: 1, maxWaitMs: 1_000 });
    const slow = connect({ host: "127.0.0.1", port, localAddress: "127.0.0.41" });
    slow.on("error", () => {});
    slow.write('POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"query":');
    await until(() => cap.open("127.0.0.41") === 1);
    // Before: the slow client held the only seat until Node's request timeout (30 s); this one waited its bound and got 503.
    const honest = await post("127.0.0.42", "/graphql", "{ a }");
    expect(honest).toEqual({ status: 200, body: `${JSON.stringify({ data: { a: 1 } })}\n` });
    slow.destroy();
    await until(() => cap.open("127.0.0.41") === 0);
    expect([seats.running(), seats.waiting()]).toEqual([0, 0]);
  });

  it("takes back the seat of a pipelined answer built while the one before it still waits for a reader that stopped reading", async () => {
    const { seats, holds, post, port } = await gatewayDoor({ runningPerGateway: 1, maxWaitMs: 1_000 });
    const stalled = connect({ host: "127.0.0.1", port, localAddress: "127.0.0.47" });
    stalled.on("error", () => {});
    const postOf = (query: string) => {
      const body = JSON.stringify({ query });
      return `POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    };
    stalled.write(postOf("{ big }") + postOf("{ held }"));
    stalled.pause(); // never reads: the first answer's 16 MiB stay in the buffers, the second is queued behind them
    await until(() => holds.length === 1);
    holds[0]!();
    // Before: the second answer, ended but not yet handed to the socket (no `prefinish`), held the only seat until the connection closed.
    const honest = await post("127.0.0.48", "/graphql", "{ a }");
    expect(honest.status).toBe(200);
    expect([seats.running(), seats.waiting()]).toEqual([0, 0]);
    stalled.destroy();
  });

  it.each(["/./graphql", "/x/../graphql"])("seats a GraphQL request at %s, a path the router normalises to /graphql", async (path) => {
    const { seats, holds, post } = await gatewayDoor({ runningPerGateway: 1 });
    const holder = post("127.0.0.43", "/graphql", "{ held }");
    await until(() => holds.length === 1);
    let answered = false;
    const sneaky = post("127.0.0.44", path, "{ a }").finally(() => {
      answered = true;
    });
    // Before: it ran at once beside the holder, without a seat.
    await until(() => seats.waiting() === 1 || answered);
    expect([answered, seats.running(), seats.waiting()]).toEqual([false, 1, 1]);
    holds[0]!();
    expect((await holder).status).toBe(200);
    expect((await sneaky).status).toBe(200);
    expect([seats.running(), seats.waiting()]).toEqual([0, 0]);
  });
});
