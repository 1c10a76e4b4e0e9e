import { GraphQLError, type GraphQLFormattedError } from "graphql";
import { unwrapResolverError } from "@apollo/server/errors";
import type { Logger } from "./logger.ts";

/** Every `extensions.code` the contract defines (shared/API.md, "Errors"). */
export const ErrorCode = {
  BadUserInput: "BAD_USER_INPUT",
  ParseFailed: "GRAPHQL_PARSE_FAILED",
  ValidationFailed: "GRAPHQL_VALIDATION_FAILED",
  QueryTooComplex: "QUERY_TOO_COMPLEX",
  RateLimited: "RATE_LIMITED",
  PersistedQueryNotFound: "PERSISTED_QUERY_NOT_FOUND",
  ServiceUnavailable: "SERVICE_UNAVAILABLE",
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

function causes(error: unknown): unknown[] {
  const chain: unknown[] = [];
  let current: unknown = error;
  while (current && chain.length < 8 && !chain.includes(current)) {
    chain.push(current);
    current = (current as { originalError?: unknown; cause?: unknown }).originalError ?? (current as { cause?: unknown }).cause;
  }
  return chain;
}

const CONNECTION_FAILURE = /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND|Connection terminated|connection.*(closed|ended|refused)|terminating connection|the database system is (starting|shutting) up|Can't reach database|P1001|P1017|DatabaseNotReachable|fetch failed|socket hang up/i;

/** True when the error chain says a database or service could not be reached. */
export function isUnavailableError(error: unknown): boolean {
  return causes(error).some((e) => {
    if (e instanceof ServiceUnavailableError) return true;
    const { code, message, name } = e as { code?: unknown; message?: unknown; name?: unknown };
    return (typeof code === "string" && CONNECTION_FAILURE.test(code)) ||
      (typeof message === "string" && CONNECTION_FAILURE.test(message)) ||
      name === "PrismaClientInitializationError";
  });
}

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
    if (code === ErrorCode.ServiceUnavailable || (code !== ErrorCode.BadUserInput && isUnavailableError(original))) {
      options.logger.warn({ err: original }, "dependency unavailable");
      const { serviceName } = extensions;
      const message = typeof serviceName === "string" ? `The ${serviceName} service is unavailable` : "Service temporarily unavailable";
      return { message, path: formatted.path, extensions: { code: ErrorCode.ServiceUnavailable, ...(serviceName ? { serviceName } : {}) } };
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
