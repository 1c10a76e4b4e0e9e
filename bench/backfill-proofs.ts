// Proofs at backfill speed: settlements that each carry their OWN genuine Groth16 proof, verified
// one by one with snarkjs (the old path) and in batches in the worker pool (zk/batch-verify.ts,
// zk/verify-pool.ts), in the same run, side by side:
//
//   - verification alone: proofs/s of snarkjs.groth16.verify one by one vs the pool;
//   - backfill: the indexer backfilling the same chain (N placements + N settlements) into a fresh
//     database, once with the one-by-one snarkjs verifier and once with the pool; settled bets/s.
//     One settlement in the range carries a tampered proof: the run fails unless exactly that one
//     is indexed `verified: false` and every other `verified: true`.
//
//   npx tsx bench/proof-cache.ts --bets 2000          # once: proves bets 1..N (~0.3 s each), cached
//   npx tsx bench/backfill-proofs.ts [--bets 2000] [--db postgres|pglite] [--workers <cores>]
//
// The chain: anvil, BetVault on a PERMISSIVE verifier (settling costs no on-chain pairing), bets
// placed by BetBatcher.placeMany from one wallet so ids and client seeds are those the cache proved
// (bench/proof-cache.ts). Fewer cached proofs than --bets: the run uses what is cached and says so.
import { availableParallelism } from "node:os";
import { parseArgs } from "node:util";
import pg from "pg";
import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  http,
  type Chain,
  type Hex,
  type JsonRpcAccount,
  type Transport,
  type WalletClient,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { sendInBlocks } from "./mine-in-blocks.ts";
import { fieldToBytes32, SETTLE_GAS, toSnarkjsProof, publicSignalsOf } from "../chain/betvault.ts";
import { localChain } from "../chain/clients.ts";
import { DEV_PRIVATE_KEYS } from "../chain/devAccounts.ts";
import { betVaultAbi } from "../chain/generated/artifacts.ts";
import { startLocalChain } from "../chain/local.ts";
import { loadConfig } from "../core/config.ts";
import { createLogger, silentLogger } from "../core/logger.ts";
import { networkFromDeployment } from "../indexer/config.ts";
import { createIndexer } from "../indexer/indexer.ts";
import type { ProofToVerify, ProofVerifier } from "../indexer/proofs.ts";
import { betBatcherAbi, deployBetBatcher, deployPermissiveVerifier } from "../test/contracts.ts";
import { createTestDatabase } from "../test/db.ts";
import { loadDevVerificationKey, releaseProverResources, serverSeedCommitment, verifyBetProof } from "../zk/groth16.ts";
import { createVerifyPool } from "../zk/verify-pool.ts";
import { clientSeedOf, PLACE_PER_TX, readProofCache, serverSeedOf } from "./proof-cache.ts";

const { values: args } = parseArgs({
  options: {
    bets: { type: "string", default: "2000" },
    db: { type: "string", default: "postgres" },
    workers: { type: "string", default: String(availableParallelism()) },
    "snarkjs-sample": { type: "string", default: "300" },
    /** `pool`: skip the one-by-one snarkjs backfill (profiling the pool's path only). */
    only: { type: "string", default: "" },
    /** Log level of the indexer (`debug`: one line per commit with its phases' milliseconds). */
    log: { type: "string", default: "silent" },
  },
});
const config = loadConfig(["test", "bench"]);
const WANTED = Number(args.bets);
const WORKERS = Number(args.workers);
const log = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);
const rate = (n: number, ms: number) => Math.round(n / (ms / 1000));
/** CPU milliseconds of this process (every thread: snarkjs's and the pool's workers included) since `from`. */
const cpuMs = (from: NodeJS.CpuUsage) => {
  const u = process.cpuUsage(from);
  return (u.user + u.system) / 1000;
};

const cached = readProofCache(WANTED);
const N = cached.length;
if (N === 0) throw new Error("no cached proofs: run `npx tsx bench/proof-cache.ts --bets <n>` first");
if (N < WANTED) log(`only ${N} of ${WANTED} proofs are cached: measuring ${N} settlements`);
// Every settlement carries its own proof: no proof may stand for two bets.
const DISTINCT = new Set(cached.map((c) => `${c.proof.pA.join(",")}|${c.proof.pC.join(",")}`)).size;
if (DISTINCT !== N) throw new Error(`the proof cache holds ${N - DISTINCT} duplicate proofs among ${N}: regenerate it`);

async function postgresReachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: config.TEST_DATABASE_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}
const dbKind = args.db === "pglite" || !(await postgresReachable()) ? "pglite" : "postgres";
process.env.TEST_DB = dbKind;

// ------------------------------------------------------------------------------ verification alone

