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
  constructor(
    message: string,
    /** HTTP status (0 when the request never got an answer). */
    readonly status: number,
    readonly errors: GraphQLErrorJson[] = [],
    /** Seconds to wait before retrying, from `Retry-After` (RATE_LIMITED, HTTP 429). */
    readonly retryAfterSeconds?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  /** The first error's `extensions.code` (`BAD_USER_INPUT`, `RATE_LIMITED`, …), if any. */
  get code(): string | undefined {
    return this.errors[0]?.extensions?.code;
  }
}

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
}

/** Variables are optional exactly when the operation declares none. */
type VariablesArg<TVariables> = [TVariables] extends [Record<string, never>] ? [variables?: TVariables] : [variables: TVariables];

export interface GraphQLClient {
  request<TResult, TVariables>(document: TypedDocument<TResult, TVariables>, ...variables: VariablesArg<TVariables>): Promise<TResult>;
}

interface GraphQLResponseBody {
  data?: unknown;
  errors?: GraphQLErrorJson[];
}

function operationNameOf(text: string): string | undefined {
  return /^\s*(?:query|mutation|subscription)\s+([_A-Za-z][_0-9A-Za-z]*)/.exec(text)?.[1];
}

export function createGraphQLClient(options: GraphQLClientOptions): GraphQLClient {
  const doFetch = options.fetch ?? ((...args: Parameters<typeof fetch>) => fetch(...args));
  const method = options.method ?? "POST";
  return {
    async request<TResult, TVariables>(document: TypedDocument<TResult, TVariables>, ...[variables]: VariablesArg<TVariables>): Promise<TResult> {
      const query = document.toString();
      const operationName = operationNameOf(query);
      const headers: Record<string, string> = { accept: "application/graphql-response+json, application/json", ...options.headers };
      let url = options.url;
      let body: string | undefined;
      if (method === "GET") {
        // A relative URL (a page on the API host) needs a base; the result is made relative again.
        const target = new URL(options.url, "http://relative.invalid");
        target.searchParams.set("query", query);
        if (operationName) target.searchParams.set("operationName", operationName);
        if (variables !== undefined) target.searchParams.set("variables", JSON.stringify(variables));
        url = target.origin === "http://relative.invalid" ? `${target.pathname}${target.search}` : target.toString();
      } else {
        headers["content-type"] = "application/json";
        body = JSON.stringify({ query, operationName, variables });
      }

      let response: Response;
      try {
        response = await doFetch(url, { method, headers, body, signal: AbortSignal.timeout(options.timeoutMs ?? 15_000) });
      } catch (error) {
        throw new GraphQLRequestError(`GraphQL request to ${options.url} failed: ${error instanceof Error ? error.message : String(error)}`, 0, [], undefined, {
          cause: error,
        });
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
        throw new GraphQLRequestError(message, response.status, errors, Number.isFinite(retryAfter) ? retryAfter : undefined);
      }
      return parsed.data as TResult;
    },
  };
}
