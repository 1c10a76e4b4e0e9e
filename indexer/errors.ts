/**
 * The indexer's errors know what they are: every failure is turned into an IndexerError whose
 * class says whether trying again can help (`retryable`). The sync loop backs off and retries the
 * retryable ones (RPC hiccups, a dropped database connection, a lost race for the cursor) and stops
 * the network on the others (a reorg deeper than finality, a wrong chain id, a broken invariant).
 * Shaped after viem's BaseError: `shortMessage`, `details`, `cause`.
 */
import { BaseError as ViemBaseError, HttpRequestError, ResponseBodyTooLargeError, RpcRequestError, TimeoutError, WebSocketRequestError } from "viem";
import { isUnavailableError } from "../core/errors.ts";

export interface IndexerErrorOptions {
  details?: string;
  cause?: unknown;
  /** The network the error happened on (chain id), when known. */
  chainId?: number;
}

export abstract class IndexerError extends Error {
  abstract readonly retryable: boolean;
  /** Stable machine-readable kind (logs, events). */
  abstract readonly code: string;
  readonly shortMessage: string;
  readonly details: string | undefined;
  readonly chainId: number | undefined;

  constructor(shortMessage: string, options: IndexerErrorOptions = {}) {
    super([shortMessage, options.details ? `Details: ${options.details}` : ""].filter(Boolean).join("\n"), { cause: options.cause });
    this.shortMessage = shortMessage;
    this.details = options.details;
    this.chainId = options.chainId;
  }
}

// ------------------------------------------------------------------------------------- retryable

/** The RPC node could not be reached, timed out, rate-limited us or failed internally. */
export class RpcUnavailableError extends IndexerError {
  override name = "RpcUnavailableError";
  readonly retryable = true;
  readonly code = "RPC_UNAVAILABLE";
}

/** The database could not be reached, or a transaction lost a serialisation race. */
export class DatabaseUnavailableError extends IndexerError {
  override name = "DatabaseUnavailableError";
  readonly retryable = true;
  readonly code = "DATABASE_UNAVAILABLE";
}

/**
 * The cursor in the database is not where this indexer left it: another writer moved it, or a
 * commit succeeded although its acknowledgement was lost. Reload the cursor and go on.
 */
export class CursorConflictError extends IndexerError {
  override name = "CursorConflictError";
  readonly retryable = true;
  readonly code = "CURSOR_CONFLICT";
}

/** The node's answers do not fit together (a log of a block whose header says otherwise): the chain moved under us. */
export class ChainInconsistentError extends IndexerError {
  override name = "ChainInconsistentError";
  readonly retryable = true;
  readonly code = "CHAIN_INCONSISTENT";
}

// --------------------------------------------------------------------------------- not retryable

/** The common ancestor of a reorg lies below the finalized block: data served as final was wrong. */
export class ReorgTooDeepError extends IndexerError {
  override name = "ReorgTooDeepError";
  readonly retryable = false;
  readonly code = "REORG_TOO_DEEP";
}

/** The RPC endpoint serves another chain than the configuration says. */
export class ChainIdMismatchError extends IndexerError {
  override name = "ChainIdMismatchError";
  readonly retryable = false;
  readonly code = "CHAIN_ID_MISMATCH";
}

/** The configured contracts differ from those already indexed in the database for this chain. */
export class DeploymentChangedError extends IndexerError {
  override name = "DeploymentChangedError";
  readonly retryable = false;
  readonly code = "DEPLOYMENT_CHANGED";
}

/** The configuration (file, verification key, environment) is unusable. */
export class IndexerConfigError extends IndexerError {
  override name = "IndexerConfigError";
  readonly retryable = false;
  readonly code = "CONFIG_INVALID";
}

/** The RPC node refused a request as invalid (unsupported method, bad parameters, 4xx). */
export class RpcRequestRejectedError extends IndexerError {
  override name = "RpcRequestRejectedError";
  readonly retryable = false;
  readonly code = "RPC_REJECTED";
}

/** The node's answer is larger than the client accepts (10 MB): ask for less (a smaller getLogs range). */
export class RpcResponseTooLargeError extends IndexerError {
  override name = "RpcResponseTooLargeError";
  readonly retryable = false;
  readonly code = "RPC_RESPONSE_TOO_LARGE";
}

/** Something that cannot happen did (e.g. a settlement of a bet never placed): a bug or a wrong deploy block. */
export class IndexerInvariantError extends IndexerError {
  override name = "IndexerInvariantError";
  readonly retryable = false;
  readonly code = "INVARIANT";
}

/** Any other failure: not known to be transient, so the network stops rather than loop on it. */
export class UnexpectedIndexerError extends IndexerError {
  override name = "UnexpectedIndexerError";
  readonly retryable = false;
  readonly code = "UNEXPECTED";
}

