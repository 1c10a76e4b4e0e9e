import type { ApolloServerOptionsWithGateway, BaseContext } from "@apollo/server";
import { readFileSync } from "node:fs";
import { Supergraph } from "@apollo/federation-internals";
import { buildSubgraphSchema } from "@apollo/subgraph";
import type { GraphQLResolverMap } from "@apollo/subgraph/dist/schema-helper/resolverMap.js";
import { parse, type DocumentNode, type GraphQLSchema } from "graphql";

// GraphQL schema helpers shared by the gateway (its health subgraph, GET /schema.graphql), the
// subgraphs and the schema tooling.

/** The SDL file is a subgraph's contract; it is read, never embedded in code. */
export function loadSdl(url: URL): DocumentNode {
  return parse(readFileSync(url, "utf8"));
}

/** A Federation subgraph schema from SDL and a codegen-typed resolver map. */
export function buildFederatedSchema(typeDefs: DocumentNode, resolvers: object): GraphQLSchema {
  // Codegen's `Resolvers` is stricter than Apollo's loose resolver map; this is the one cast.
  return buildSubgraphSchema({ typeDefs, resolvers: resolvers as GraphQLResolverMap<unknown> });
}

/** The schema clients see (no join__ machinery): what GET /schema.graphql serves, codegen types and breaking-change checks compare. */
export function apiSchemaOf(supergraphSdl: string): GraphQLSchema {
  return Supergraph.build(supergraphSdl).apiSchema().toGraphQLJSSchema();
}

/**
 * Apollo Server's executor seam: its `gateway` option (`load()` gives the executor). The gateway
 * wraps federation's executor there (gateway/single-subgraph.ts), the subgraphs put a compiled one
 * (subgraphs/kit/executor.ts).
 */
export type ExecutorSeam = ApolloServerOptionsWithGateway<BaseContext>["gateway"];
export type SeamExecutor = NonNullable<Awaited<ReturnType<ExecutorSeam["load"]>>["executor"]>;
export type SeamRequestContext = Parameters<SeamExecutor>[0];

/** An operation a gateway hands a subgraph in the same process, with the headers HTTP would carry. */
export interface InProcessRequest {
  query: string;
  variables?: Record<string, unknown>;
  operationName?: string;
  extensions?: Record<string, unknown>;
  headers: Record<string, string>;
}

/** A subgraph's answer without HTTP: already-serialised GraphQL (formatted errors), its status and Cache-Control. */
export interface InProcessAnswer {
  status: number;
  body: Record<string, unknown>;
  cacheControl?: string;
}
