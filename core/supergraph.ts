import { readFileSync } from "node:fs";
import { composeServices } from "@apollo/composition";
import { Supergraph } from "@apollo/federation-internals";
import { parse, type GraphQLSchema } from "graphql";

/** Every subgraph of the supergraph: its SDL file and its default routing URL (overridable per environment). */
export const SUBGRAPHS = [
  { name: "networks", sdl: "subgraphs/networks/networks.graphql", url: "http://127.0.0.1:4001/graphql" },
  { name: "results", sdl: "subgraphs/results/results.graphql", url: "http://127.0.0.1:4002/graphql" },
  { name: "history", sdl: "subgraphs/history/history.graphql", url: "http://127.0.0.1:4003/graphql" },
  { name: "health", sdl: "gateway/health/health.graphql", url: "http://health.gateway.local/graphql" },
] as const;

export type CompositionResult = { supergraphSdl: string; hints: string[]; errors?: never } | { errors: string[]; supergraphSdl?: never; hints?: never };

/** Composes the subgraphs' SDL files (or replacement SDL text by subgraph name) into a supergraph. */
export function composeSupergraph(sdlByName: Partial<Record<string, string>> = {}): CompositionResult {
  const services = [];
  for (const { name, sdl, url } of SUBGRAPHS) {
    try {
      services.push({ name, url, typeDefs: parse(sdlByName[name] ?? readFileSync(sdl, "utf8")) });
    } catch (error) {
      return { errors: [`${sdl}: ${error instanceof Error ? error.message : String(error)}`] };
    }
  }
  const result = composeServices(services);
  if (result.errors) return { errors: result.errors.map((error) => error.message) };
  return { supergraphSdl: result.supergraphSdl, hints: (result.hints ?? []).map((hint) => `${hint.definition.code}: ${hint.message}`) };
}

/** The schema clients see (no join__ machinery): what breaking-change checks compare. */
export function apiSchemaOf(supergraphSdl: string): GraphQLSchema {
  return Supergraph.build(supergraphSdl).apiSchema().toGraphQLJSSchema();
}
