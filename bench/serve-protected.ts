// The stack under attack, in its own process (started by bench/abuse.ts): the three subgraphs and
// the gateway on free loopback ports WITH the contract's default protection — query limits (depth
// 8, aliases 30, cost 5000) and the per-client rate limit (300 requests per 10 s, in-process token
// buckets) — and TRUST_PROXY_HOPS=1, so the last X-Forwarded-For entry names the client and one
// load generator can act as many clients. (bench/serve.ts turns the rate limit off on purpose.)
//
// Database: BENCH_SERVE_DATABASE_URL (PostgreSQL) or, when unset, PGlite in memory in this process.
// BENCH_SERVE_MODE:
//   seed         migrate and seed the (fresh, empty) PostgreSQL database, print { seeded }, exit —
//                so the serving process never loads the seeding code (prover, verifier);
//   serve        serve a database a `seed` run filled;
//   seed+serve   both in one process (the default, and the only way with PGlite in memory).
// Seeding writes the deterministic fixture set: BENCH_SERVE_BETS bets (default 2000).
//
// Serving prints one JSON line on stdout — { pid, database, gateway, subgraphs, protection,
// fixtures } — and stops on SIGTERM/SIGINT, and with BENCH_SERVE_WATCH_STDIN=1 also when its stdin
// ends (the parent died), so it never outlives the benchmark. Logs (warn and above) go to stderr.
// bench/abuse.ts also sets APOLLO_TELEMETRY_DISABLED=true, keeping @apollo/gateway off the network.
import { pino } from "pino";
import { gatewayProtection, stopOnSignals } from "../bin/wiring.ts";
import { loadConfig } from "../core/config.ts";
import { openDatabase, type Database } from "../core/db.ts";
import { benchConfig, startBenchStack } from "./common.ts";

const url = benchConfig.BENCH_SERVE_DATABASE_URL;
const mode = benchConfig.BENCH_SERVE_MODE;
const bets = benchConfig.BENCH_SERVE_BETS;
function fail(message: string): never {
  process.stderr.write(`bench/serve-protected.ts: ${message}\n`);
  process.exit(2);
}
if (!url && mode !== "seed+serve") fail("PGlite in memory lives only as long as this process: use BENCH_SERVE_MODE=seed+serve");

const logger = pino({ name: "bench-serve-protected", level: benchConfig.BENCH_LOG_LEVEL ?? "warn" }, pino.destination(2));
const seeding = mode !== "serve";
const db: Database = url
  ? await openDatabase({ url, logger, migrate: seeding })
  : await openDatabase({ pglite: await (await import("../test/db.ts")).createTestPglite(), logger });

if (seeding) {
  // Imported only here: the seeding code pulls in the prover and verifier, which serving never needs.
  const { seedFixtures } = await import("../fixtures/seed.ts");
  const { readProofCache } = await import("../fixtures/proof-cache.ts");
  // provenLimit 0: every settled bet carries a real proof from the committed cache (same payload
  // size as a proven one) stored as verified: false, so seeding never runs the prover.
  await seedFixtures(db, { bets, provenLimit: 0, outbox: false, proofCache: readProofCache() });
  if (db.kind === "postgres") await db.prisma.$executeRawUnsafe("ANALYZE");
  if (mode === "seed") {
    await db.close();
    process.stdout.write(`${JSON.stringify({ seeded: bets })}\n`);
    process.exit(0);
  }
}

// What the load generators need, read back from the database (the same whichever process seeded).
const counts = Object.fromEntries((await db.prisma.bet.groupBy({ by: ["status"], _count: { _all: true } })).map((g) => [g.status, g._count._all]));
const players = await db.prisma.bet.groupBy({ by: ["player"], _count: { _all: true }, orderBy: { _count: { player: "desc" } } });
const settled = await db.prisma.bet.findMany({
  where: { status: "SETTLED" },
  select: { chainId: true, betId: true },
  orderBy: [{ chainId: "asc" }, { betId: "asc" }],
  take: 50,
});

// The contract's defaults, whatever this shell's environment says, plus one trusted proxy hop.
const config = loadConfig(["shared", "gateway"], { TRUST_PROXY_HOPS: "1" });
const protection = gatewayProtection(config);
const stack = await startBenchStack(db, logger, { maxBodyBytes: config.MAX_BODY_BYTES, ...protection });
process.stdout.write(
  `${JSON.stringify({
    pid: process.pid,
    database: db.kind,
    gateway: `${stack.url}/graphql`,
    subgraphs: stack.subgraphUrls,
    protection: {
      limits: protection.limits,
      rateLimit: protection.rateLimit ? { ...protection.rateLimit.policy, trustProxyHops: protection.rateLimit.trustProxyHops } : null,
    },
    fixtures: {
      bets: Object.values(counts).reduce((a, b) => a + b, 0),
      counts,
      wallets: players.map((p) => p.player),
      whale: players[0]?.player,
      settled: settled.map((b) => ({ chainId: Number(b.chainId), betId: b.betId.toString() })),
    },
  })}\n`,
);
const stop = async () => {
  await stack.stop();
  await db.close();
};
stopOnSignals(logger, stop);
if (benchConfig.BENCH_SERVE_WATCH_STDIN) {
  process.stdin.resume();
  process.stdin.once("end", () => void stop().finally(() => process.exit(0)));
}