// ------------------------------------------------------------------------------- classification

/** JSON-RPC error codes that mean "try again later" (EIP-1474 and common provider practice). */
const RETRYABLE_RPC_CODES = new Set([-32000, -32002, -32005, -32603, 429]);
const RETRYABLE_HTTP_STATUS = (status: number) => status === 408 || status === 425 || status === 429 || status >= 500;
/** PostgreSQL SQLSTATEs of transient conflicts: serialization failure, deadlock, lock timeout, admin shutdown. */
const RETRYABLE_SQLSTATE = new Set(["40001", "40P01", "55P03", "57P01", "57P02", "57P03", "53300"]);
/** Prisma codes of transient transaction failures (write conflict, transaction expired/closed). */
const RETRYABLE_PRISMA = new Set(["P2034", "P2028", "P1001", "P1002", "P1008", "P1017"]);

function causeChain(error: unknown): unknown[] {
  const chain: unknown[] = [];
  let current: unknown = error;
  while (current && typeof current === "object" && chain.length < 10 && !chain.includes(current)) {
    chain.push(current);
    current = (current as { cause?: unknown }).cause;
  }
  return chain;
}

function stringProp(value: unknown, key: string): string | undefined {
  const v = value && typeof value === "object" ? (value as Record<string, unknown>)[key] : undefined;
  return typeof v === "string" ? v : undefined;
}

/** Turns anything thrown into an IndexerError (an IndexerError is returned as is). */
export function toIndexerError(error: unknown, chainId?: number): IndexerError {
  if (error instanceof IndexerError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const details = error instanceof ViemBaseError ? error.shortMessage : message.split("\n")[0];
  const options = { cause: error, details, chainId };

  for (const e of causeChain(error)) {
    if (e instanceof ResponseBodyTooLargeError) return new RpcResponseTooLargeError("RPC response too large", options);
    if (e instanceof TimeoutError || e instanceof WebSocketRequestError) return new RpcUnavailableError("RPC request failed", options);
    if (e instanceof HttpRequestError) {
      const status = e.status;
      if (status === undefined || RETRYABLE_HTTP_STATUS(status)) return new RpcUnavailableError("RPC request failed", options);
      return new RpcRequestRejectedError(`RPC request rejected (HTTP ${status})`, options);
    }
    if (e instanceof RpcRequestError) {
      if (RETRYABLE_RPC_CODES.has(e.code)) return new RpcUnavailableError("RPC node error", options);
      return new RpcRequestRejectedError(`RPC request rejected (code ${e.code})`, options);
    }
    const code = stringProp(e, "code");
    if (code && (RETRYABLE_SQLSTATE.has(code) || RETRYABLE_PRISMA.has(code))) {
      return new DatabaseUnavailableError("database transaction failed transiently", options);
    }
  }
  if (error instanceof ViemBaseError && /socket|closed|timed? ?out|fetch failed|ECONN/i.test(message)) {
    return new RpcUnavailableError("RPC request failed", options);
  }
  if (isUnavailableError(error)) return new DatabaseUnavailableError("database unavailable", options);
  return new UnexpectedIndexerError("unexpected indexer failure", options);
}

export function isRetryable(error: unknown): boolean {
  return toIndexerError(error).retryable;
}

// ------------------------------------------------------------------------------------- backoff

export interface BackoffOptions {
  /** First delay. Default 250 ms. */
  baseDelayMs?: number;
  /** Cap. Default 30 s. */
  maxDelayMs?: number;
}

/** Exponential backoff with full jitter: attempt 1 → up to base, doubling, capped. */
export function backoffDelay(attempt: number, options: BackoffOptions = {}, random: () => number = Math.random): number {
  const base = options.baseDelayMs ?? 250;
  const max = options.maxDelayMs ?? 30_000;
  const ceiling = Math.min(max, base * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/** Resolves after `ms`, or at once when the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

export interface RetryOptions extends BackoffOptions {
  /** Attempts in all (first try included). Default 5. */
  attempts?: number;
  signal?: AbortSignal;
  chainId?: number;
  onRetry?: (error: IndexerError, attempt: number, delayMs: number) => void;
}

/**
 * Runs `fn`, retrying retryable failures with backoff. Throws the classified IndexerError when a
 * failure is not retryable, when the attempts are spent, or when the signal aborts.
 */
export async function withRetry<T>(fn: (attempt: number) => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const attempts = options.attempts ?? 5;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (raw) {
      const error = toIndexerError(raw, options.chainId);
      if (!error.retryable || attempt >= attempts || options.signal?.aborted) throw error;
      const delay = backoffDelay(attempt, options);
      options.onRetry?.(error, attempt, delay);
      await sleep(delay, options.signal);
      if (options.signal?.aborted) throw error;
    }
  }
}
