import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, watch, writeFileSync, type FSWatcher } from "node:fs";
import { dirname } from "node:path";
import { Supergraph } from "@apollo/federation-internals";
import { Counter, Gauge, type Registry } from "prom-client";
import type { HealthCheck } from "../core/health.ts";
import type { Logger } from "../core/logger.ts";
import { firstNonAscii } from "../core/schema.ts";
import type { DataGeneration } from "./response-cache.ts";

// Where the gateway's supergraph comes from, and the one owner of which version it serves. Either
// the committed file (SUPERGRAPH_PATH, reloaded when it changes) or a schema registry's endpoint
// (SUPERGRAPH_URL, polled with If-None-Match, an optional key header). Every candidate passes the
// same gate before Apollo sees it: it parses as a supergraph, yields an API schema, and names every
// subgraph this gateway routes to; a refused one is logged and the last good one keeps serving. A
// registry's good supergraph is also kept on disk (SUPERGRAPH_KEPT_PATH), so a gateway can start
// while the registry is down; with neither the registry nor a kept copy it refuses to start.
//
// Apollo swaps its schema synchronously inside `update`, and `current()` changes in the same tick:
// routing, cost analysis (the request's schema), GET /schema.graphql and the response cache key
// (keyedBySchema) all follow one version, named by its hash (the SHA-256 of the supergraph text,
// which is also Apollo's composition id).

export type SupergraphOrigin = "file" | "registry" | "kept copy";

export interface SupergraphVersion {
  sdl: string;
  /** SHA-256 of the supergraph text, hex. */
  hash: string;
  origin: SupergraphOrigin;
}

export interface SupergraphRegistrySettings {
  /** The registry's endpoint serving the supergraph text (`npm run schema:publish` writes what it serves). */
  url: string;
  /** A header naming this gateway to the registry (e.g. a CDN access key); its value is never logged. */
  key?: { header: string; value: string };
  pollIntervalMs: number;
  /** Where the last good supergraph from the registry is kept, for a start while the registry is down. */
  keptPath: string;
  /** Deadline of one request to the registry; default 5 s (polls never overlap: the next waits for it). */
  timeoutMs?: number;
}

export interface SupergraphSourceOptions {
  /** The committed supergraph file, followed when no registry is configured. */
  path: string;
  registry?: SupergraphRegistrySettings;
  /** Subgraphs this gateway routes to: a supergraph without one of them is refused. */
  requiredSubgraphs: readonly string[];
  logger: Logger;
  /** Where the schema's hash and the registry's polls are reported (GET /metrics). */
  metrics?: Registry;
}

/** The `update` Apollo Gateway hands a supergraph manager: it swaps the schema, or throws and keeps the old one. */
type ApolloUpdate = (supergraphSdl: string) => void;

export interface SupergraphSource {
  /** Apollo Gateway's `supergraphSdl` option (its function form): the first version, then updates. */
  manager(hooks: { update: ApolloUpdate }): Promise<{ supergraphSdl: string; cleanup: () => Promise<void> }>;
  /** The version being served; undefined before the gateway loaded one. */
  current(): SupergraphVersion | undefined;
  /** `supergraph` in /health: the served hash and where it came from; DEGRADED while the registry fails or serves a refused supergraph. */
  healthCheck(): HealthCheck;
}

export const sha256Hex = (text: string): string => createHash("sha256").update(text).digest("hex");

/** Why a supergraph cannot be served, or undefined when it can. */
export function supergraphProblem(sdl: string, requiredSubgraphs: readonly string[]): string | undefined {
  if (sdl.trim() === "") return "it is empty";
  let names: Set<string>;
  try {
    const supergraph = Supergraph.build(sdl, { validateSupergraph: true });
    supergraph.apiSchema();
    names = new Set(supergraph.subgraphs().names());
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return `it does not parse as a supergraph: ${message.split("\n")[0]!.slice(0, 300)}`;
  }
  const missing = requiredSubgraphs.filter((name) => !names.has(name));
  return missing.length > 0 ? `it lacks subgraph${missing.length === 1 ? "" : "s"} ${missing.join(", ")} that this gateway routes to` : undefined;
}

/** A URL as it may be logged: no query string or credentials (a registry key may travel there). */
function loggableUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return "(invalid URL)";
  }
}

const short = (hash: string) => hash.slice(0, 12);

function readIfPresent(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

/** Writes a file whole or not at all (a crash mid-write never leaves half a supergraph to start from). */
function writeAtomically(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, text);
  renameSync(temporary, path);
}

class RegistryError extends Error {}

