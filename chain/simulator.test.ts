// The operator simulator against a real anvil with real proofs: all three bet states appear within a
// bounded time, the chain agrees with the simulator, and no server seed reaches the logs.
import { Writable } from "node:stream";
import { pino } from "pino";
import { parseEventLogs } from "viem";
import { afterAll, beforeAll, expect, it } from "vitest";
import * as zk from "../zk/groth16.ts";
import { startAnvil, type AnvilInstance } from "./anvil.ts";
import { betResult } from "./betvault.ts";
import { localChain, publicClientFor } from "./clients.ts";
import { deployBetSystem, type BetSystem } from "./deploy.ts";
import { DEV_PLAYER_KEYS } from "./devAccounts.ts";
import { betVaultAbi } from "./generated/artifacts.ts";
import { createSimulator, type BetProver } from "./simulator.ts";

let anvil: AnvilInstance;
let sys: BetSystem;

beforeAll(async () => {
  anvil = await startAnvil();
  sys = await deployBetSystem({ rpcUrl: anvil.rpcUrl, settleTimeoutSeconds: 2 });
});

afterAll(async () => {
  await zk.releaseProverResources();
  await anvil?.stop();
});

it("produces PENDING, SETTLED and REFUNDED bets within a bounded time, consistent with the chain", async () => {
  // Test-only spy: remembers the seeds it is asked to prove with, to check none is ever logged.
  const seen: bigint[] = [];
  const prover: BetProver = {
    serverSeedCommitment: zk.serverSeedCommitment,
    proveBetOutcome: (input) => {
      seen.push(input.serverSeed);
      return zk.proveBetOutcome(input);
    },
  };
  let logText = "";
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      logText += chunk.toString("utf8");
      done();
    },
  });
  const sim = createSimulator({
    rpcUrl: anvil.rpcUrl,
    betVault: sys.betVault,
    operator: sys.operator.privateKey,
    players: DEV_PLAYER_KEYS.slice(0, 6),
    seed: "simulator-test",
    settleRatio: 0.6,
    betsPerStep: 4,
    commitmentBatch: 8,
    intervalMs: 100,
    prover,
    logger: pino({ level: "debug" }, sink),
  });

  const started = Date.now();
  // The background loop (what scripts/simulate.ts runs) for a couple of steps...
  sim.start();
  while (sim.stats().steps < 2 && Date.now() - started < 20_000) await new Promise((r) => setTimeout(r, 50));
  await sim.stop();
  // ...then explicit steps until all three states coexist. Bets expire 2 s after placement.
  for (;;) {
    const s = sim.stats();
    if (s.settled > 0 && s.refunded > 0 && s.pending > 0) break;
    if (Date.now() - started > 40_000) throw new Error(`not all states after 40 s: ${JSON.stringify(s)}`);
    await sim.step();
    await new Promise((r) => setTimeout(r, 100));
  }
  const stats = sim.stats();
  expect(stats.settled).toBeGreaterThan(0);
  expect(stats.refunded).toBeGreaterThan(0);
  expect(stats.pending).toBeGreaterThan(0);
  expect(stats.placed).toBe(stats.settled + stats.refunded + stats.pending);
  expect(stats.failed).toBe(0);
  expect(stats.commitmentsPublished).toBeGreaterThanOrEqual(stats.placed);

  // The chain agrees with what the simulator reports.
  const pub = publicClientFor(localChain(anvil.chainId, anvil.rpcUrl), anvil.rpcUrl);
  const logs = await pub.getLogs({ address: sys.betVault, fromBlock: sys.deployBlock, toBlock: "latest" });
  const events = parseEventLogs({ abi: betVaultAbi, logs });
  const placed = events.filter((e) => e.eventName === "BetPlaced");
  const settled = events.filter((e) => e.eventName === "BetSettled");
  const refunded = events.filter((e) => e.eventName === "BetRefunded");
  expect(placed.map((e) => e.args.betId)).toEqual(placed.map((_, i) => BigInt(i + 1)));
  expect(placed.length).toBe(stats.placed);
  expect(settled.length).toBe(stats.settled);
  expect(refunded.length).toBe(stats.refunded);
  const games = new Set(placed.map((e) => e.args.game));
  expect(games.size).toBeGreaterThan(1);
  for (const bet of sim.bets().values()) {
    const onchain = await pub.readContract({ address: sys.betVault, abi: betVaultAbi, functionName: "getBet", args: [bet.betId] });
    expect(["NONE", "PENDING", "SETTLED", "REFUNDED"][onchain.status]).toBe(bet.state);
    if (bet.state === "SETTLED") {
      const ev = settled.find((e) => e.args.betId === bet.betId);
      expect(ev?.args.outcome).toBe(bet.outcome);
      expect({ won: ev?.args.won, payout: ev?.args.payout }).toEqual(betResult(bet.game, bet.outcome ?? 0n, bet.stake));
    }
  }

  // Structured progress was logged, and no server seed (decimal or hex) appears in it.
  expect(logText).toContain('"event":"step"');
  expect(seen.length).toBe(stats.settled);
  for (const seed of seen) {
    expect(logText).not.toContain(seed.toString(10));
    expect(logText.toLowerCase()).not.toContain(seed.toString(16));
  }
  console.log(
    `simulator: ${stats.placed} bets in ${stats.elapsedMs} ms (${stats.betsPerSecond.toFixed(2)} bets/s), ` +
      `${stats.settled} settled, ${stats.refunded} refunded, ${stats.pending} pending, avg proof ${Math.round(stats.avgProofMs)} ms`,
  );
});
