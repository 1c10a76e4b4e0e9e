import { GraphQLError, type GraphQLFormattedError } from "graphql";
import { unwrapResolverError } from "@apollo/server/errors";
import type { Logger } from "./logger.ts";

/** Every `extensions.code` of the public error table (docs/reference/errors.md). */
export const ErrorCode = {
  BadUserInput: "BAD_USER_INPUT",
  ParseFailed: "GRAPHQL_PARSE_FAILED",
  ValidationFailed: "GRAPHQL_VALIDATION_FAILED",
  QueryTooComplex: "QUERY_TOO_COMPLEX",
  RateLimited: "RATE_LIMITED",
  PersistedQueryNotFound: "PERSISTED_QUERY_NOT_FOUND",
  ServiceUnavailable: "SERVICE_UNAVAILABLE",
  ServiceBusy: "SERVICE_BUSY",
  QueryTimeout: "QUERY_TIMEOUT",
  NotYetIndexed: "NOT_YET_INDEXED",
  Internal: "INTERNAL_SERVER_ERROR",
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

const PUBLIC_CODES = new Set<string>([...Object.values(ErrorCode), "BAD_REQUEST", "OPERATION_RESOLUTION_FAILURE", "PERSISTED_QUERY_NOT_SUPPORTED"]);

/** Malformed client input. `argumentName` names the offending argument when known. */
export class InputError extends GraphQLError {
  constructor(message: string, options: { argumentName?: string } = {}) {
    super(message, {
      extensions: { code: ErrorCode.BadUserInput, ...(options.argumentName ? { argumentName: options.argumentName } : {}) },
    });
    this.name = "InputError";
  }
}

/** A dependency (database, subgraph) cannot answer: retryable, and says nothing of internals. */
export class ServiceUnavailableError extends GraphQLError {
  constructor(message = "Service temporarily unavailable", extensions: Record<string, unknown> = {}) {
    super(message, { extensions: { code: ErrorCode.ServiceUnavailable, ...extensions } });
    this.name = "ServiceUnavailableError";
  }
}

/**
 * A query's `minBlock` is above what every database has indexed on that chain (core/min-block.ts):
 * refused rather than answered from older data. Says the newest indexed block and when to ask again.
 */
export class NotYetIndexedError extends GraphQLError {
  constructor(detail: { chainId: bigint; minBlock: bigint; indexedBlock: bigint; retryAfterSeconds: number }) {
    super(`Block ${detail.minBlock} of chain ${detail.chainId} is not indexed yet (indexed up to ${detail.indexedBlock}): retry later`, {
      extensions: {
        code: ErrorCode.NotYetIndexed,
        chainId: Number(detail.chainId),
        minBlock: detail.minBlock.toString(),
        indexedBlock: detail.indexedBlock.toString(),
        retryAfterSeconds: detail.retryAfterSeconds,
        // Refused before execution: an ordinary GraphQL answer (a gateway passes its errors on), not a server failure.
        http: { status: 200 },
      },
    });
    this.name = "NotYetIndexedError";
  }
}

function causes(error: unknown): unknown[] {
  const chain: unknown[] = [];
  let current: unknown = error;
  while (current && chain.length < 8 && !chain.includes(current)) {
    chain.push(current);
    current = (current as { originalError?: unknown; cause?: unknown }).originalError ?? (current as { cause?: unknown }).cause;
  }
  return chain;
}

const CONNECTION_FAILURE =
  /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND|Connection terminated|connection.*(closed|ended|refused)|terminating connection|the database system is (starting|shutting) up|Can't reach database|P1001|P1017|DatabaseNotReachable|fetch failed|socket hang up|Query read timeout/i;

/** True when the error chain says a database or service could not be reached. */
export function isUnavailableError(error: unknown): boolean {
  return causes(error).some((e) => {
    if (e instanceof ServiceUnavailableError) return true;
    const { code, message, name } = e as { code?: unknown; message?: unknown; name?: unknown };
    return (
      (typeof code === "string" && CONNECTION_FAILURE.test(code)) ||
      (typeof message === "string" && CONNECTION_FAILURE.test(message)) ||
      name === "PrismaClientInitializationError"
    );
  });
}

function isCodelessClientError(error: unknown): boolean {
  if (!(error instanceof GraphQLError) || error.extensions.code !== undefined) return false;
  const status = (error.extensions.http as { status?: unknown } | undefined)?.status;
  return typeof status === "number" && status >= 400 && status < 500;
}

// graphql-js's own refusals of an argument while it executes (values.js getArgumentValues): a
// variable inside a list or object literal that is null where the item is non-null gets past
// validation when the variable has a default. They carry no code; they are the client's mistake.
const ARGUMENT_COERCION = /^Argument "[_A-Za-z][_0-9A-Za-z]*" (has invalid value |of required type |of non-null type )/;

function isArgumentCoercionError(error: unknown): boolean {
  return error instanceof GraphQLError && error.originalError == null && error.extensions.code === undefined && ARGUMENT_COERCION.test(error.message);
}

/** True when the error chain says the database cancelled a statement that ran too long. */
export function isStatementTimeout(error: unknown): boolean {
  return causes(error).some((e) => {
    const { code, message, cause } = e as { code?: unknown; message?: unknown; cause?: unknown };
    const originalCode = (cause as { originalCode?: unknown } | undefined)?.originalCode;
    // SQLSTATE 57014 (query_canceled), as pg reports it, as Prisma's adapter wraps it, or in a message.
    return code === "57014" || originalCode === "57014" || (typeof message === "string" && /canceling statement due to statement timeout/.test(message));
  });
}

const TOKEN_BOUND = /^Syntax Error: Document contains more tha[nt] (\d+) tokens\. Parsing aborted\.$/;
const VALIDATION_ABORTED =
  "Validation aborted: the document selects too many fields of one name, or spreads too many fragments, to check in reasonable time; select each field once";

/**
 * The one edge where internals are sanitised (Apollo `formatError`), shared by subgraphs and the
 * gateway: contract codes pass through, input errors raised inside validation keep their
 * BAD_USER_INPUT code, unreachable dependencies become SERVICE_UNAVAILABLE, and everything else is
 * logged here and answered as INTERNAL_SERVER_ERROR with no message detail in production.
 */
export function createErrorFormatter(options: { production: boolean; logger: Logger }) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const original = unwrapResolverError(error);
    const chain = causes(original);
    const { stacktrace: _dropped, ...extensions } = (formatted.extensions ?? {}) as Record<string, unknown>;
    const code = typeof extensions.code === "string" ? extensions.code : undefined;
    const base = { message: formatted.message, locations: formatted.locations, path: formatted.path };

    const inputError = chain.find((e): e is InputError => e instanceof InputError);
    if (inputError) {
      return { ...base, extensions: { ...extensions, ...inputError.extensions, code: ErrorCode.BadUserInput } };
    }
    if (isArgumentCoercionError(original)) {
      return { ...base, extensions: { ...extensions, code: ErrorCode.BadUserInput } };
    }
    if (code === ErrorCode.QueryTimeout || (code !== ErrorCode.BadUserInput && isStatementTimeout(original))) {
      options.logger.warn({ err: original }, "database statement timed out");
      return {
        message: "The database took too long to answer: narrow the request (a filter, a smaller page, fewer aliases) or retry later",
        path: formatted.path,
        extensions: { code: ErrorCode.QueryTimeout },
      };
    }
    if (code === ErrorCode.ServiceUnavailable || (code !== ErrorCode.BadUserInput && isUnavailableError(original))) {
      options.logger.warn({ err: original }, "dependency unavailable");
      const { serviceName } = extensions;
      const message = typeof serviceName === "string" ? `The ${serviceName} service is unavailable` : "Service temporarily unavailable";
      return { message, path: formatted.path, extensions: { code: ErrorCode.ServiceUnavailable, ...(serviceName ? { serviceName } : {}) } };
    }
    // Request mistakes Apollo Server detects itself (a persisted-query hash that does not match its
    // text, an unsupported persisted-query version) carry an HTTP 4xx status but no code.
    // graphql-js gives up validating a document whose same-named fields or fragments would take it
    // too long to compare, with a bare "Validation aborted.": say what to change.
    if (code === "GRAPHQL_VALIDATION_FAILED" && formatted.message === "Validation aborted.") {
      return { ...base, message: VALIDATION_ABORTED, extensions };
    }
    // graphql-js's words for a document past the parser's token bound (with its typo, "more that").
    const tokens = code === "GRAPHQL_PARSE_FAILED" ? TOKEN_BOUND.exec(formatted.message) : null;
    if (tokens) {
      return { ...base, message: `The document holds more than ${tokens[1]} tokens, the limit: send a smaller document`, extensions };
    }
    if (isCodelessClientError(original)) {
      return { ...base, extensions: { code: "BAD_REQUEST" } };
    }
    if (code && PUBLIC_CODES.has(code) && code !== ErrorCode.Internal) {
      return { ...base, extensions };
    }
    options.logger.error({ err: original }, "unexpected error");
    return {
      message: options.production ? "Internal server error" : formatted.message,
      locations: formatted.locations,
      path: formatted.path,
      extensions: { code: ErrorCode.Internal },
    };
  };
}
