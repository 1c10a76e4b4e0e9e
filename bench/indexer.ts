// Indexer benchmark: BetVault events indexed per second while backfilling ≥ 20 000 bets, and the
// head-to-row latency in follow mode, on embedded PGlite and on PostgreSQL, side by side.
//
//   npx tsx bench/indexer.ts [--bets 20000] [--samples 100] [--db pglite,postgres] [--batch-size 2000]
//
// The chain: a local anvil with BetVault deployed against a PERMISSIVE test verifier
// (chain/contracts/test/PermissiveVerifier.sol) and a test-only BetBatcher contract that places,
// settles and refunds many bets per transaction. 80 % of the bets are settled with a FAKE proof
// (points off the curve; the permissive verifier accepts it) and the rest refunded. The indexer
// rebuilds and verifies every proof as always: a fake proof fails its curve check in microseconds,
// so the backfill figure measures decoding, proof rebuilding, calldata export and database writes,
// not pairings. A real proof costs one Groth16 verification (measured at the end and printed).
//
// Follow mode: the indexer subscribes to newHeads over WebSocket; each sample mines one block with
// 4 placements and times from the moment the block exists (evm_mine returned) until the last bet's
// row is readable in the database.
//
// PostgreSQL: a fresh database from test/db.ts on TEST_DATABASE_URL's server (default
// postgresql://postgres@127.0.0.1:5432/postgres); skipped when unreachable.
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
import { fieldToBytes32, GAME_IDS } from "../chain/betvault.ts";
import { localChain } from "../chain/clients.ts";
import { DEV_PRIVATE_KEYS } from "../chain/devAccounts.ts";
import { betVaultAbi } from "../chain/generated/artifacts.ts";
import { startLocalChain } from "../chain/local.ts";
import { betBatcherAbi, deployBetBatcher, deployPermissiveVerifier } from "../test/contracts.ts";
import { createLogger, silentLogger } from "../core/logger.ts";
import { Prisma } from "../prisma/generated/client.ts";
import { loadConfig } from "../core/config.ts";
import { createTestDatabase } from "../test/db.ts";
import { loadDevVerificationKey, proveBetOutcome, releaseProverResources, verifyBetProof } from "../zk/groth16.ts";
import { networkFromDeployment } from "../indexer/config.ts";
import { createIndexer } from "../indexer/indexer.ts";

const { values: args } = parseArgs({
  options: {
    bets: { type: "string", default: "20000" },
    samples: { type: "string", default: "100" },
    db: { type: "string", default: "pglite,postgres" },
    "batch-size": { type: "string", default: "2000" },
  },
});
const config = loadConfig(["test", "bench"]);
const BETS = Number(args.bets);
const SAMPLES = Number(args.samples);
const BATCH_SIZE = Number(args["batch-size"]);
const KINDS = (args.db ?? "").split(",").filter((k): k is "pglite" | "postgres" => k === "pglite" || k === "postgres");
const SETTLE_TIMEOUT = 3600;
const PER_TX = { place: 80, settle: 150, refund: 200, publish: 200 } as const;
const FAKE_PROOF = {
  pA: [1n, 3n],
  pB: [
    [1n, 2n],
    [3n, 4n],
  ],
  pC: [5n, 6n],
} as const;

const log = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

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

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

// ------------------------------------------------------------------------------------- chain

const setupStart = performance.now();
const {
  anvil,
  system: sys,
  stop: stopChain,
} = await startLocalChain({
  deploy: { settleTimeoutSeconds: SETTLE_TIMEOUT, bankroll: 5_000n * 10n ** 18n },
  verifier: (rpcUrl) => deployPermissiveVerifier({ rpcUrl }),
});
const chain: Chain = localChain(anvil.chainId, anvil.rpcUrl);
const pub = createPublicClient({ chain, transport: http(anvil.rpcUrl), cacheTime: 0, pollingInterval: 20 });
const test = createTestClient({ mode: "anvil", chain, transport: http(anvil.rpcUrl) });
const wallets: WalletClient<Transport, Chain, JsonRpcAccount>[] = DEV_PRIVATE_KEYS.map((key) =>
  createWalletClient({ chain, transport: http(anvil.rpcUrl), account: { address: privateKeyToAccount(key).address, type: "json-rpc" } }),
);
const wallet = (i: number) => wallets[i % wallets.length] as WalletClient<Transport, Chain, JsonRpcAccount>;

