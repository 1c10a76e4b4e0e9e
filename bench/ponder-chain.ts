// The chain of the Ponder benchmark (bench/ponder.ts): one anvil with BetVault on a PERMISSIVE
// verifier (settling costs no on-chain pairing, so the chain is quick to build), and two players:
//
//   - the proven player (a BetBatcher): bets 1..N, each settled with its OWN genuine Groth16 proof
//     from the proof cache (bench/proof-cache.ts); its newest 50 are the wallet page both servers
//     answer;
//   - the filler player (another BetBatcher): M more bets, refunded after the settle timeout, so the
//     backfill range holds enough events for a rate (refunds carry no proof).
//
// Both indexers read the same block range: the vault's deployment block to the head.
import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  http,
  type Address,
  type Chain,
  type Hex,
  type JsonRpcAccount,
  type Transport,
  type WalletClient,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { sendInBlocks } from "./mine-in-blocks.ts";
import { fieldToBytes32, GAME_IDS, SETTLE_GAS } from "../chain/betvault.ts";
import { localChain } from "../chain/clients.ts";
import { DEV_PRIVATE_KEYS } from "../chain/devAccounts.ts";
import type { BetSystem } from "../chain/deploy.ts";
import { betVaultAbi } from "../chain/generated/artifacts.ts";
import { startLocalChain, type LocalChain } from "../chain/local.ts";
import { betBatcherAbi, deployBetBatcher, deployPermissiveVerifier } from "../test/contracts.ts";
import { serverSeedCommitment } from "../zk/groth16.ts";
import { type CachedProof, PLACE_PER_TX, serverSeedOf } from "./proof-cache.ts";

const SETTLE_TIMEOUT = 3600;
const STAKE = 10n ** 12n;

export interface BenchChain extends LocalChain {
  system: BetSystem;
  /** The wallet page's player (the proven bets' batcher). */
  provenPlayer: Address;
  fillerPlayer: Address;
  /** Last block of the range both indexers backfill. */
  endBlock: bigint;
  /** BetPlaced + BetSettled + BetRefunded events in the range. */
  events: number;
}

export async function buildBenchChain(proofs: readonly CachedProof[], fillerBets: number): Promise<BenchChain> {
  const local = await startLocalChain({
    deploy: { settleTimeoutSeconds: SETTLE_TIMEOUT, bankroll: 5_000n * 10n ** 18n },
    verifier: (rpcUrl) => deployPermissiveVerifier({ rpcUrl }),
  });
  try {
    const { anvil, system } = local;
    const chain: Chain = localChain(anvil.chainId, anvil.rpcUrl);
    const pub = createPublicClient({ chain, transport: http(anvil.rpcUrl), cacheTime: 0, pollingInterval: 20 });
    const test = createTestClient({ mode: "anvil", chain, transport: http(anvil.rpcUrl) });
    const wallet = (i: number) =>
      createWalletClient({
        chain,
        transport: http(anvil.rpcUrl),
        account: { address: privateKeyToAccount(DEV_PRIVATE_KEYS[i] as Hex).address, type: "json-rpc" },
      }) as WalletClient<Transport, Chain, JsonRpcAccount>;
    const provenPlayer = await deployBetBatcher({ rpcUrl: anvil.rpcUrl, betVault: system.betVault });
    const fillerPlayer = await deployBetBatcher({ rpcUrl: anvil.rpcUrl, betVault: system.betVault });
    await test.setBlockGasLimit({ gasLimit: 1_000_000_000n });
    await test.setAutomine(false);
    const vault = { address: system.betVault, abi: betVaultAbi } as const;

    const run = (txs: (() => Promise<Hex>)[], perBlock?: number) => sendInBlocks({ pub, test }, txs, perBlock);
    const chunks = <T>(items: readonly T[], size: number): T[][] =>
      Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size));

    // Commitments: the proven bets' (the cache proved bet id with seed serverSeedOf(id)), then the filler's.
    const N = proofs.length;
    const commitments = [
      ...proofs.map((p) => fieldToBytes32(serverSeedCommitment(serverSeedOf(p.betId)))),
      ...Array.from({ length: fillerBets }, (_, i) => fieldToBytes32(10n ** 30n + BigInt(i))),
    ];
    const operator = wallet(0);
    await run(chunks(commitments, 200).map((c) => () => operator.writeContract({ ...vault, functionName: "publishCommitments", args: [c], gas: 16_000_000n })));

    // Proven bets first (ids 1..N, PLACE_PER_TX per transaction, seedBase = transaction + 1: what the cache proved).
    const placeAll = (batcher: Address, from: number, total: number, seed: (tx: number) => bigint) =>
      Array.from({ length: Math.ceil(total / PLACE_PER_TX) }, (_, i) => {
        const count = Math.min(PLACE_PER_TX, total - i * PLACE_PER_TX);
        return () =>
          wallet(from).writeContract({
            address: batcher,
            abi: betBatcherAbi,
            functionName: "placeMany",
            args: [GAME_IDS[i % GAME_IDS.length] ?? "dice", BigInt(count), STAKE, fieldToBytes32(seed(i))],
            value: BigInt(count) * STAKE,
            gas: 30_000_000n,
          });
      });
    await run(placeAll(provenPlayer, 1, N, (tx) => BigInt(tx + 1)));
    await run(placeAll(fillerPlayer, 2, fillerBets, (tx) => 10n ** 20n + BigInt(tx)));

    const settler = wallet(9);
    await run(
      proofs.map(
        (c) => () =>
          settler.writeContract({ ...vault, functionName: "settleBet", args: [c.betId, c.outcome, c.proof.pA, c.proof.pB, c.proof.pC], gas: SETTLE_GAS }),
      ),
      200,
    );
    await test.increaseTime({ seconds: SETTLE_TIMEOUT + 1 });
    const fillerIds = Array.from({ length: fillerBets }, (_, i) => BigInt(N + i + 1));
    await run(
      chunks(fillerIds, 200).map(
        (ids) => () => settler.writeContract({ address: fillerPlayer, abi: betBatcherAbi, functionName: "refundMany", args: [ids], gas: 30_000_000n }),
      ),
    );
    const endBlock = await pub.getBlockNumber();
    // Empty blocks on top: Ponder backfills ("historical sync") only what it deems final, 30 blocks
    // below the head on a chain it does not know; the rest it would index block by block in realtime.
    await test.mine({ blocks: 40 });
    return { ...local, provenPlayer, fillerPlayer, endBlock, events: 2 * N + 2 * fillerBets };
  } catch (error) {
    await local.stop();
    throw error;
  }
}
