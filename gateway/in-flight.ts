import type { IncomingMessage, ServerResponse } from "node:http";
import { Counter, Gauge, type Registry } from "prom-client";
import { clientAddress } from "../core/client-address.ts";
import { ErrorCode } from "../core/errors.ts";
import { sendJson } from "../core/http.ts";

// The per-client cap on requests in flight (docs/reference/limits.md#requests-in-flight). The points
// budget prices work, but a gateway that answers fewer requests a second than one address's budget
// allows lets that address keep hundreds queued in front of everyone else. So each client address
// (the points budget's rule: core/client-address.ts) may have at most `maxPerClient` requests open
// in this process; the next is refused at the door, before any GraphQL work or any charge. A slot is
// held from the door until the answer's `close` (finished, aborted or cut off), released exactly
// once. A refusal says the client's points budget in RateLimit-* headers, as every other answer
// does, but from what this process last saw of it (gateway/points-budget.ts knownHeaders), never
// from the store: under a flood, asking Redis once per refused request would load the limiter's
// Redis with the very requests that are refused. The refusal is answered at once, synchronously.
//
// Turns: of a client's open requests, at most `runningPerClient` run at once; the rest wait at the
// door, in order, for one of that client's own to end. One event loop serves every client, so an
// address spending its whole budget in half a second with 8 requests running delays every other
// client's request behind 8 of its own; with turns, behind at most `runningPerClient`. A waiting
// request has done no work and paid nothing; it waits only on its own client's requests, so it can
// never be starved by another client. Its wait is bounded (`maxWaitMs`): past it, it is answered 429
// like a request over the cap, never left open until Node's request timeout (a body over 16 KiB is not
// read while it waits, and would be answered 408) or nginx's proxy_read_timeout (which would send a
// GET to another gateway to run twice).
//
// Computing at once (`maxRunning`, per process, across clients): a crowd of addresses, each within
// its own turns and budget, can still put more work on the one event loop (and behind it on the
// subgraphs and the database) than the machine does in time, and then every request waits behind
// all of it. So at most `maxRunning` requests compute at once; a request holds this slot from its
// turn until its answer starts (its head is written: the work is done, what is left is sending) or
// ends. When one frees, the waiting request whose client has the fewest computing goes first (then
// the oldest; a request sending its answer is not counted): a client that sends one request at a time
// is served before a crowd that keeps two each computing, and a slow reader or a long CSV stream holds
// no slot.

/** What a refused request is told to wait: slots free as soon as an answer ends. */
export const IN_FLIGHT_RETRY_AFTER_SECONDS = 1;

/** How long a request waits for its turn by default: well inside core/http.ts's request timeout (30 s) and nginx's 35 s. */
export const TURN_WAIT_LIMIT_MS = 20_000;

export interface InFlightSettings {
  /** Requests one client address may have open in this gateway process (RATE_LIMIT_MAX_IN_FLIGHT). */
  maxPerClient: number;
  /** Of those, how many run at once; the rest wait their turn (RATE_LIMIT_RUNNING_PER_CLIENT; absent or 0: all run). */
  runningPerClient?: number;
  /** Requests this process computes at once, across clients (RATE_LIMIT_MAX_RUNNING; absent or 0: no bound). */
  maxRunning?: number;
  /** Longest wait for a turn before the request is answered 429 (default TURN_WAIT_LIMIT_MS). */
  maxWaitMs?: number;
  trustProxyHops: number;
}

/** The client's points budget as RateLimit-* headers, as last seen, without asking its store (gateway/points-budget.ts `knownHeaders`). */
export type BudgetHeaders = (req: IncomingMessage) => [string, string][] | undefined;

export interface InFlightCap {
  /** core/http.ts's `limitInFlight`: false when it answered 429 (decided at once) or the client left before its turn. */
  admit(req: IncomingMessage, res: ServerResponse): boolean | Promise<boolean>;
  /** Requests open per client address now, running or waiting their turn (for tests and diagnostics). */
  open(address: string): number;
  /** Requests waiting their turn per client address now. */
  waiting(address: string): number;
}

/** One client address's requests in this process. */
interface ClientTurns {
  open: number;
  /** Past the door, until their answers end. */
  running: number;
  /** Of those, still computing (their answers not started). */
  computing: number;
  /** Waiting their turn, oldest first (one answered while waiting is `gone` until its close takes it out). */
  queue: Waiter[];
}

/** A request waiting its turn: `run` resolves the door's answer; `gone`, its connection died. */
interface Waiter {
  client: ClientTurns;
  /** Arrival order at the door, across clients. */
  seq: number;
  run: (run: boolean) => void;
  gone: () => boolean;
}

/**
 * Calls `ended` once, when the request's answer ends: its `close` (finished, aborted or cut off),
 * or its connection's, whichever comes first. A pipelined request queued behind another on the same
 * connection gets no `close` of its own when the connection dies (Node destroys the request, not
 * its response), so the connection's close frees it; the connection's listener is removed once the
 * answer ends, so none pile up on a keep-alive connection.
 */
function whenEnded(req: IncomingMessage, res: ServerResponse, ended: () => void): void {
  const socket = req.socket;
  let done = false;
  const settle = () => {
    if (done) return;
    done = true;
    res.off("close", settle);
    socket.off("close", settle);
    ended();
  };
  res.once("close", settle);
  socket.once("close", settle);
}

