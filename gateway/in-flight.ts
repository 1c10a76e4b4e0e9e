import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { Counter, Gauge, type Registry } from "prom-client";
import { clientAddress } from "../core/client-address.ts";
import { ErrorCode } from "../core/errors.ts";
import { sendJson } from "../core/http.ts";
import { createFairShare, type FairShare, type FairShareSettings } from "./fair-share.ts";

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
// Seats: past its client's turn, a GraphQL request also needs one of the process's seats
// (gateway/fair-share.ts): at most `runningPerGateway` run at once, the least-used client first when
// they are all taken. core/http.ts takes it (`takeSeat`) once the request is routed to GraphQL and
// its whole body has arrived, so a client trickling its body holds only its own turn, never one of
// the process's seats, and a path the router normalises to the GraphQL one (`/./graphql`) takes one
// like `/graphql`. A seat is held while the answer is built, until it is ended (core/http.ts's
// `leaveSeat`) or handed to the socket (`prefinish`), whichever comes first: neither while a slow
// reader takes it nor while it waits behind a pipelined answer such a reader has not taken. Other
// routes (`/health` above all, and CSV exports, which have their own lane) take no seat.

/** What a refused request is told to wait: slots free as soon as an answer ends. */
export const IN_FLIGHT_RETRY_AFTER_SECONDS = 1;

/** How long a request waits for its turn by default: well inside core/http.ts's request timeout (30 s) and nginx's 35 s. */
export const TURN_WAIT_LIMIT_MS = 20_000;

export interface InFlightSettings {
  /** Requests one client address may have open in this gateway process (RATE_LIMIT_MAX_IN_FLIGHT). */
  maxPerClient: number;
  /** Of those, how many run at once; the rest wait their turn (RATE_LIMIT_RUNNING_PER_CLIENT; absent or 0: all run). */
  runningPerClient?: number;
  /** Longest wait for a turn before the request is answered 429 (default TURN_WAIT_LIMIT_MS). */
  maxWaitMs?: number;
  trustProxyHops: number;
  /** GraphQL requests running at once in the process, all clients together (RATE_LIMIT_RUNNING_PER_GATEWAY; absent or 0: no bound). */
  runningPerGateway?: number;
  /** The fair share's other settings (tests). */
  fairShare?: Omit<FairShareSettings, "maxRunning">;
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
  /** core/http.ts's `takeSeat`, for a GraphQL request whose body has arrived: false when it answered 503 or the client left while it waited. */
  takeSeat(req: IncomingMessage, res: ServerResponse): boolean | Promise<boolean>;
  /** core/http.ts's `leaveSeat`: the request's answer has ended, its seat (if any) goes back. */
  leaveSeat(res: ServerResponse): void;
  /** The process's seats, when bounded. */
  seats?: FairShare;
}

/** One client address's requests in this process. */
interface ClientTurns {
  open: number;
  running: number;
  /** Waiting their turn, oldest first (one answered while waiting is `gone` until its close takes it out). */
  queue: Waiter[];
}

/** A request waiting its turn: `run` resolves the door's answer; `gone`, its connection died. */
interface Waiter {
  run: (run: boolean) => void;
  gone: () => boolean;
}

/** Per connection, what to call when it closes: one `close` listener per connection, however many requests it pipelines. */
const connectionEnds = new WeakMap<Socket, Set<() => void>>();

/** Calls `ended` when `socket` closes; the returned function forgets it. */
function onConnectionEnd(socket: Socket, ended: () => void): () => void {
  const ends = connectionEnds.get(socket) ?? new Set<() => void>();
  if (!connectionEnds.has(socket)) {
    connectionEnds.set(socket, ends);
    socket.once("close", () => {
      connectionEnds.delete(socket);
      for (const end of ends) end();
    });
  }
  ends.add(ended);
  return () => ends.delete(ended);
}

/**
 * Calls `ended` once, when the request's answer ends: its `close` (finished, aborted or cut off),
 * or its connection's, whichever comes first. A pipelined request queued behind another on the same
 * connection gets no `close` of its own when the connection dies (Node destroys the request, not
 * its response), so the connection's close frees it. The connection has one listener for all its
 * requests (eight pipelined ones would pass Node's leak warning of 10 listeners); each request's
 * entry is removed once its answer ends, so none pile up on a keep-alive connection.
 */
function whenEnded(req: IncomingMessage, res: ServerResponse, ended: () => void): void {
  let done = false;
  const settle = () => {
    if (done) return;
    done = true;
    res.off("close", settle);
    forget();
    ended();
  };
  const forget = onConnectionEnd(req.socket, settle);
  res.once("close", settle);
}