const { key } = loadDevVerificationKey();
const items: ProofToVerify[] = cached.map((c) => ({
  proof: toSnarkjsProof(c.proof),
  publicSignals: publicSignalsOf({
    outcome: c.outcome,
    serverSeedHash: fieldToBytes32(serverSeedCommitment(serverSeedOf(c.betId))),
    betId: c.betId,
    clientSeed: clientSeedOf(c.betId),
  }),
}));
const sample = items.slice(0, Math.min(N, Number(args["snarkjs-sample"])));
await verifyBetProof(key, sample[0]?.proof, sample[0]?.publicSignals); // warm the curve
let t = performance.now();
let cpu = process.cpuUsage();
let snarkjsOk = 0;
for (const item of sample) if (await verifyBetProof(key, item.proof, item.publicSignals)) snarkjsOk++;
const snarkjsMs = performance.now() - t;
const snarkjsCpu = cpuMs(cpu);
if (snarkjsOk !== sample.length) throw new Error(`snarkjs verified ${snarkjsOk} of ${sample.length} cached proofs`);
log(`snarkjs one by one: ${sample.length} proofs in ${snarkjsMs.toFixed(0)} ms`);

const pool = createVerifyPool(key, { workers: WORKERS });
await pool.verify(items.slice(0, WORKERS * 16)); // start the workers
t = performance.now();
cpu = process.cpuUsage();
const verdicts = await pool.verify(items);
const poolMs = performance.now() - t;
const poolCpu = cpuMs(cpu);
if (verdicts.some((v) => !v)) throw new Error("the pool refused a genuine proof");
const tampered = items.map((item, i) => (i % 500 === 250 ? { ...item, publicSignals: ["1", ...item.publicSignals.slice(1)] } : item));
t = performance.now();
const tamperedVerdicts = await pool.verify(tampered);
const bisectMs = performance.now() - t;
const refused = tamperedVerdicts.filter((v) => !v).length;
if (refused !== tampered.filter((_, i) => i % 500 === 250).length) throw new Error(`bisection refused ${refused} proofs`);
await pool.close();
log(`pool (${WORKERS} workers): ${N} proofs in ${poolMs.toFixed(0)} ms; with ${refused} tampered: ${bisectMs.toFixed(0)} ms`);

// ------------------------------------------------------------------------------------- chain

const setupStart = performance.now();
const {
  anvil,
  system: sys,
  stop: stopChain,
} = await startLocalChain({
  deploy: { settleTimeoutSeconds: 3600, bankroll: 5_000n * 10n ** 18n },
  verifier: (rpcUrl) => deployPermissiveVerifier({ rpcUrl }),
});
const chain: Chain = localChain(anvil.chainId, anvil.rpcUrl);
const pub = createPublicClient({ chain, transport: http(anvil.rpcUrl), cacheTime: 0, pollingInterval: 20 });
const test = createTestClient({ mode: "anvil", chain, transport: http(anvil.rpcUrl) });
const wallet = (i: number) =>
  createWalletClient({
    chain,
    transport: http(anvil.rpcUrl),
    account: { address: privateKeyToAccount(DEV_PRIVATE_KEYS[i] as Hex).address, type: "json-rpc" },
  }) as WalletClient<Transport, Chain, JsonRpcAccount>;