try {
  const batcher = await deployBetBatcher({ rpcUrl: anvil.rpcUrl, betVault: sys.betVault });
  await test.setBlockGasLimit({ gasLimit: 1_000_000_000n });
  await test.setAutomine(false);
  const vault = { address: sys.betVault, abi: betVaultAbi } as const;
  const batch = { address: batcher, abi: betBatcherAbi } as const;

  /** Sends every transaction, mining a block every `perBlock` of them; fails on any revert. */
  async function run(txs: (() => Promise<Hex>)[], perBlock = 40): Promise<void> {
    for (let i = 0; i < txs.length; i += perBlock) {
      const hashes: Hex[] = [];
      for (const send of txs.slice(i, i + perBlock)) hashes.push(await send());
      await test.mine({ blocks: 1 });
      for (const hash of hashes) {
        const receipt = await pub.getTransactionReceipt({ hash });
        if (receipt.status !== "success") throw new Error(`transaction ${hash} reverted`);
      }
    }
  }
  const chunks = <T>(items: T[], size: number): T[][] =>
    Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size));

  const commitments = BETS + SAMPLES * 4 * KINDS.length;
  const hashes = Array.from({ length: commitments }, (_, i) => fieldToBytes32(BigInt(i + 1)));
  await run(
    chunks(hashes, PER_TX.publish).map((c) => () => wallet(0).writeContract({ ...vault, functionName: "publishCommitments", args: [c], gas: 16_000_000n })),
  );
  const placements = Array.from({ length: Math.ceil(BETS / PER_TX.place) }, (_, i) => Math.min(PER_TX.place, BETS - i * PER_TX.place));
  await run(
    placements.map(
      (count, i) => () =>
        wallet(1 + (i % 8)).writeContract({
          ...batch,
          functionName: "placeMany",
          args: [GAME_IDS[i % GAME_IDS.length] ?? "dice", BigInt(count), 10n ** 12n, fieldToBytes32(BigInt(i + 1))],
          value: BigInt(count) * 10n ** 12n,
          gas: 16_000_000n,
        }),
    ),
  );
  const betIds = Array.from({ length: BETS }, (_, i) => BigInt(i + 1));
  const toSettle = betIds.filter((id) => id % 5n !== 0n);
  const toRefund = betIds.filter((id) => id % 5n === 0n);
  await run(
    chunks(toSettle, PER_TX.settle).map(
      (ids) => () =>
        wallet(9).writeContract({
          ...batch,
          functionName: "settleMany",
          args: [ids, ids.map((id) => id * 7919n + 3n), FAKE_PROOF.pA, FAKE_PROOF.pB, FAKE_PROOF.pC],
          gas: 16_000_000n,
        }),
    ),
  );
  await test.increaseTime({ seconds: SETTLE_TIMEOUT + 1 });
  await run(
    chunks(toRefund, PER_TX.refund).map((ids) => () => wallet(9).writeContract({ ...batch, functionName: "refundMany", args: [ids], gas: 16_000_000n })),
  );
  const head = await pub.getBlockNumber();
  const chainEvents = BETS + toSettle.length + toRefund.length;
  log(`chain ready in ${seconds(performance.now() - setupStart)}: ${BETS} bets, ${chainEvents} BetVault events in ${head - sys.deployBlock} blocks`);

  // ---------------------------------------------------------------------------------- runs

  interface Result {
    events: number;
    backfillMs: number;
    latencies: number[];
  }
  const results = new Map<string, Result | "unavailable">();
  let nextBetId = BigInt(BETS) + 1n;

  for (const kind of KINDS) {
    if (kind === "postgres" && !(await postgresReachable())) {
      results.set(kind, "unavailable");
      continue;
    }
    process.env.TEST_DB = kind;
    const db = await createTestDatabase();
    const network = networkFromDeployment(sys, { name: "bench", wsUrl: anvil.wsUrl, confirmations: 2, batchSize: BATCH_SIZE, pollingIntervalMs: 1000 });
    const indexer = createIndexer({
      db,
      logger: config.BENCH_LOG_LEVEL ? createLogger({ name: "indexer", level: config.BENCH_LOG_LEVEL }) : silentLogger(),
      networks: [network],
    });
    try {
      log(`${kind}: backfill…`);
      const t0 = performance.now();
      await indexer.start();
      await indexer.synced({ timeoutMs: 240_000 });
      const backfillMs = performance.now() - t0;
      const events = await db.prisma.betUpdate.count();
      log(`${kind}: ${events} events in ${seconds(backfillMs)}`);

      log(`${kind}: follow mode, ${SAMPLES} blocks…`);
      const latencies: number[] = [];
      for (let s = 0; s < SAMPLES; s++) {
        for (let i = 0; i < 4; i++) {
          await wallet(1 + i).writeContract({
            ...vault,
            functionName: "placeBet",
            args: ["dice", fieldToBytes32(BigInt(s * 4 + i + 1)), `0x${"00".repeat(32)}`],
            value: 10n ** 12n,
            gas: 300_000n,
          });
        }
        const last = nextBetId + 3n;
        nextBetId += 4n;
        await test.mine({ blocks: 1 });
        const mined = performance.now();
        const where = { chainId_betId: { chainId: BigInt(anvil.chainId), betId: new Prisma.Decimal(last.toString()) } };
        while (!(await db.prisma.bet.findUnique({ where, select: { status: true } }))) {
          if (performance.now() - mined > 30_000) throw new Error(`bet ${last} not indexed 30 s after its block`);
          await new Promise((r) => setTimeout(r, 1));
        }
        latencies.push(performance.now() - mined);
        await new Promise((r) => setTimeout(r, 10 + Math.random() * 40));
      }
      results.set(kind, { events, backfillMs, latencies: latencies.sort((a, b) => a - b) });
    } finally {
      await indexer.stop();
      await db.close();
    }
  }

  // A real proof's verification: what each settlement costs when proofs are genuine.
  const { key } = loadDevVerificationKey();
  const real = await proveBetOutcome({ serverSeed: 123_456_789n, betId: 1n, clientSeed: `0x${"ab".repeat(32)}` });
  await verifyBetProof(key, real.proof, real.publicSignals);
  const tv = performance.now();
  const N = 30;
  for (let i = 0; i < N; i++) await verifyBetProof(key, real.proof, real.publicSignals);
  const verifyMs = (performance.now() - tv) / N;

  // ---------------------------------------------------------------------------------- report

  const cols = KINDS.map((k) => results.get(k));
  const cell = (f: (r: Result) => string) => cols.map((r) => (r === undefined || r === "unavailable" ? "n/a" : f(r)));
  const rows: [string, string[], string][] = [
    [
      "events indexed (backfill)",
      cell((r) => r.events.toLocaleString("en-US")),
      `≥ ${(BETS * 2).toLocaleString("en-US")} (${BETS.toLocaleString("en-US")} bets)`,
    ],
    ["backfill wall time", cell((r) => seconds(r.backfillMs)), ""],
    ["backfill events/s", cell((r) => Math.round(r.events / (r.backfillMs / 1000)).toLocaleString("en-US")), "≥ 2,000 on 2 cores"],
    ["follow head→row p50", cell((r) => `${percentile(r.latencies, 50).toFixed(1)} ms`), ""],
    ["follow head→row p95", cell((r) => `${percentile(r.latencies, 95).toFixed(1)} ms`), ""],
    ["follow head→row p99", cell((r) => `${percentile(r.latencies, 99).toFixed(1)} ms`), "< 1 block (1,000 ms at 1 s blocks)"],
    ["follow head→row max", cell((r) => `${(r.latencies.at(-1) ?? NaN).toFixed(1)} ms`), ""],
    ["p99 in blocks @ 1 s / 2 s / 12 s", cell((r) => [1000, 2000, 12000].map((b) => (percentile(r.latencies, 99) / b).toFixed(3)).join(" / ")), "< 1"],
  ];
  const header = ["metric", ...KINDS.map((k) => (k === "pglite" ? "PGlite" : "PostgreSQL")), "target"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (i === 0 ? r[0] : i === header.length - 1 ? r[2] : (r[1][i - 1] ?? "")).length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join("  ");
  console.log(
    `\nIndexer benchmark — ${BETS.toLocaleString("en-US")} bets (${toSettle.length.toLocaleString("en-US")} settled with fake proofs on a permissive verifier, ${toRefund.length.toLocaleString("en-US")} refunded), batch ${BATCH_SIZE} blocks, ${SAMPLES} follow samples of 4 bets, ${availableParallelism()} CPUs\n`,
  );
  console.log(line(header));
  console.log(line(header.map((_, i) => "-".repeat(widths[i] ?? 0))));
  for (const [name, values, target] of rows) console.log(line([name, ...values, target]));
  console.log(
    `\nReal Groth16 verification (snarkjs, this process): ${verifyMs.toFixed(1)} ms per proof = ${Math.round(1000 / verifyMs)} settlements/s — the bound on backfilling genuinely proven settlements (fake proofs above fail the curve check first).`,
  );
} finally {
  await releaseProverResources();
  await stopChain();
}
