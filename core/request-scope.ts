import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";

// The request id of the HTTP request being served, visible to everything it awaits: log lines
// carry it (core/logger.ts), and the gateway forwards it to subgraphs, so one id follows a
// request from the gateway through every subgraph it reaches.
//
// The same scope holds the request's read pin at the gateway: a token the gateway sends with every
// subgraph call of one incoming request (READ_PIN_HEADER), so that every subgraph reads that
// request from one database server (core/read-replicas.ts). The gateway chooses no server: it only
// says which subgraph calls belong together.

interface RequestScope {
  requestId: string;
  /** The client's address as the gateway's trusted-proxy rule names it (gateway/rate-limit.ts clientAddress). */
  clientAddress?: string;
  /** The read pin of this request, fixed at its first subgraph call (gateway/subgraph-source.ts). */
  readPin?: string;
  /** The operation's `minBlock` per chain, sent with every subgraph call (core/min-block.ts, gateway/read-at.ts). */
  minBlocks?: ReadonlyMap<bigint, bigint>;
  /** The lowest indexed head per chain the subgraph calls of this request were read at (gateway/read-at.ts). */
  readAt?: Map<bigint, { block: bigint; hash: string }>;
  /** The answer the gateway rendered from a subgraph's own bytes: its text and those bytes (gateway/forwarded-data.ts). */
  renderedAnswer?: { text: string; bytes: Buffer };
}

const scope = new AsyncLocalStorage<RequestScope>();
const VALID_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** The header carrying a gateway request's read pin to the subgraphs. */
export const READ_PIN_HEADER = "x-read-pin";

/**
 * The header a subgraph answers with ("1") when it reads by pin (it has read replicas). A subgraph
 * without it reads every request from one server, so the gateway may let requests with different
 * pins share one identical call in flight.
 */
export const READ_PINS_HONOURED_HEADER = "x-read-pins-honoured";

/** The caller's `X-Request-Id` when it is a sane token, else a fresh one. */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers["x-request-id"];
  return typeof given === "string" && VALID_ID.test(given) ? given : randomUUID();
}

/** The read pin a subgraph request carries, when it is a sane token; undefined: not pinned. */
export function readPinOf(req: Pick<IncomingMessage, "headers">): string | undefined {
  const given = req.headers[READ_PIN_HEADER];
  return typeof given === "string" && VALID_ID.test(given) ? given : undefined;
}

export function runInRequestScope<T>(requestId: string, work: () => T, clientAddress?: string): T {
  return scope.run(clientAddress === undefined ? { requestId } : { requestId, clientAddress }, work);
}

/**
 * The header carrying the client's address from the gateway to the subgraphs, set by the gateway
 * from its own trusted-proxy rule (TRUST_PROXY_HOPS) and never copied from a client's request: a
 * gateway sends subgraphs no header of the client's. A subgraph takes it as the client's identity
 * for its per-client shares (subgraphs/kit/expensive-lane.ts); subgraphs are reachable only by the
 * gateways (docs/guides/operating.md), so whoever sets it is a gateway.
 */
export const CLIENT_ADDRESS_HEADER = "x-client-address";

/** A subgraph request's client, as its gateway named it; calls without one (no gateway in front) share one identity. */
export function clientAddressOf(req: Pick<IncomingMessage, "headers">): string {
  const given = req.headers[CLIENT_ADDRESS_HEADER];
  return typeof given === "string" && given.length > 0 && given.length <= 64 ? given : "unknown";
}

export function currentRequestId(): string | undefined {
  return scope.getStore()?.requestId;
}

/** The scope of the request being served (mutable: the gateway fixes its read pin in it), if any. */
export function currentRequestScope(): RequestScope | undefined {
  return scope.getStore();
}
