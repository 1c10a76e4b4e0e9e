// A tiny typed GraphQL executor over `fetch` (browser and Node 18+): no client library, no GraphQL
// runtime. Documents come from `npm run codegen` (client/generated) as TypedDocumentStrings, so the
// variables a call takes and the data it returns are checked by TypeScript.
import type { DocumentTypeDecoration } from "@graphql-typed-document-node/core";

/** A generated operation: its text (`toString()`) typed with its result and variables. */
export type TypedDocument<TResult, TVariables> = DocumentTypeDecoration<TResult, TVariables> & { toString(): string };

export interface GraphQLErrorJson {
  message: string;
  path?: (string | number)[];
  extensions?: { code?: string; [key: string]: unknown };
}

/** The request failed: GraphQL errors (with their `extensions.code`), or a transport/HTTP failure. */
export class GraphQLRequestError extends Error {
  override readonly name = "GraphQLRequestError";
  /** HTTP status (0 when the request never got an answer). */
  readonly status: number;
  readonly errors: GraphQLErrorJson[];
  /** Seconds to wait before retrying, from `Retry-After` (RATE_LIMITED, HTTP 429). */
  readonly retryAfterSeconds?: number;
  constructor(message: string, status: number, errors: GraphQLErrorJson[] = [], retryAfterSeconds?: number, options?: { cause?: unknown }) {
    super(message, options);
    this.status = status;
    this.errors = errors;
    this.retryAfterSeconds = retryAfterSeconds;
  }

  /** The first error's `extensions.code` (`BAD_USER_INPUT`, `RATE_LIMITED`, …), if any. */
  get code(): string | undefined {
    return this.errors[0]?.extensions?.code;
  }
}

/** One network's indexed head an answer was read at (`extensions.readAt`). */
export interface ReadAtPointer {
  chainId: number;
  block: string;
  hash: string;
}

/** An answer's data with the heads it was read at (empty when the answer does not say). */
export interface GraphQLAnswer<TResult> {
  data: TResult;
  readAt: ReadAtPointer[];
}

/** How queries are retried (mutations never: the API has none, and a retry must be safe). */
export interface RetryOptions {
  /** Retries after the first attempt (default 3; 0: none). */
  retries?: number;
  /** First backoff when the answer names no wait (default 250 ms), doubled each retry, with jitter. */
  baseDelayMs?: number;
  /** Longest wait before one retry, whatever the server says (default 10 s): beyond it the error is thrown. */
  maxDelayMs?: number;
}

const RETRYABLE_CODES = new Set(["RATE_LIMITED", "SERVICE_UNAVAILABLE", "SERVICE_BUSY", "QUERY_TIMEOUT", "NOT_YET_INDEXED"]);

export interface GraphQLClientOptions {
  /** The endpoint, e.g. `http://127.0.0.1:4000/graphql` (or `/graphql` in a page on the API host). */
  url: string;
  /**
   * `GET` sends queries in the URL (the API serves GET for CDN caching); `POST` (default) in the
   * body. Long operations should stay on POST: URLs have length limits along the way.
   */
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  /** Defaults to the global `fetch`. */
  fetch?: typeof fetch;
  /** Aborts a request that takes longer (default 15 s). */
  timeoutMs?: number;
  /**
   * Retries of queries that failed for a reason that may pass (RATE_LIMITED, SERVICE_UNAVAILABLE,
   * SERVICE_BUSY, QUERY_TIMEOUT, NOT_YET_INDEXED, HTTP 429/502/503/504, no answer), waiting what
   * `Retry-After`, `retryAfterSeconds` or `RateLimit-Reset` say, else an exponential backoff.
   * `false`: none. Default: `{ retries: 3 }`.
   */
  retry?: RetryOptions | false;
  /**
   * Automatic persisted queries: each query is first sent as a hash-only GET (the CDN-friendly
   * form); on PERSISTED_QUERY_NOT_FOUND, once with its text (POST), which registers it. Default false.
   */
  persistedQueries?: boolean;
  /** How the client waits (tests); default setTimeout. */
  sleep?: (ms: number) => Promise<void>;
}