export function createInFlightCap(settings: InFlightSettings, registry: Registry, budgetHeaders?: BudgetHeaders): InFlightCap {
  const clients = new Map<string, ClientTurns>();
  const runningPerClient = settings.runningPerClient || settings.maxPerClient;
  const maxWaitMs = settings.maxWaitMs ?? TURN_WAIT_LIMIT_MS;
  const refusals = new Counter({
    name: "gateway_refusals_total",
    help: "Requests the gateway refused at the door, by reason (in_flight: the client address's cap on open requests; turn_wait: waited RATE_LIMIT_RUNNING_PER_CLIENT's turn past its bound; seat_wait: waited for one of RATE_LIMIT_RUNNING_PER_GATEWAY's seats past the same bound)",
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
  const seats = settings.runningPerGateway ? createFairShare({ maxRunning: settings.runningPerGateway, ...settings.fairShare }) : undefined;
  new Gauge({
    name: "gateway_requests_waiting_seat",
    help: "GraphQL requests past their client's turn waiting for one of the process's seats (RATE_LIMIT_RUNNING_PER_GATEWAY)",
    registers: [registry],
    collect() {
      this.set(seats?.waiting() ?? 0);
    },
  });
  type Refusal = "in_flight" | "turn_wait" | "seat_wait";
  const refuse = (req: IncomingMessage, res: ServerResponse, reason: Refusal): false => {
    refusals.inc({ reason });
    const headers = budgetHeaders?.(req) ?? [];
    const why = {
      in_flight: `Rate limited: too many requests in flight from this address (${settings.maxPerClient})`,
      turn_wait: `Rate limited: waited ${maxWaitMs / 1000} s for a turn behind this address's own requests (${runningPerClient} run at once)`,
      seat_wait: `The gateway is busy: waited ${maxWaitMs / 1000} s for one of its ${settings.runningPerGateway} seats, which go to the clients that used the fewest lately`,
    }[reason];
    const busy = reason === "seat_wait";
    sendJson(
      res,
      busy ? 503 : 429,
      {
        errors: [
          {
            message: `${why}; retry after ${IN_FLIGHT_RETRY_AFTER_SECONDS} s`,
            extensions: busy
              ? { code: ErrorCode.ServiceBusy, retryAfterSeconds: IN_FLIGHT_RETRY_AFTER_SECONDS }
              : { code: ErrorCode.RateLimited, retryAfterSeconds: IN_FLIGHT_RETRY_AFTER_SECONDS, maxInFlight: settings.maxPerClient },
          },
        ],
      },
      { ...Object.fromEntries(headers), "retry-after": String(IN_FLIGHT_RETRY_AFTER_SECONDS) },
    );
    return false;
  };
  /**
   * A GraphQL request past its client's turn, with its body, takes a seat: at once, or when the fair
   * share gives it one, bounded by `maxWaitMs`. The seat goes back when the answer is handed to the
   * socket or the request ends, whichever comes first.
   */
  const seatOf = new WeakMap<ServerResponse, () => void>();
  const takeSeat = (req: IncomingMessage, res: ServerResponse): boolean | Promise<boolean> => {
    if (!seats) return true;
    // Gone while its body arrived: its `close` has been emitted (or is about to be, once), and would never free a seat.
    if (res.closed || req.socket.destroyed) return false;
    const seat = seats.seat(clientAddress(req, settings.trustProxyHops));
    seatOf.set(res, seat.leave);
    res.once("prefinish", seat.leave);
    const ready = seat.ready;
    if (!ready) {
      whenEnded(req, res, seat.leave);
      return true;
    }
    return new Promise<boolean>((resolve) => {
      const bound = setTimeout(() => {
        seat.leave();
        resolve(refuse(req, res, "seat_wait"));
      }, maxWaitMs);
      bound.unref();
      // Gone while it waited (or once seated): out of the queue, its bound with it, and nothing answered.
      whenEnded(req, res, () => {
        clearTimeout(bound);
        seat.leave();
        resolve(false);
      });
      void ready.then(() => {
        clearTimeout(bound);
        // Its client may have gone while it waited: the seat it just took goes straight back.
        if (res.closed || req.socket.destroyed) {
          seat.leave();
          resolve(false);
        } else resolve(true);
      });
    });
  };
  /** A running request ended: the client's next waiting one runs. */
  const nextTurn = (client: ClientTurns) => {
    // Not to a request whose connection already died (pipelined behind the one that ended): its
    // own close, about to run, takes it out of the queue unserved.
    const at = client.queue.findIndex((waiter) => !waiter.gone());
    if (at < 0) return;
    const [next] = client.queue.splice(at, 1);
    waitingNow.dec();
    turnsWaited.inc();
    client.running++;
    next?.run(true);
  };
  return {
    admit(req, res) {
      // A client gone before its door (its `close` already emitted, never again): nothing to hold or serve.
      if (res.closed) return false;
      const address = clientAddress(req, settings.trustProxyHops);
      const client = clients.get(address) ?? { open: 0, running: 0, queue: [] };
      if (client.open >= settings.maxPerClient) return refuse(req, res, "in_flight");
      client.open++;
      clients.set(address, client);
      let running = client.running < runningPerClient;
      const waiter: Waiter = { run: () => {}, gone: () => req.socket.destroyed || res.closed || res.writableEnded };
      whenEnded(req, res, () => {
        client.open--;
        if (running) client.running--;
        else {
          // Left before its turn: out of the queue, and core/http.ts answers nothing.
          const at = client.queue.indexOf(waiter);
          if (at >= 0) client.queue.splice(at, 1);
          waitingNow.dec();
          waiter.run(false);
        }
        if (client.open === 0)
          clients.delete(address); // no entry per idle address: memory follows the open requests
        else if (running) nextTurn(client);
      });
      if (running) {
        client.running++;
        return true;
      }
      waitingNow.inc();
      return new Promise<boolean>((resolve) => {
        const bound = setTimeout(() => {
          // Out of the queue and answered: its `close` then frees its place as a request that left.
          refuse(req, res, "turn_wait");
        }, maxWaitMs);
        bound.unref();
        waiter.run = (run) => {
          clearTimeout(bound);
          running = run;
          resolve(run);
        };
        client.queue.push(waiter);
      });
    },
    open: (address) => clients.get(address)?.open ?? 0,
    waiting: (address) => clients.get(address)?.queue.length ?? 0,
    takeSeat,
    leaveSeat: (res) => seatOf.get(res)?.(),
    seats,
  };
}
