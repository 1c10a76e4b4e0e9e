import type { Database } from "../../core/db.ts";
import type { Logger } from "../../core/logger.ts";

export type HealthStatus = "OK" | "DEGRADED" | "DOWN";

export interface HealthCheck {
  name: string;
  status: HealthStatus;
  latencyMs: number | null;
  detail: string | null;
}

/** Exactly the JSON of the `health` query's full selection; GET /health serves it as is. */
export interface HealthReport {
  status: HealthStatus;
  version: string;
  uptimeSeconds: number;
  checks: HealthCheck[];
}

export interface HealthMonitorOptions {
  db: Database;
  version: string;
  logger: Logger;
  /** Subgraphs to probe, by name (the health subgraph itself is not one of them). */
  subgraphUrls: () => Record<string, string>;
  redis?: { ping(): Promise<unknown> };
  maxLagBlocks: number;
  maxStalenessSeconds: number;
  /** Reports are reused for this long, so a flood of /health costs one probe round. */
  cacheMs?: number;
  probeTimeoutMs?: number;
}

async function timed(name: string, probe: () => Promise<string | null | void>, failure: HealthStatus): Promise<HealthCheck> {
  const started = performance.now();
  try {
    const detail = await probe();
    return { name, status: "OK", latencyMs: round(performance.now() - started), detail: detail ?? null };
  } catch (error) {
    // Only the kind of failure is reported: never a connection string, host or stack.
    return { name, status: failure, latencyMs: round(performance.now() - started), detail: failureDetail(error) };
  }
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}

function failureDetail(error: unknown): string {
  if (error instanceof DOMException && error.name === "TimeoutError") return "timed out";
  if (error instanceof ProbeFailure) return error.message;
  return "unreachable";
}

class ProbeFailure extends Error {}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => setTimeout(() => reject(new DOMException("timed out", "TimeoutError")), ms).unref()),
  ]);
}

export function createHealthMonitor(options: HealthMonitorOptions) {
  const startedAt = Date.now();
  const timeoutMs = options.probeTimeoutMs ?? 2000;
  let cached: { at: number; report: Promise<HealthReport> } | undefined;
  const localSources: (() => HealthCheck[])[] = [];

  async function probeSubgraph(url: string): Promise<void> {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query: "{ __typename }" }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!response.ok) throw new ProbeFailure(`HTTP ${response.status}`);
    await response.arrayBuffer();
  }

  async function indexerChecks(): Promise<HealthCheck[]> {
    const networks = await withTimeout(
      options.db.prisma.network.findMany({ select: { name: true, cursor: true }, orderBy: { chainId: "asc" } }),
      timeoutMs,
    );
    return networks.map(({ name, cursor }): HealthCheck => {
      const check = (status: HealthStatus, detail: string): HealthCheck => ({ name: `indexer:${name}`, status, latencyMs: null, detail });
      if (!cursor) return check("DEGRADED", "not indexed yet");
      const lag = cursor.headBlock > cursor.indexedBlock ? cursor.headBlock - cursor.indexedBlock : 0n;
      const staleSeconds = Math.floor((Date.now() - cursor.updatedAt.getTime()) / 1000);
      const summary = `lag ${lag} blocks, last write ${staleSeconds}s ago`;
      if (!cursor.isReady) return check("DEGRADED", `backfilling: ${summary}`);
      if (lag > BigInt(options.maxLagBlocks)) return check("DEGRADED", `behind the head: ${summary}`);
      if (staleSeconds > options.maxStalenessSeconds) return check("DEGRADED", `stale: ${summary}`);
      return check("OK", summary);
    });
  }

  async function build(): Promise<HealthReport> {
    const subgraphs = Object.entries(options.subgraphUrls());
    const [database, redis, ...subgraphChecks] = await Promise.all([
      timed("database", async () => void (await withTimeout(options.db.ping(), timeoutMs)), "DOWN"),
      options.redis ? timed("redis", async () => void (await withTimeout(options.redis!.ping(), timeoutMs)), "DEGRADED") : undefined,
      ...subgraphs.map(([name, url]) => timed(`subgraph:${name}`, () => probeSubgraph(url), "DOWN")),
    ]);
    const indexers = database!.status === "OK"
      ? await indexerChecks().catch((): HealthCheck[] => [{ name: "indexer", status: "DEGRADED", latencyMs: null, detail: "unreadable" }])
      : [];
    const checks = [database!, ...(redis ? [redis] : []), ...subgraphChecks, ...indexers, ...localSources.flatMap((source) => source())];
    const allSubgraphsDown = subgraphChecks.length > 0 && subgraphChecks.every((c) => c.status === "DOWN");
    const status: HealthStatus = database!.status === "DOWN" || allSubgraphsDown
      ? "DOWN"
      : checks.some((c) => c.status !== "OK") ? "DEGRADED" : "OK";
    return { status, version: options.version, uptimeSeconds: Math.floor((Date.now() - startedAt) / 1000), checks };
  }

  return {
    /**
     * Adds checks of something running in this process that starts after the gateway, e.g. the
     * Socket.IO tier on the API host. A DEGRADED local check degrades the report; none makes it DOWN.
     */
    addChecks(source: () => HealthCheck[]): void {
      localSources.push(source);
      cached = undefined;
    },
    report(): Promise<HealthReport> {
      const now = Date.now();
      if (!cached || now - cached.at >= (options.cacheMs ?? 1000)) {
        cached = { at: now, report: build() };
      }
      return cached.report;
    },
  };
}

export type HealthMonitor = ReturnType<typeof createHealthMonitor>;