interface Row {
  mode: string;
  backfillMs: number;
  cpuMs: number;
  verified: number;
}
const rows: Row[] = [];
try {
  const batcher = await deployBetBatcher({ rpcUrl: anvil.rpcUrl, betVault: sys.betVault });
  await test.setBlockGasLimit({ gasLimit: 1_000_000_000n });
  await test.setAutomine(false);
  const vault = { address: sys.betVault, abi: betVaultAbi } as const;
  const run = (txs: (() => Promise<Hex>)[], perBlock?: number) => sendInBlocks({ pub, test }, txs, perBlock);
  const ids = cached.map((c) => c.betId);
  const commitments = ids.map((id) => fieldToBytes32(serverSeedCommitment(serverSeedOf(id))));
  const operator = wallet(0);
  const publish = Array.from({ length: Math.ceil(N / 200) }, (_, i) => commitments.slice(i * 200, (i + 1) * 200));
  await run(publish.map((c) => () => operator.writeContract({ ...vault, functionName: "publishCommitments", args: [c], gas: 16_000_000n })));
  const player = wallet(1);
  const placements = Array.from({ length: Math.ceil(N / PLACE_PER_TX) }, (_, i) => Math.min(PLACE_PER_TX, N - i * PLACE_PER_TX));
  await run(
    placements.map(
      (count, i) => () =>
        player.writeContract({
          address: batcher,
          abi: betBatcherAbi,
          functionName: "placeMany",
          args: ["dice", BigInt(count), 10n ** 12n, fieldToBytes32(BigInt(i + 1))],
          value: BigInt(count) * 10n ** 12n,
          gas: 30_000_000n,
        }),
    ),
  );
  const settler = wallet(9);
  // One settlement in the middle of the range carries another bet's proof point (valid on the curve,
  // wrong for this bet): the permissive on-chain verifier takes it, the indexer must store it unverified.
  const TAMPERED = Math.floor(N / 2);
  await run(
    cached.map((c, i) => () => {
      const pA = i === TAMPERED ? cached[(i + 1) % N]!.proof.pA : c.proof.pA;
      return settler.writeContract({ ...vault, functionName: "settleBet", args: [c.betId, c.outcome, pA, c.proof.pB, c.proof.pC], gas: SETTLE_GAS });
    }),
    200,
  );
  await test.mine({ blocks: 4 });
  log(`chain ready in ${((performance.now() - setupStart) / 1000).toFixed(1)} s: ${N} bets placed and settled`);

  // One by one with snarkjs, 8 at a time: what the indexer did before the pool.
  const oneByOne = (): ProofVerifier => ({
    verify: (proof, signals) => verifyBetProof(key, proof, signals),
    async verifyMany(list) {
      const out: boolean[] = [];
      for (let i = 0; i < list.length; i += 8)
        out.push(...(await Promise.all(list.slice(i, i + 8).map((item) => verifyBetProof(key, item.proof, item.publicSignals)))));
      return out;
    },
    close: async () => undefined,
  });
  const modes: [string, Parameters<typeof createIndexer>[0]["createVerifier"]][] = [
    ...(args.only === "pool" ? [] : [["snarkjs one by one", () => oneByOne()] as [string, () => ProofVerifier]]),
    [`batch pool (${WORKERS} workers)`, undefined],
  ];
  for (const [mode, createVerifier] of modes) {
    const db = await createTestDatabase();
    const network = networkFromDeployment(sys, { name: "bench", confirmations: 2, batchSize: 2000, pollingIntervalMs: 1000 });
    const logger = args.log === "silent" ? silentLogger() : createLogger({ level: args.log, name: "indexer" });
    const indexer = createIndexer({ db, logger, networks: [network], proofWorkers: WORKERS, createVerifier });
    try {
      log(`${mode}: backfill…`);
      const t0 = performance.now();
      const cpu0 = process.cpuUsage();
      await indexer.start();
      await indexer.synced({ timeoutMs: 1_200_000 });
      const backfillMs = performance.now() - t0;
      const backfillCpu = cpuMs(cpu0);
      const verified = await db.prisma.betResult.count({ where: { verified: true } });
      const unverified = await db.prisma.betResult.findMany({ where: { verified: false }, select: { betId: true } });
      const tamperedId = cached[TAMPERED]!.betId.toString();
      if (verified !== N - 1 || unverified.length !== 1 || unverified[0]!.betId.toFixed(0) !== tamperedId) {
        throw new Error(
          `${mode}: ${verified} of ${N} settlements verified; unverified: ${unverified.map((r) => r.betId.toFixed(0)).join(",")} (want only ${tamperedId})`,
        );
      }
      rows.push({ mode, backfillMs, cpuMs: backfillCpu, verified });
      log(`${mode}: ${(backfillMs / 1000).toFixed(1)} s`);
    } finally {
      await indexer.stop();
      await db.close();
    }
  }
} finally {
  await releaseProverResources();
  await stopChain();
}

// ---------------------------------------------------------------------------------- report

const perProof = (ms: number, n: number) => `${(ms / n).toFixed(2)} ms`;
/** One cell per column (snarkjs, pool): "—" for a mode this run skipped. */
const cells = (f: (r: Row) => string) =>
  [rows.find((r) => r.mode.startsWith("snarkjs")), rows.find((r) => !r.mode.startsWith("snarkjs"))].map((r) => (r ? f(r) : "—"));
const table: string[][] = [
  ["", "snarkjs one by one", `batch pool (${WORKERS} workers)`, "target"],
  ["verification alone, proofs/s (wall)", `${rate(sample.length, snarkjsMs)} (${sample.length} proofs)`, `${rate(N, poolMs)} (${N} proofs)`, ""],
  ["verification alone, CPU per proof", perProof(snarkjsCpu, sample.length), perProof(poolCpu, N), ""],
  ["  with 1 tampered proof per 500 (bisected)", "", `${rate(N, bisectMs)}/s (${refused} refused exactly)`, ""],
  ["backfill wall time", ...cells((r) => `${(r.backfillMs / 1000).toFixed(1)} s`), ""],
  ["backfill settled bets/s (wall)", ...cells((r) => String(rate(N, r.backfillMs))), "≥ 500"],
  ["  settlements indexed verified: true / the tampered one false", ...cells((r) => `${r.verified} / 1`), `${N - 1} / 1`],
  ["backfill CPU of this process per settled bet", ...cells((r) => perProof(r.cpuMs, N)), ""],
  [
    `  → settled bets/s if this process had the ${availableParallelism()} CPUs to itself`,
    ...cells((r) => String(Math.round((availableParallelism() * 1000 * N) / r.cpuMs))),
    "≥ 500",
  ],
];
const widths = (table[0] ?? []).map((_, i) => Math.max(...table.map((r) => (r[i] ?? "").length)));
console.log(
  `\nBackfill with genuine proofs — ${N} settlements each with its own Groth16 proof (${DISTINCT} distinct) (+ ${N} placements), ${dbKind}, ${availableParallelism()} CPUs\n`,
);
for (const r of table) console.log(r.map((c, i) => c.padEnd(widths[i] ?? 0)).join("  "));
