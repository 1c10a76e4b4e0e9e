/**
 * Local bet traffic: starts anvil (or uses --rpc-url), deploys Groth16Verifier + BetVault with DEV
 * keys (or uses --bet-vault), and runs the operator simulator until Ctrl-C or --duration.
 * Prints structured JSON (pino) lines; no server seed is ever printed.
 *
 *   tsx scripts/simulate.ts [--port 8545] [--block-time <s>] [--chain-id 31337]
 *       [--seed 1] [--settle-ratio 0.8] [--bets-per-step 4] [--interval-ms 1000]
 *       [--settle-timeout 30] [--duration <s>] [--deployment-file <path.json>]
 *       [--rpc-url <url> [--bet-vault <address>]]
 */
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { getAddress, type Address } from "viem";
import { loadConfig } from "../core/config.ts";
import { createLogger } from "../core/logger.ts";
import { releaseProverResources } from "../zk/groth16.ts";
import { startAnvil, type AnvilInstance } from "../chain/anvil.ts";
import { fetchChainId } from "../chain/clients.ts";
import { deployBetSystem } from "../chain/deploy.ts";
import { DEV_OPERATOR_KEY, DEV_PLAYER_KEYS } from "../chain/devAccounts.ts";
import { createSimulator } from "../chain/simulator.ts";

const { values } = parseArgs({
  options: {
    port: { type: "string", default: "8545" },
    "block-time": { type: "string" },
    "chain-id": { type: "string", default: "31337" },
    seed: { type: "string", default: "1" },
    "settle-ratio": { type: "string", default: "0.8" },
    "bets-per-step": { type: "string", default: "4" },
    "interval-ms": { type: "string", default: "1000" },
    "settle-timeout": { type: "string", default: "30" },
    duration: { type: "string" },
    "deployment-file": { type: "string" },
    "rpc-url": { type: "string" },
    "bet-vault": { type: "string" },
  },
});

const log = createLogger({ name: "chain-simulator", level: loadConfig(["shared"]).LOG_LEVEL });
const num = (name: keyof typeof values): number => {
  const raw = values[name];
  const n = Number(raw);
  if (typeof raw !== "string" || !Number.isFinite(n)) throw new Error(`--${name} must be a number`);
  return n;
};

let anvil: AnvilInstance | undefined;
let rpcUrl = values["rpc-url"];
if (!rpcUrl) {
  const t = performance.now();
  anvil = await startAnvil({
    port: num("port"),
    chainId: num("chain-id"),
    ...(values["block-time"] ? { blockTime: num("block-time") } : {}),
  });
  rpcUrl = anvil.rpcUrl;
  log.info({ event: "anvil_started", rpcUrl, wsUrl: anvil.wsUrl, chainId: anvil.chainId, pid: anvil.pid, ms: Math.round(performance.now() - t) });
}
const chainId = await fetchChainId(rpcUrl);

let betVault: Address;
if (values["bet-vault"]) {
  betVault = getAddress(values["bet-vault"]);
  log.info({ event: "using_deployment", rpcUrl, chainId, betVault });
} else {
  const t = performance.now();
  const sys = await deployBetSystem({ rpcUrl, chainId, settleTimeoutSeconds: num("settle-timeout") });
  betVault = sys.betVault;
  const deployment = {
    chainId,
    rpcUrl,
    betVault: sys.betVault.toLowerCase(),
    verifier: sys.verifier.toLowerCase(),
    deployBlock: sys.deployBlock.toString(),
    settleTimeoutSeconds: sys.settleTimeoutSeconds,
    operator: sys.operator.address.toLowerCase(),
  };
  log.info({ event: "deployed", ...deployment, ms: Math.round(performance.now() - t), devKeys: true });
  if (values["deployment-file"]) writeFileSync(values["deployment-file"], `${JSON.stringify(deployment, null, 2)}\n`);
}

const sim = createSimulator({
  rpcUrl,
  chainId,
  betVault,
  operator: DEV_OPERATOR_KEY,
  players: DEV_PLAYER_KEYS,
  seed: values.seed ?? "1",
  settleRatio: num("settle-ratio"),
  betsPerStep: num("bets-per-step"),
  intervalMs: num("interval-ms"),
  logger: log,
});

let stopping = false;
async function shutdown(reason: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  await sim.stop();
  log.info({ event: "stopped", reason, stats: sim.stats() });
  await releaseProverResources();
  await anvil?.stop();
  process.exit(0);
}
process.on("SIGINT", () => void shutdown("SIGINT"));
process.on("SIGTERM", () => void shutdown("SIGTERM"));

sim.start();
log.info({ event: "simulator_started", betVault, settleRatio: num("settle-ratio"), betsPerStep: num("bets-per-step") });
if (values.duration) setTimeout(() => void shutdown("duration"), num("duration") * 1000);
