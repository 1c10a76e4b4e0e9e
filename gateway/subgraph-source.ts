import { RemoteGraphQLDataSource } from "@apollo/gateway";
import type { Fetcher, FetcherRequestInit } from "@apollo/utils.fetcher";
import type { Histogram } from "prom-client";
import { ServiceUnavailableError } from "../core/errors.ts";
import { currentRequestId } from "../core/request-scope.ts";

/**
 * A subgraph answers a request it refuses (validation, variable coercion) with HTTP 400 and a
 * GraphQL body. That body is an ordinary GraphQL response whose errors (BAD_USER_INPUT, …) the
 * client must see, so it is passed on as one instead of becoming "400: Bad Request".
 */
const graphqlAwareFetch: Fetcher = async (url: string, init?: FetcherRequestInit) => {
  const response = await fetch(url, init as RequestInit);
  return passGraphQLErrors(response);
};

async function passGraphQLErrors(response: Response): Promise<Response> {
  const type = response.headers.get("content-type") ?? "";
  if (response.status >= 400 && response.status < 500 && /^application\/(graphql-response\+)?json/.test(type)) {
    const body = await response.text();
    if (body.includes('"errors"')) return new Response(body, { status: 200, headers: response.headers });
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  }
  return response;
}

export class SubgraphDataSource extends RemoteGraphQLDataSource {
  constructor(private readonly subgraphName: string, url: string, fetchDuration?: Histogram<"subgraph">) {
    super({
      url,
      fetcher: fetchDuration
        ? async (target, init) => {
            const stop = fetchDuration.startTimer({ subgraph: subgraphName });
            try {
              return await graphqlAwareFetch(target, init);
            } finally {
              stop();
            }
          }
        : graphqlAwareFetch,
    });
  }

  /** One request id from the client's request through every subgraph it reaches. */
  override willSendRequest({ request }: { request: { http?: { headers: { set(name: string, value: string): void } } } }): void {
    const requestId = currentRequestId();
    if (requestId) request.http?.headers.set("x-request-id", requestId);
  }

  /** A subgraph that cannot be reached is SERVICE_UNAVAILABLE, named, without host or port. */
  override didEncounterError(error: Error, _request: unknown, response?: unknown): void {
    if (!response) throw new ServiceUnavailableError(`The ${this.subgraphName} service is unavailable`, { serviceName: this.subgraphName });
    throw error;
  }
}
