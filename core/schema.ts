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
  return parseSdl(readFileSync(url, "utf8"), url.pathname);
}

/** The first character of `text` that is not ASCII, with its 1-based line and column; undefined when all are. */
export function firstNonAscii(text: string): { line: number; column: number; codePoint: number } | undefined {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the ASCII range itself
  const at = text.search(/[^\u0000-\u007f]/);
  if (at < 0) return undefined;
  const before = text.slice(0, at);
  const line = before.split("\n").length;
  return { line, column: at - before.lastIndexOf("\n"), codePoint: text.codePointAt(at) ?? 0 };
}

/**
 * Parses SDL that must be ASCII (descriptions included). V8 stores a string holding any character
 * past U+00FF with two bytes per character, and the names parsed from it stay two-byte: the schema
 * keeps them, and V8 keeps one copy of each property name, so every JSON answer carrying such a field
 * name is built two-byte and costs several times as much to write to a socket or to compress (the
 * results subgraph spent a fifth of its CPU there; BENCHMARKS.md).
 */
export function parseSdl(text: string, source: string): DocumentNode {
  const found = firstNonAscii(text);
  if (found) {
    const character = String.fromCodePoint(found.codePoint);
    const code = found.codePoint.toString(16).toUpperCase().padStart(4, "0");
    throw new Error(
      `${source}:${found.line}:${found.column}: "${character}" (U+${code}) is not ASCII; schema text (descriptions included) must be ASCII, so that field names stay one-byte strings and answers stay cheap to write (docs/guides/adding-a-field.md)`,
    );
  }
  return parse(text);
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
