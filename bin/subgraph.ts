// One subgraph as its own process: `tsx bin/subgraph.ts <name>`, a name of subgraphs/registry.ts.
// Reads the shared configuration (HOST:PORT, the database), listens, stops on signals.
import { loadConfig } from "../core/config.ts";
import { createLogger } from "../core/logger.ts";
import { SUBGRAPHS, subgraphNamed } from "../subgraphs/registry.ts";
import { cursorSecretProblem, openConfiguredDatabase, openReadReplicas, startConfiguredTracing, stopOnSignals, subgraphDeps } from "./wiring.ts";

const name = process.argv[2] ?? "";
const entry = subgraphNamed(name);
if (!entry) {
  process.stderr.write(`usage: tsx bin/subgraph.ts <${SUBGRAPHS.map((s) => s.name).join("|")}> (got ${JSON.stringify(name)})\n`);
  process.exit(2);
}

const config = loadConfig(["shared"]);
const secretProblem = entry.name === "history" ? cursorSecretProblem(config) : undefined;
if (secretProblem) {
  process.stderr.write(`${secretProblem}\n`);
  process.exit(1);
}
const logger = createLogger({ name: entry.name, level: config.LOG_LEVEL });
const tracing = await startConfiguredTracing(config, `subgraph-${entry.name}`);
const db = await openConfiguredDatabase(config, logger, { migrate: false, statementTimeout: true });
const reads = await openReadReplicas(config, db, logger);
const subgraph = (await entry.load())(subgraphDeps(db, logger, config, reads));
await subgraph.listen(config.HOST, config.PORT);
stopOnSignals(logger, async () => {
  await subgraph.stop();
  await reads?.close();
  await db.close();
  await tracing.stop();
});
