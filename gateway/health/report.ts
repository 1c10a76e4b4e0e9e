import { finalizedBlockAt } from "../../core/finality.ts";
import { backfillPercent, backfillRatio, backfillStartBlock } from "../../core/backfill.ts";
import type { Database } from "../../core/db.ts";
import { overallStatus, type HealthCheck, type HealthReport, type HealthStatus } from "../../core/health.ts";
import type { Logger } from "../../core/logger.ts";
import { RedisUnavailableError } from "../../core/redis.ts";

export interface HealthMonitorOptions {
  db: Database;
  version: string;
  logger: Logger;
  /** Subgraphs to probe, by name (the health subgraph itself is not one of them). */
  subgraphUrls: () => Record<string, string>;
  /** The gateway's Redis: a GuardedRedis answers at once while its users already know Redis is away. */
  redis?: { ping(): Promise<unknown> };
  maxLagBlocks: number;
  maxStalenessSeconds: number;
  /** Reports are reused for this long, so a flood of /health costs one probe round. */
  cacheMs?: number;
  probeTimeoutMs?: number;
}

async function timed(name: string, probe: () => Promise<string | null | undefined>, failure: HealthStatus): Promise<HealthCheck> {
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
  if (error instanceof RedisUnavailableError) return error.failure;
  return "unreachable";
}

class ProbeFailure extends Error {}

/** "block 250 of 1000 (25.0%)": the indexed block, the finalized block backfill runs to, and the share done. */
function backfillPosition(indexed: bigint, target: bigint, deployBlock: bigint): string {
  const ratio = backfillRatio({ startBlock: backfillStartBlock(deployBlock), targetBlock: target, indexedBlock: indexed });
  return `block ${indexed} of ${target > indexed ? target : indexed} (${backfillPercent(ratio)}%)`;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return Promise.race([promise, new Promise<T>((_, reject) => setTimeout(() => reject(new DOMException("timed out", "TimeoutError")), ms).unref())]);
}

export function createHealthMonitor(options: HealthMonitorOptions) {
  const startedAt = Date.now();
  const timeoutMs = options.probeTimeoutMs ?? 2000;
  let cached: { at: number; report: Promise<HealthReport> } | undefined;
  const localSources: (() => HealthCheck[])[] = [];

  async function probeSubgraph(url: string): Promise<null> {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query: "{ __typename }" }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!response.ok) throw new ProbeFailure(`HTTP ${response.status}`);
    await response.arrayBuffer();
    return null;
  }

  async function indexerChecks(): Promise<HealthCheck[]> {
    const networks = await withTimeout(
      options.db.prisma.network.findMany({
        select: { name: true, confirmations: true, cursor: true, contracts: { where: { name: "BetVault" }, select: { deployBlock: true } } },
        orderBy: { chainId: "asc" },
      }),
      timeoutMs,
    );
    return networks.flatMap(({ name, confirmations, cursor, contracts }) => {
      const indexer = indexerCheck(name, confirmations, cursor, contracts);
      // Only when it has something to say: the chain's verifier accepted proofs the served key rejects.
      const rejected = cursor?.rejectedProofs ?? 0;
      if (rejected === 0) return [indexer];
      const detail = `${rejected} settled proof${rejected === 1 ? "" : "s"} accepted on chain fail under the served verification key: the key or the verifier is wrong`;
      return [indexer, { name: `verifier:${name}`, status: "DEGRADED" as const, latencyMs: null, detail }];
    });
  }

  function indexerCheck(
    name: string,
    confirmations: number,
    cursor: { headBlock: bigint; indexedBlock: bigint; updatedAt: Date; isReady: boolean; resets: number } | null,
    contracts: { deployBlock: bigint }[],
  ): HealthCheck {
    const check = (status: HealthStatus, detail: string): HealthCheck => ({ name: `indexer:${name}`, status, latencyMs: null, detail });
    if (!cursor) return check("DEGRADED", "not indexed yet");
    const lag = cursor.headBlock > cursor.indexedBlock ? cursor.headBlock - cursor.indexedBlock : 0n;
    const staleSeconds = Math.floor((Date.now() - cursor.updatedAt.getTime()) / 1000);
    const summary = `lag ${lag} blocks, last write ${staleSeconds}s ago`;
    if (!cursor.isReady) {
      const deployBlock = contracts[0]?.deployBlock ?? 0n;
      // After a reset (a redeployed contract, a chain that lost the indexed history, a changed
      // verification key) the backfill is a re-index: say so; the indexer's log line says which.
      const what = cursor.resets > 0 ? `re-indexing after reset ${cursor.resets} (the indexer's log says why)` : "backfilling";
      return check("DEGRADED", `${what}: ${backfillPosition(cursor.indexedBlock, finalizedBlockAt(cursor.headBlock, confirmations), deployBlock)}, ${summary}`);
    }
    if (lag > BigInt(options.maxLagBlocks)) return check("DEGRADED", `behind the head: ${summary}`);
    if (staleSeconds > options.maxStalenessSeconds) return check("DEGRADED", `stale: ${summary}`);
    return check("OK", summary);
  }

  async function build(): Promise<HealthReport> {
    const subgraphs = Object.entries(options.subgraphUrls());
    const [database, redis, ...subgraphChecks] = await Promise.all([
      timed(
        "database",
        async () => {
          await withTimeout(options.db.ping(), timeoutMs);
          return null;
        },
        "DOWN",
      ),
      options.redis
        ? timed(
            "redis",
            async () => {
              await withTimeout(options.redis!.ping(), timeoutMs);
              return null;
            },
            "DEGRADED",
          )
        : undefined,
      ...subgraphs.map(([name, url]) => timed(`subgraph:${name}`, () => probeSubgraph(url), "DOWN")),
    ]);
    const indexers =
      database!.status === "OK"
        ? await indexerChecks().catch((): HealthCheck[] => [{ name: "indexer", status: "DEGRADED", latencyMs: null, detail: "unreadable" }])
        : [];
    const checks = [database!, ...(redis ? [redis] : []), ...subgraphChecks, ...indexers, ...localSources.flatMap((source) => source())];
    // DOWN without the database or without every subgraph; one subgraph down only degrades.
    return {
      status: overallStatus(checks, [[database!], subgraphChecks]),
      version: options.version,
      uptimeSeconds: Math.floor((Date.now() - startedAt) / 1000),
      checks,
    };
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