/** Variables are optional exactly when the operation declares none. */
type VariablesArg<TVariables> = [TVariables] extends [Record<string, never>] ? [variables?: TVariables] : [variables: TVariables];

export interface GraphQLClient {
  request<TResult, TVariables>(document: TypedDocument<TResult, TVariables>, ...variables: VariablesArg<TVariables>): Promise<TResult>;
}

/** The client createGraphQLClient makes: `request`, and `requestWithMeta` for what an answer was read at. */
export interface FullGraphQLClient extends GraphQLClient {
  /** As `request`, with the heads the answer was read at (`extensions.readAt`). */
  requestWithMeta<TResult, TVariables>(document: TypedDocument<TResult, TVariables>, ...variables: VariablesArg<TVariables>): Promise<GraphQLAnswer<TResult>>;
}

interface GraphQLResponseBody {
  data?: unknown;
  errors?: GraphQLErrorJson[];
  extensions?: { readAt?: ReadAtPointer[] };
}

/** Seconds a failed answer says to wait: `Retry-After`, else the error's `retryAfterSeconds`, else `RateLimit-Reset` when nothing remains. */
function waitOf(error: GraphQLRequestError, headers: Headers | undefined): number | undefined {
  if (error.retryAfterSeconds !== undefined) return error.retryAfterSeconds;
  const hinted = error.errors.find((e) => typeof e.extensions?.retryAfterSeconds === "number")?.extensions?.retryAfterSeconds;
  if (typeof hinted === "number") return hinted;
  const remaining = headers?.get("ratelimit-remaining");
  const reset = Number(headers?.get("ratelimit-reset") ?? Number.NaN);
  if (remaining === "0" && Number.isFinite(reset)) return reset;
  return undefined;
}

function isRetryable(error: GraphQLRequestError): boolean {
  if (error.status === 0 || error.status === 429 || error.status === 502 || error.status === 503 || error.status === 504) return true;
  return error.errors.length > 0 && error.errors.every((e) => RETRYABLE_CODES.has(e.extensions?.code ?? ""));
}

