import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEV_PLAYER_KEYS } from "../chain/devAccounts.ts";
import { startLocalChain, type LocalChain } from "../chain/local.ts";
import { createSimulator, type BetProver, type Simulator } from "../chain/simulator.ts";
import { createLogger } from "../core/logger.ts";
import { NetworkDirectory } from "../core/networks.ts";
import { startStack, type RunningStack } from "../bin/stack.ts";
import { defineNetwork } from "../indexer/config.ts";
import { createIndexer, type Indexer } from "../indexer/indexer.ts";
import { startRealtime, type RunningRealtime } from "../realtime/runtime.ts";
import { connectClient, type TestClient } from "./realtime.ts";
import { proveBetOutcome, releaseProverResources, serverSeedCommitment } from "../zk/groth16.ts";
import { createTestDatabase } from "./db.ts";
import { testRealtimeSettings } from "./config.ts";
import { testGatewaySettings } from "./stack.ts";

// The whole pipeline with seeds we know: the simulator proves through a prover that records
// every server seed it is given; then every GraphQL answer, /health, every Socket.IO payload and
// every log line of every service is scanned for those seeds in decimal, hex and base64.

const seeds = new Set<bigint>();
const recordingProver: BetProver = {
  proveBetOutcome: (input) => {
    seeds.add(input.serverSeed);
    return proveBetOutcome(input);
  },
  serverSeedCommitment: (seed) => {
    seeds.add(seed);
    return serverSeedCommitment(seed);
  },
};

const logs: string[] = [];
const logger = createLogger({ level: "debug", destination: { write: (line: string) => void logs.push(line) } });
let db: Awaited<ReturnType<typeof createTestDatabase>>;
let chain: LocalChain;
let simulator: Simulator;
let indexer: Indexer;
let stack: RunningStack;
let realtime: RunningRealtime;
let client: TestClient;

beforeAll(async () => {
  db = await createTestDatabase();
  chain = await startLocalChain({ deploy: { settleTimeoutSeconds: 5 } });
  const { anvil, system } = chain;
  const deployed = { address: system.betVault, deployBlock: system.deployBlock.toString() };
  indexer = createIndexer({
    db,
    logger,
    networks: [
      defineNetwork({
        chainId: system.chainId,
        name: "localnet",
        rpc: { http: anvil.rpcUrl },
        contracts: { BetVault: deployed, Groth16Verifier: { address: system.verifier, deployBlock: deployed.deployBlock } },
        confirmations: 2,
        pollingIntervalMs: 100,
      }),
    ],
  });
  await indexer.start();
  const networks = new NetworkDirectory(db, 200);
  stack = await startStack({
    deps: { db, logger, networks, production: true },
    host: "127.0.0.1",
    port: 0,
    gateway: testGatewaySettings({ production: true }),
  });
  realtime = await startRealtime(stack.http.server, { db, logger, settings: testRealtimeSettings({ REALTIME_PATH: "/socket.io" }), networks });
  client = await connectClient(stack.url, "/socket.io");
  await client.subscribe({ all: true });

  simulator = createSimulator({
    rpcUrl: anvil.rpcUrl,
    chainId: system.chainId,
    betVault: system.betVault,
    operator: system.operator.privateKey,
    players: DEV_PLAYER_KEYS.slice(0, 4),
    settleRatio: 0.6,
    betsPerStep: 3,
    prover: recordingProver,
    logger,
    seed: "secrecy",
  });
  for (let i = 0; i < 4; i++) await simulator.step();
  // Let the unsettled bets pass their deadline, then one more round refunds them.
  await new Promise((resolve) => setTimeout(resolve, 6_000));
  await simulator.step();
  await simulator.step();
  await indexer.synced({ timeoutMs: 30_000 });
  await client.until(
    () => client.updates.some((u) => u.type === "REFUNDED") && client.updates.some((u) => u.type === "SETTLED"),
    20_000,
    "settled and refunded updates",
  );
}, 180_000);

afterAll(async () => {
  client?.close();
  await realtime?.stop();
  await stack?.stop();
  await indexer?.stop();
  await simulator?.stop();
  await chain?.stop();
  await releaseProverResources();
  await db?.close();
});

function forms(seed: bigint): string[] {
  const hex = seed.toString(16);
  const bytes = Buffer.from(hex.padStart(64, "0"), "hex");
  return [seed.toString(10), hex, hex.padStart(64, "0"), bytes.toString("base64"), bytes.toString("base64url")].map((form) => form.toLowerCase());
}

async function gql(query: string): Promise<string> {
  const response = await fetch(`${stack.url}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query }) });
  return response.text();
}

describe("the server seed never leaves the simulator", () => {
  it("appears in no GraphQL answer, /health, Socket.IO payload or log line", async () => {
    const bets = await db.prisma.bet.findMany({ select: { player: true, betId: true, status: true } });
    expect(new Set(bets.map((b) => b.status))).toEqual(new Set(["PENDING", "SETTLED", "REFUNDED"]));
    expect(seeds.size).toBeGreaterThan(3);

    const FIELDS = `chainId betId player token stake game clientSeed serverSeedHash status placedBlock placedTx placedAt settledBlock settledTx settledAt
      refundedBlock refundedTx refundedAt confirmations finalized result { outcome won payout proof { protocol curve piA piB piC publicSignals solidityCalldata verified } }`;
    const answers: string[] = [];
    answers.push(
      await gql(
        `{ networkConfigs { chainId name confirmations contracts { name address deployBlock } verificationKey { json sha256 } indexing { indexedBlock headBlock isReady updatedAt } } }`,
      ),
    );
    for (const player of new Set(bets.map((b) => b.player))) {
      answers.push(await gql(`{ playerBets(wallet: "${player}", first: 100) { totalCount nodes { ${FIELDS} } } pendingBetCount(wallet: "${player}") }`));
    }
    answers.push(await gql(`{ betResults(chainId: 31337, betIds: [${bets.map((b) => `"${b.betId.toFixed(0)}"`).join(",")}]) { ${FIELDS} } }`));
    answers.push(await (await fetch(`${stack.url}/health`)).text());
    expect(answers.join("")).toContain('"verified":true');

    const haystacks: [string, string][] = [
      ["graphql+health", answers.join("\n").toLowerCase()],
      ["socket.io", JSON.stringify(client.updates).toLowerCase()],
      ["logs", logs.join("\n").toLowerCase()],
    ];
    expect(client.updates.length).toBeGreaterThan(5);
    expect(logs.length).toBeGreaterThan(10);
    for (const seed of seeds) {
      for (const form of forms(seed)) {
        for (const [where, text] of haystacks) expect(text.includes(form), `seed found in ${where}`).toBe(false);
      }
    }
  });
});
