import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";

// The request id of the HTTP request being served, visible to everything it awaits: log lines
// carry it (core/logger.ts), and the gateway forwards it to subgraphs, so one id follows a
// request from the gateway through every subgraph it reaches.

const scope = new AsyncLocalStorage<{ requestId: string }>();
const VALID_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** The caller's `X-Request-Id` when it is a sane token, else a fresh one. */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers["x-request-id"];
  return typeof given === "string" && VALID_ID.test(given) ? given : randomUUID();
}

export function runInRequestScope<T>(requestId: string, work: () => T): T {
  return scope.run({ requestId }, work);
}

export function currentRequestId(): string | undefined {
  return scope.getStore()?.requestId;
}