async function sha256Hex(text: string): Promise<string> {
  const digest = await globalThis.crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

function operationNameOf(text: string): string | undefined {
  return /^\s*(?:query|mutation|subscription)\s+([_A-Za-z][_0-9A-Za-z]*)/.exec(text)?.[1];
}

export function createGraphQLClient(options: GraphQLClientOptions): FullGraphQLClient {
  const doFetch = options.fetch ?? ((...args: Parameters<typeof fetch>) => fetch(...args));
  const method = options.method ?? "POST";
  const retry = options.retry === false ? { retries: 0 } : (options.retry ?? {});
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  /** Hashes this client has seen the server answer, so their text need not be sent again. */
  const hashes = new Map<string, string>();

  /** The URL of a GET carrying `params` (a relative endpoint stays relative). */
  const getUrl = (params: Record<string, string | undefined>) => {
    const target = new URL(options.url, "http://relative.invalid");
    for (const [name, value] of Object.entries(params)) if (value !== undefined) target.searchParams.set(name, value);
    return target.origin === "http://relative.invalid" ? `${target.pathname}${target.search}` : target.toString();
  };

  /** One HTTP exchange: the answer, or a GraphQLRequestError (with the response's headers for the retry decision). */
  const exchange = async (
    httpMethod: "GET" | "POST",
    payload: { query?: string; operationName?: string; variables?: unknown; extensions?: unknown },
  ): Promise<{ body: GraphQLResponseBody; error?: GraphQLRequestError; headers?: Headers }> => {
    const headers: Record<string, string> = { accept: "application/graphql-response+json, application/json", ...options.headers };
    let url = options.url;
    let body: string | undefined;
    if (httpMethod === "GET") {
      url = getUrl({
        query: payload.query,
        operationName: payload.operationName,
        variables: payload.variables === undefined ? undefined : JSON.stringify(payload.variables),
        extensions: payload.extensions === undefined ? undefined : JSON.stringify(payload.extensions),
      });
    } else {
      headers["content-type"] = "application/json";
      body = JSON.stringify(payload);
    }
    let response: Response;
    try {
      response = await doFetch(url, { method: httpMethod, headers, body, signal: AbortSignal.timeout(options.timeoutMs ?? 15_000) });
    } catch (error) {
      const failed = new GraphQLRequestError(
        `GraphQL request to ${options.url} failed: ${error instanceof Error ? error.message : String(error)}`,
        0,
        [],
        undefined,
        {
          cause: error,
        },
      );
      return { body: {}, error: failed };
    }
    const retryAfter = Number(response.headers.get("retry-after") ?? Number.NaN);
    let parsed: GraphQLResponseBody | undefined;
    try {
      parsed = (await response.json()) as GraphQLResponseBody;
    } catch {
      parsed = undefined;
    }
    const errors = parsed?.errors ?? [];
    if (errors.length > 0 || !response.ok || parsed?.data === undefined || parsed.data === null) {
      const first = errors[0];
      const message = first ? `${first.extensions?.code ?? "GRAPHQL_ERROR"}: ${first.message}` : `HTTP ${response.status} from ${options.url}`;
      return {
        body: parsed ?? {},
        error: new GraphQLRequestError(message, response.status, errors, Number.isFinite(retryAfter) ? retryAfter : undefined),
        headers: response.headers,
      };
    }
    return { body: parsed, headers: response.headers };
  };

  /** One attempt: hash-only GET first when persisted queries are on, the text on a miss. */
  const attempt = async (query: string, operationName: string | undefined, variables: unknown) => {
    if (!options.persistedQueries) return exchange(method, { query, operationName, variables });
    const sha256Hash = hashes.get(query) ?? (await sha256Hex(query));
    hashes.set(query, sha256Hash);
    const extensions = { persistedQuery: { version: 1, sha256Hash } };
    const hashOnly = await exchange("GET", { operationName, variables, extensions });
    const missed = hashOnly.error?.errors.some(
      (e) => e.extensions?.code === "PERSISTED_QUERY_NOT_FOUND" || e.extensions?.code === "PERSISTED_QUERY_NOT_SUPPORTED",
    );
    if (!missed) return hashOnly;
    // Unknown to the server (or its store was emptied): the text once, which registers the hash.
    return exchange("POST", { query, operationName, variables, extensions });
  };

  const requestWithMeta = async <TResult, TVariables>(
    document: TypedDocument<TResult, TVariables>,
    ...[variables]: VariablesArg<TVariables>
  ): Promise<GraphQLAnswer<TResult>> => {
    const query = document.toString();
    const operationName = operationNameOf(query);
    const isQuery = !/^\s*(mutation|subscription)\b/.test(query);
    const retries = isQuery ? (retry.retries ?? 3) : 0;
    for (let tries = 0; ; tries++) {
      const { body, error, headers } = await attempt(query, operationName, variables);
      if (!error) return { data: body.data as TResult, readAt: body.extensions?.readAt ?? [] };
      if (tries >= retries || !isRetryable(error)) throw error;
      const said = waitOf(error, headers);
      const backoff = (retry.baseDelayMs ?? 250) * 2 ** tries * (0.5 + Math.random() / 2);
      const waitMs = said !== undefined ? said * 1000 : backoff;
      if (waitMs > (retry.maxDelayMs ?? 10_000)) throw error;
      await sleep(waitMs);
    }
  };

  return {
    requestWithMeta,
    async request<TResult, TVariables>(document: TypedDocument<TResult, TVariables>, ...variables: VariablesArg<TVariables>): Promise<TResult> {
      return (await requestWithMeta(document, ...variables)).data;
    },
  };
}