export function createInFlightCap(settings: InFlightSettings, registry: Registry, budgetHeaders?: BudgetHeaders): InFlightCap {
  const clients = new Map<string, ClientTurns>();
  const runningPerClient = settings.runningPerClient || settings.maxPerClient;
  const maxWaitMs = settings.maxWaitMs ?? TURN_WAIT_LIMIT_MS;
  const maxRunning = settings.maxRunning || Number.POSITIVE_INFINITY;
  /** Requests computing now (between their turn and the start of their answer), across clients. */
  let computing = 0;
  let arrivals = 0;
  /** Clients with a request waiting: where the next turn is looked for. */
  const waitingClients = new Set<ClientTurns>();
  const refusals = new Counter({
    name: "gateway_refusals_total",
    help: "Requests the gateway refused at the door, by reason (in_flight: the client address's cap on open requests; turn_wait: waited RATE_LIMIT_RUNNING_PER_CLIENT's turn past its bound)",
    labelNames: ["reason"] as const,
    registers: [registry],
  });
  const waitingNow = new Gauge({
    name: "gateway_requests_waiting_turn",
    help: "Requests open at the door waiting for one of their own client's to end (RATE_LIMIT_RUNNING_PER_CLIENT)",
    registers: [registry],
  });
  const turnsWaited = new Counter({
    name: "gateway_requests_waited_turn_total",
    help: "Requests that waited at the door for one of their own client's to end before running",
    registers: [registry],
  });
  const refuse = (req: IncomingMessage, res: ServerResponse, waited = false): false => {
    refusals.inc({ reason: waited ? "turn_wait" : "in_flight" });
    const headers = budgetHeaders?.(req) ?? [];
    const why = waited
      ? `waited ${maxWaitMs / 1000} s for a turn behind this address's own requests (${runningPerClient} run at once)`
      : `too many requests in flight from this address (${settings.maxPerClient})`;
    sendJson(
      res,
      429,
      {
        errors: [
          {
            message: `Rate limited: ${why}; retry after ${IN_FLIGHT_RETRY_AFTER_SECONDS} s`,
            extensions: { code: ErrorCode.RateLimited, retryAfterSeconds: IN_FLIGHT_RETRY_AFTER_SECONDS, maxInFlight: settings.maxPerClient },
          },
        ],
      },
      { ...Object.fromEntries(headers), "retry-after": String(IN_FLIGHT_RETRY_AFTER_SECONDS) },
    );
    return false;
  };
  /** Starts a request's turn: it runs, and computes until its answer starts or ends (`computed`). */
  const start = (client: ClientTurns, res: ServerResponse): (() => void) => {
    client.running++;
    client.computing++;
    computing++;
    let held = true;
    const computed = () => {
      if (!held) return;
      held = false;
      client.computing--;
      computing--;
      giveTurns();
    };
    if (Number.isFinite(maxRunning)) {
      // Node writes every answer's head through writeHead (res.write and res.end call it when not yet written).
      const writeHead = res.writeHead;
      res.writeHead = ((...args: unknown[]) => {
        res.writeHead = writeHead;
        computed();
        return Reflect.apply(writeHead, res, args);
      }) as ServerResponse["writeHead"];
    }
    return computed;
  };
  /** While a slot is free, gives the next turn: the waiting request whose client computes fewest, then the oldest. */
  const giveTurns = () => {
    while (computing < maxRunning) {
      let best: Waiter | undefined;
      for (const client of waitingClients) {
        if (client.running >= runningPerClient) continue;
        // Not to a request whose connection already died (pipelined behind one that ended): its own
        // close, about to run, takes it out of the queue unserved.
        const head = client.queue.find((waiter) => !waiter.gone());
        if (head && (!best || client.computing < best.client.computing || (client.computing === best.client.computing && head.seq < best.seq))) best = head;
      }
      if (!best) return;
      const queue = best.client.queue;
      queue.splice(queue.indexOf(best), 1);
      if (queue.length === 0) waitingClients.delete(best.client);
      waitingNow.dec();
      turnsWaited.inc();
      best.run(true);
    }
  };
  return {
    admit(req, res) {
      // A client gone before its door (its `close` already emitted, never again): nothing to hold or serve.
      if (res.closed) return false;
      const address = clientAddress(req, settings.trustProxyHops);
      const client = clients.get(address) ?? { open: 0, running: 0, computing: 0, queue: [] };
      if (client.open >= settings.maxPerClient) return refuse(req, res);
      client.open++;
      clients.set(address, client);
      // No one else can be waiting for a free slot: every end gives out the free ones at once.
      let running = client.running < runningPerClient && computing < maxRunning;
      let computed = () => {};
      const waiter: Waiter = {
        client,
        seq: arrivals++,
        run: () => {},
        gone: () => req.socket.destroyed || res.closed || res.writableEnded,
      };
      whenEnded(req, res, () => {
        client.open--;
        if (running) {
          client.running--;
          computed(); // ended before its head was written (or gives nothing: already counted off)
        } else {
          // Left before its turn: out of the queue, and core/http.ts answers nothing.
          const at = client.queue.indexOf(waiter);
          if (at >= 0) client.queue.splice(at, 1);
          if (client.queue.length === 0) waitingClients.delete(client);
          waitingNow.dec();
          waiter.run(false);
        }
        if (client.open === 0) clients.delete(address); // no entry per idle address: memory follows the open requests
        if (running) giveTurns(); // its client's turn is free even when its slot was already given back
      });
      if (running) {
        computed = start(client, res);
        return true;
      }
      waitingNow.inc();
      return new Promise<boolean>((resolve) => {
        const bound = setTimeout(() => {
          // Out of the queue and answered: its `close` then frees its place as a request that left.
          refuse(req, res, true);
        }, maxWaitMs);
        bound.unref();
        waiter.run = (run) => {
          clearTimeout(bound);
          running = run;
          if (run) computed = start(client, res);
          resolve(run);
        };
        client.queue.push(waiter);
        waitingClients.add(client);
      });
    },
    open: (address) => clients.get(address)?.open ?? 0,
    waiting: (address) => clients.get(address)?.queue.length ?? 0,
  };
}
