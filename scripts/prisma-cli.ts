// Runs the Prisma CLI with the offline schema engine (prisma/engine/schema-engine.mjs) unless
// PRISMA_SCHEMA_ENGINE_BINARY is already set (e.g. to a native engine), so that every command —
// generate, migrate dev/diff/deploy/status/reset, db push/execute — works without internet.
// PRISMA_OFFLINE_ENGINE=0 leaves the variable alone: the CLI then downloads the native engine.
//
//   tsx scripts/prisma-cli.ts migrate status
//   tsx scripts/prisma-cli.ts migrate dev --create-only --name add_x
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { loadConfig } from "../core/config.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
const shim = fileURLToPath(new URL("../prisma/engine/schema-engine.mjs", import.meta.url));
const cli = fileURLToPath(new URL("../node_modules/prisma/build/index.js", import.meta.url));

/** The environment the Prisma CLI should run with (exported for tests and tools). */
export function prismaEnv(base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env = { ...base };
  if (!env.PRISMA_SCHEMA_ENGINE_BINARY && loadConfig(["tooling"], env).PRISMA_OFFLINE_ENGINE) env.PRISMA_SCHEMA_ENGINE_BINARY = shim;
  // No telemetry/update pings: they only time out here.
  env.CHECKPOINT_DISABLE ??= "1";
  env.PRISMA_HIDE_UPDATE_MESSAGE ??= "1";
  return env;
}

export const prismaCliPath = cli;
export const repoRoot = root;

function main(): void {
  const child = spawn(process.execPath, [cli, ...process.argv.slice(2)], {
    stdio: "inherit",
    env: prismaEnv(),
  });
  const forward = (signal: NodeJS.Signals): void => {
    child.kill(signal);
  };
  process.on("SIGINT", forward);
  process.on("SIGTERM", forward);
  child.on("exit", (code, signal) => {
    if (signal) process.kill(process.pid, signal);
    else process.exit(code ?? 1);
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) main();
