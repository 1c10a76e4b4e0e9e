import type { IncomingMessage, ServerResponse } from "node:http";
import { Counter, type Registry } from "prom-client";
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

/** What a refused request is told to wait: slots free as soon as an answer ends. */
export const IN_FLIGHT_RETRY_AFTER_SECONDS = 1;

export interface InFlightSettings {
  /** Requests one client address may have open in this gateway process (RATE_LIMIT_MAX_IN_FLIGHT). */
  maxPerClient: number;
  trustProxyHops: number;
}

/** The client's points budget as RateLimit-* headers, as last seen, without asking its store (gateway/points-budget.ts `knownHeaders`). */
export type BudgetHeaders = (req: IncomingMessage) => [string, string][] | undefined;

export interface InFlightCap {
  /** core/http.ts's `limitInFlight`: false when it answered 429 (decided and answered at once). */
  admit(req: IncomingMessage, res: ServerResponse): boolean;
  /** Requests open per client address now (for tests and diagnostics). */
  open(address: string): number;
}

export function createInFlightCap(settings: InFlightSettings, registry: Registry, budgetHeaders?: BudgetHeaders): InFlightCap {
  const open = new Map<string, number>();
  const refusals = new Counter({
    name: "gateway_refusals_total",
    help: "Requests the gateway refused at the door, by reason (in_flight: the client address's cap on open requests)",
    labelNames: ["reason"] as const,
    registers: [registry],
  });
  const release = (address: string) => {
    const left = (open.get(address) ?? 1) - 1;
    if (left > 0) open.set(address, left);
    else open.delete(address); // no entry per idle address: memory follows the open requests
  };
  const refuse = (req: IncomingMessage, res: ServerResponse): false => {
    refusals.inc({ reason: "in_flight" });
    const headers = budgetHeaders?.(req) ?? [];
    sendJson(
      res,
      429,
      {
        errors: [
          {
            message: `Rate limited: too many requests in flight from this address (${settings.maxPerClient}); retry after ${IN_FLIGHT_RETRY_AFTER_SECONDS} s`,
            extensions: { code: ErrorCode.RateLimited, retryAfterSeconds: IN_FLIGHT_RETRY_AFTER_SECONDS, maxInFlight: settings.maxPerClient },
          },
        ],
      },
      { ...Object.fromEntries(headers), "retry-after": String(IN_FLIGHT_RETRY_AFTER_SECONDS) },
    );
    return false;
  };
  return {
    admit(req, res) {
      // A client gone before its door (its `close` already emitted, never again): nothing to hold or serve.
      if (res.closed) return false;
      const address = clientAddress(req, settings.trustProxyHops);
      const held = open.get(address) ?? 0;
      if (held >= settings.maxPerClient) return refuse(req, res);
      open.set(address, held + 1);
      // `close` is emitted once per response, whether it finished or its connection ended first.
      res.once("close", () => release(address));
      return true;
    },
    open: (address) => open.get(address) ?? 0,
  };
}
