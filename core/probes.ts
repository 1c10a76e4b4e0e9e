// Liveness and readiness of every long-running process (gateway, subgraphs, realtime nodes,
// publishers, the indexer, `npm start`): two routes beside /health, for orchestrators.
//
//   GET /livez   200 while the process answers at all (its event loop runs): restart it otherwise.
//   GET /readyz  200 when this process can serve correct answers now, 503 otherwise, the reasons in
//                the body: take it out of rotation until it is back, do not restart it.
//
// What decides readiness is each process's own (its database, for a gateway its subgraphs, for a
// realtime node its feed); what is shared by every replica and does not make an answer wrong (a
// lagging or backfilling indexer) is shown in the body but never pulls a replica out: it would pull
// them all out at once. `?backfilled=all` (or `?backfilled=<chainId>,…`) asks more: ready only once
// those networks finished their backfill, for a blue/green deployment that waits for a fresh
// database before it takes traffic (docs/reference/health.md).
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Database } from "./db.ts";
import type { HealthCheck } from "./health.ts";
import { sendJson, type RouteHandler } from "./http.ts";

export const LIVEZ_PATH = "/livez";
export const READYZ_PATH = "/readyz";

export interface ReadinessReport {
  status: "READY" | "NOT_READY";
  /** Why this process is not ready, one line per failing condition ("database: unreachable"); empty when ready. */
  reasons: string[];
  /** Every check, including those that never decide readiness (e.g. `indexer:<network>`). */
  checks: HealthCheck[];
}

/** What a process reports: its checks, and which of them (by their failures) keep it out of rotation. */
export interface Readiness {
  checks: HealthCheck[];
  reasons: string[];
}

/** A check's failure as a reason line: "name: detail". */
export function reasonOf(check: HealthCheck): string {
  return check.detail ? `${check.name}: ${check.detail}` : `${check.name}: ${check.status}`;
}

/** The database check every process runs: DOWN when it does not answer within `timeoutMs`. Details name the kind of failure only. */
export async function databaseCheck(db: Pick<Database, "ping">, timeoutMs = 2_000): Promise<HealthCheck> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<"timed out">((resolve) => {
    timer = setTimeout(() => resolve("timed out"), timeoutMs);
  });
  const outcome = await Promise.race([
    db.ping().then(
      () => "ok" as const,
      () => "unreachable" as const,
    ),
    timeout,
  ]);
  clearTimeout(timer);
  const latencyMs = Math.round((performance.now() - started) * 100) / 100;
  return { name: "database", status: outcome === "ok" ? "OK" : "DOWN", latencyMs, detail: outcome === "ok" ? null : outcome };
}

/** The networks `?backfilled=` names: every network, or these chain ids; undefined when not asked. */
export type BackfillWanted = "all" | bigint[];

/** Parses `?backfilled=`; throws a RangeError naming the problem. */
export function backfillWantedOf(url: URL): BackfillWanted | undefined {
  const given = url.searchParams.get("backfilled");
  if (given === null) return undefined;
  if (given === "all") return "all";
  const parts = given.split(",");
  if (parts.length === 0 || parts.some((part) => !/^[1-9][0-9]{0,18}$/.test(part)))
    throw new RangeError("backfilled: `all` or a comma-separated list of chain ids");
  return parts.map((part) => BigInt(part));
}

/**
 * `backfill:<network>` checks of the wanted networks: OK once the indexer finished the network's
 * backfill (its cursor is ready), else DOWN saying why. A wanted chain id the database does not know
 * yet is not backfilled either; so is `all` while no network is indexed.
 */
export async function backfillChecks(db: Database, wanted: BackfillWanted): Promise<HealthCheck[]> {
  const networks = await db.prisma.network.findMany({
    select: { chainId: true, name: true, cursor: { select: { isReady: true } } },
    orderBy: { chainId: "asc" },
  });
  const check = (name: string, detail: string | null): HealthCheck => ({ name: `backfill:${name}`, status: detail ? "DOWN" : "OK", latencyMs: null, detail });
  if (wanted === "all") {
    if (networks.length === 0) return [check("all", "no network indexed yet")];
    return networks.map((n) => check(n.name, n.cursor?.isReady ? null : n.cursor ? "backfilling" : "not indexed yet"));
  }
  return wanted.map((chainId) => {
    const network = networks.find((n) => n.chainId === chainId);
    if (!network) return check(String(chainId), "not indexed yet");
    return check(network.name, network.cursor?.isReady ? null : network.cursor ? "backfilling" : "not indexed yet");
  });
}

/** GET /livez: the process answers. Nothing is checked: a process that cannot answer this is restarted. */
export const livezRoute: RouteHandler = (_req, res) => {
  sendJson(res, 200, { status: "ALIVE", uptimeSeconds: Math.floor(process.uptime()) }, { "cache-control": "no-store" });
};

/**
 * GET /readyz from a process's readiness; `db`, when the process has one, answers `?backfilled=`.
 * 200 `READY` / 503 `NOT_READY` with the reasons; 400 for a malformed `backfilled`.
 */
export function readyzRoute(readiness: () => Promise<Readiness>, db?: Database): RouteHandler {
  return async (req: IncomingMessage, res: ServerResponse) => {
    let wanted: BackfillWanted | undefined;
    try {
      wanted = backfillWantedOf(new URL(req.url ?? "/", "http://localhost"));
    } catch (error) {
      sendJson(res, 400, { error: error instanceof Error ? error.message : String(error) }, { "cache-control": "no-store" });
      return;
    }
    const report = await readinessReport(readiness, wanted && db ? { db, wanted } : undefined);
    sendJson(res, report.status === "READY" ? 200 : 503, report, { "cache-control": "no-store" });
  };
}

/** The report /readyz answers: the process's readiness, plus the wanted networks' backfill when asked. */
export async function readinessReport(readiness: () => Promise<Readiness>, backfill?: { db: Database; wanted: BackfillWanted }): Promise<ReadinessReport> {
  const own = await readiness().catch((): Readiness => {
    const failed: HealthCheck = { name: "readiness", status: "DOWN", latencyMs: null, detail: "the checks failed" };
    return { checks: [failed], reasons: [reasonOf(failed)] };
  });
  const checks = [...own.checks];
  const reasons = [...own.reasons];
  if (backfill) {
    const backfilled = await backfillChecks(backfill.db, backfill.wanted).catch((): HealthCheck[] => [
      { name: "backfill", status: "DOWN", latencyMs: null, detail: "unreadable" },
    ]);
    checks.push(...backfilled);
    reasons.push(...backfilled.filter((check) => check.status !== "OK").map(reasonOf));
  }
  return { status: reasons.length === 0 ? "READY" : "NOT_READY", reasons, checks };
}

/** Both routes, keyed by path, for a process's route table. A readiness is reused for `cacheMs`, so a flood of probes costs one round of checks. */
export function probeRoutes(readiness: () => Promise<Readiness>, db?: Database, cacheMs = 1_000): Record<string, RouteHandler> {
  let cached: { at: number; readiness: Promise<Readiness> } | undefined;
  const reused = () => {
    const now = Date.now();
    if (!cached || now - cached.at >= cacheMs) cached = { at: now, readiness: readiness() };
    return cached.readiness;
  };
  return { [LIVEZ_PATH]: livezRoute, [READYZ_PATH]: readyzRoute(reused, db) };
}
