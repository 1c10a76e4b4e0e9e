import { readFileSync } from "node:fs";
import { composeServices } from "@apollo/composition";
import { parseSdl } from "../core/schema.ts";
import { SUBGRAPHS } from "../subgraphs/registry.ts";

/** What composes into the supergraph: every subgraph of the registry with its default routing URL
 * (overridable per environment), then the gateway's in-process health subgraph. */
export const COMPOSED_SERVICES: readonly { name: string; sdl: string; url: string }[] = [
  ...SUBGRAPHS.map(({ name, sdl, defaultPort }) => ({ name, sdl, url: `http://127.0.0.1:${defaultPort}/graphql` })),
  { name: "health", sdl: "gateway/health/health.graphql", url: "http://health.gateway.local/graphql" },
];

export type CompositionResult = { supergraphSdl: string; hints: string[]; errors?: never } | { errors: string[]; supergraphSdl?: never; hints?: never };

/** Composes the SDL files (or replacement SDL text by service name) into a supergraph. */
export function composeSupergraph(sdlByName: Partial<Record<string, string>> = {}): CompositionResult {
  const services = [];
  for (const { name, sdl, url } of COMPOSED_SERVICES) {
    try {
      services.push({ name, url, typeDefs: parseSdl(sdlByName[name] ?? readFileSync(sdl, "utf8"), sdl) });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return { errors: [message.startsWith(sdl) ? message : `${sdl}: ${message}`] };
    }
  }
  const result = composeServices(services);
  if (result.errors) return { errors: result.errors.map((error) => error.message) };
  return { supergraphSdl: result.supergraphSdl, hints: (result.hints ?? []).map((hint) => `${hint.definition.code}: ${hint.message}`) };
}
