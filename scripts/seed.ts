// npm run db:seed -- --bets N [--seed S] [--wallets W] [--whale-share 0.5] [--proven-limit P] [--no-outbox] [--reset]
// Fills the configured database (DATABASE_URL, else the embedded one in DATA_DIR) with the
// deterministic fixture set. New proofs are added to the committed cache fixtures/proofs.json.
// Progress goes to stdout: a bar redrawn in place on a terminal, a plain line every 10 % otherwise.
import { parseArgs } from "node:util";
import { loadConfig } from "../core/config.ts";
import { createLogger } from "../core/logger.ts";
import { clearBetUpdates } from "../core/outbox.ts";
import { readProofCache, writeProofCache } from "../fixtures/proof-cache.ts";
import { seedFixtures } from "../fixtures/seed.ts";
import { createProgressDisplay } from "./progress-bar.ts";
import { releaseProverResources } from "../zk/groth16.ts";
import { openConfiguredDatabase } from "../bin/wiring.ts";

const { values } = parseArgs({
  options: {
    bets: { type: "string", default: "120" },
    seed: { type: "string", default: "1" },
    wallets: { type: "string", default: "12" },
    "whale-share": { type: "string", default: "0.3" },
    "proven-limit": { type: "string", default: "200" },
    "no-outbox": { type: "boolean", default: false },
    reset: { type: "boolean", default: false },
  },
});

const config = loadConfig(["shared"]);
const logger = createLogger({ name: "seed", level: config.LOG_LEVEL });
const db = await openConfiguredDatabase(config, logger);
try {
  if (values.reset) {
    await db.prisma.$transaction(async (tx) => {
      await clearBetUpdates(tx);
      await tx.$executeRawUnsafe(`TRUNCATE "BetResult", "Bet", "IndexingCursor", "Contract", "Network" RESTART IDENTITY CASCADE`);
    });
  } else if ((await db.prisma.network.count()) > 0) {
    throw new Error("the database already holds networks: pass --reset to replace them with the fixture set");
  }
  const cache = readProofCache();
  const started = performance.now();
  const display = createProgressDisplay({ tty: process.stdout.isTTY === true, write: (text) => process.stdout.write(text) });
  const summary = await seedFixtures(db, {
    bets: Number(values.bets),
    seed: Number(values.seed),
    wallets: Number(values.wallets),
    whaleShare: Number(values["whale-share"]),
    provenLimit: Number(values["proven-limit"]),
    proofCache: cache,
    ...(values["no-outbox"] ? { outbox: false } : {}),
    onProgress: (step) => display.update(step),
  });
  display.end();
  if (summary.provedNow > 0) writeProofCache(cache);
  logger.info({ ...summary, networks: undefined, wallets: summary.wallets.length, ms: Math.round(performance.now() - started) }, "fixtures seeded");
} finally {
  await db.close();
  await releaseProverResources();
}