export function createSupergraphSource(options: SupergraphSourceOptions): SupergraphSource {
  const { logger, registry } = options;
  const required = [...new Set(options.requiredSubgraphs)].sort();
  let current: SupergraphVersion | undefined;
  /** The registry's last failure, or the hash of a supergraph it serves that was refused: shown by /health until a poll succeeds. */
  let trouble: { detail: string; since: number } | undefined;

  const info = options.metrics
    ? new Gauge({
        name: "gateway_supergraph_info",
        help: "The supergraph this gateway serves: 1 for its hash and origin (file, registry, kept copy)",
        labelNames: ["hash", "origin"] as const,
        registers: [options.metrics],
      })
    : undefined;
  const polls = options.metrics
    ? new Counter({
        name: "gateway_supergraph_polls_total",
        help: "Registry polls by result: updated, unchanged, refused (kept the served one), failed (registry unreachable or erroring)",
        labelNames: ["result"] as const,
        registers: [options.metrics],
      })
    : undefined;
  const lastSuccess = options.metrics
    ? new Gauge({
        name: "gateway_supergraph_registry_last_success_timestamp_seconds",
        help: "When the registry last answered a poll (new or unchanged supergraph)",
        registers: [options.metrics],
      })
    : undefined;

  const serve = (version: SupergraphVersion) => {
    current = version;
    info?.reset();
    info?.set({ hash: version.hash, origin: version.origin }, 1);
    // A supergraph composed by scripts/supergraph.ts is ASCII (core/schema.ts parseSdl); one made
    // elsewhere still serves, but slower: say why.
    const found = firstNonAscii(version.sdl);
    if (found) logger.warn({ hash: version.hash, ...found }, "supergraph is not ASCII: answers will be slower to write (docs/guides/adding-a-field.md)");
  };

  /** Gates and applies a candidate: whether it is now served (false: refused, logged, the served one stays). */
  const offer = (sdl: string, origin: SupergraphOrigin, update: ApolloUpdate, from: Record<string, unknown>): boolean => {
    const hash = sha256Hex(sdl);
    if (hash === current?.hash) return true;
    const problem = supergraphProblem(sdl, required);
    if (problem) {
      logger.error({ ...from, hash, serving: current?.hash }, `supergraph refused: ${problem}; keeping the served one`);
      return false;
    }
    try {
      update(sdl);
    } catch (error) {
      logger.error({ ...from, hash, serving: current?.hash, err: error }, "supergraph refused by the gateway; keeping the served one");
      return false;
    }
    const previous = current?.hash;
    serve({ sdl, hash, origin });
    logger.info({ ...from, hash, previous }, "supergraph updated");
    return true;
  };

  if (!registry) return fileSource(options.path);

  const timeoutMs = registry.timeoutMs ?? 5_000;
  const url = loggableUrl(registry.url);
  let etag: string | undefined;

  /** One request to the registry: the supergraph text, or undefined when unchanged (304); throws RegistryError. */
  const fetchSupergraph = async (): Promise<string | undefined> => {
    const headers: Record<string, string> = { accept: "text/plain, application/graphql, */*;q=0.5" };
    if (etag) headers["if-none-match"] = etag;
    if (registry.key) headers[registry.key.header] = registry.key.value;
    let response: Response;
    try {
      response = await fetch(registry.url, { headers, signal: AbortSignal.timeout(timeoutMs), redirect: "follow" });
    } catch (error) {
      const timedOut = error instanceof DOMException && error.name === "TimeoutError";
      throw new RegistryError(timedOut ? `no answer within ${timeoutMs} ms` : "unreachable");
    }
    if (response.status === 304) return undefined;
    if (!response.ok) {
      await response.body?.cancel();
      throw new RegistryError(`HTTP ${response.status}`);
    }
    const text = await response.text().catch(() => {
      throw new RegistryError("the answer broke off");
    });
    // Remembered even for a supergraph that is then refused: the registry is not asked for the same bytes again.
    etag = response.headers.get("etag") ?? undefined;
    return text;
  };

  const keep = (version: SupergraphVersion) => {
    if (readIfPresent(registry.keptPath) === version.sdl) return;
    try {
      writeAtomically(registry.keptPath, version.sdl);
    } catch (error) {
      logger.warn({ path: registry.keptPath, err: error instanceof Error ? error.message : String(error) }, "cannot keep a copy of the supergraph");
    }
  };

  const failing = (detail: string) => {
    if (trouble?.detail !== detail)
      logger.warn({ url, problem: detail, serving: current?.hash }, "supergraph registry: poll failed; serving the last good supergraph");
    trouble = { detail, since: trouble?.detail === detail ? trouble.since : Date.now() };
  };

  const poll = async (update: ApolloUpdate) => {
    let text: string | undefined;
    try {
      text = await fetchSupergraph();
    } catch (error) {
      polls?.inc({ result: "failed" });
      failing(error instanceof Error ? error.message : String(error));
      return;
    }
    lastSuccess?.set(Date.now() / 1000);
    if (text === undefined || sha256Hex(text) === current?.hash) {
      polls?.inc({ result: "unchanged" });
      // A 304 after a refused supergraph means the registry still serves that refused one.
      if (text !== undefined || !trouble?.detail.startsWith("refused")) clearTrouble();
      return;
    }
    if (offer(text, "registry", update, { url })) {
      polls?.inc({ result: "updated" });
      clearTrouble();
      keep(current!);
    } else {
      polls?.inc({ result: "refused" });
      trouble = { detail: `refused ${short(sha256Hex(text))} (see the log)`, since: Date.now() };
    }
  };

  const clearTrouble = () => {
    if (trouble) logger.info({ url, serving: current?.hash }, "supergraph registry: answering again");
    trouble = undefined;
  };

  return {
    current: () => current,
    healthCheck,
    async manager({ update }) {
      let first: SupergraphVersion | undefined;
      try {
        const text = await fetchSupergraph();
        const problem = text === undefined ? "an empty answer" : supergraphProblem(text, required);
        if (text !== undefined && !problem) {
          first = { sdl: text, hash: sha256Hex(text), origin: "registry" };
          lastSuccess?.set(Date.now() / 1000);
        } else {
          trouble = { detail: `refused ${text === undefined ? "" : short(sha256Hex(text))} (see the log)`, since: Date.now() };
          logger.error({ url, hash: text && sha256Hex(text) }, `supergraph refused at start: ${problem}`);
        }
      } catch (error) {
        const detail = error instanceof Error ? error.message : String(error);
        trouble = { detail, since: Date.now() };
        logger.warn({ url, problem: detail }, "supergraph registry unreachable at start");
      }
      if (!first) {
        const kept = readIfPresent(registry.keptPath);
        const problem = kept === undefined ? "there is none" : supergraphProblem(kept, required);
        if (kept === undefined || problem) {
          throw new Error(
            `No supergraph to serve: the registry at ${url} gave none (${trouble?.detail ?? "refused"}) and the kept copy at ${registry.keptPath} cannot serve (${problem}); refusing to start`,
          );
        }
        first = { sdl: kept, hash: sha256Hex(kept), origin: "kept copy" };
        logger.warn({ path: registry.keptPath, hash: first.hash }, "starting from the kept copy of the supergraph; the registry is polled for a newer one");
      } else {
        keep(first);
      }
      serve(first);
      logger.info({ url, hash: first.hash, origin: first.origin, pollIntervalMs: registry.pollIntervalMs }, "supergraph loaded; following the registry");
      let stopped = false;
      let timer: NodeJS.Timeout | undefined;
      const schedule = () => {
        timer = setTimeout(async () => {
          await poll(update);
          if (!stopped) schedule();
        }, registry.pollIntervalMs);
        timer.unref();
      };
      schedule();
      return {
        supergraphSdl: first.sdl,
        cleanup: async () => {
          stopped = true;
          clearTimeout(timer);
        },
      };
    },
  };

  function healthCheck(): HealthCheck {
    if (!current) return { name: "supergraph", status: "DEGRADED", latencyMs: null, detail: "not loaded yet" };
    const served = `${current.hash} (${current.origin})`;
    if (!trouble) return { name: "supergraph", status: "OK", latencyMs: null, detail: served };
    const seconds = Math.floor((Date.now() - trouble.since) / 1000);
    return { name: "supergraph", status: "DEGRADED", latencyMs: null, detail: `${served}; registry: ${trouble.detail} for ${seconds}s` };
  }

  /** The committed file, hot-swapped when it changes (never composed or introspected by the gateway itself). */
  function fileSource(path: string): SupergraphSource {
    return {
      current: () => current,
      healthCheck,
      async manager({ update }) {
        const initial = readIfPresent(path);
        if (initial === undefined)
          throw new Error(`Cannot read the supergraph at ${path}: run \`npm run schema:compose\` (the gateway never composes at start-up)`);
        const problem = supergraphProblem(initial, required);
        if (problem) throw new Error(`The supergraph at ${path} cannot serve: ${problem}`);
        serve({ sdl: initial, hash: sha256Hex(initial), origin: "file" });
        let watcher: FSWatcher | undefined = watch(path, { persistent: false }, () => {
          const next = readIfPresent(path);
          // Mid-replace (missing or empty): the next event carries the new file.
          if (next === undefined || next.trim() === "") return;
          offer(next, "file", update, { path });
        });
        return {
          supergraphSdl: initial,
          cleanup: async () => {
            watcher?.close();
            watcher = undefined;
          },
        };
      },
    };
  }
}

/**
 * The response cache's generation with the served schema's hash in it: an answer computed under
 * one supergraph is never replayed under another (replicas running different versions share a
 * Redis cache, each reading only its own version's entries). Unknown while either is unknown.
 */
export function keyedBySchema(generation: DataGeneration, source: Pick<SupergraphSource, "current">): DataGeneration {
  return {
    current: () => {
      const data = generation.current();
      const schema = source.current()?.hash;
      return data === undefined || schema === undefined ? undefined : `${data}:${schema}`;
    },
    stop: () => generation.stop(),
  };
}
