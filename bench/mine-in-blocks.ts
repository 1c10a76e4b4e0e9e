// Sending a benchmark's transactions to a local anvil with automine off: a block is mined every
// `perBlock` of them, so a backfill has many events per block, as a busy chain would.
import type { Hex } from "viem";

export interface LocalChainClients {
  pub: { getTransactionReceipt(args: { hash: Hex }): Promise<{ status: "success" | "reverted" }> };
  test: { mine(args: { blocks: number }): Promise<unknown> };
}

/** Sends every transaction, mining a block every `perBlock` of them; fails on any revert. */
export async function sendInBlocks({ pub, test }: LocalChainClients, txs: readonly (() => Promise<Hex>)[], perBlock = 100): Promise<void> {
  for (let i = 0; i < txs.length; i += perBlock) {
    const hashes: Hex[] = [];
    for (const send of txs.slice(i, i + perBlock)) hashes.push(await send());
    await test.mine({ blocks: 1 });
    for (const hash of hashes) if ((await pub.getTransactionReceipt({ hash })).status !== "success") throw new Error(`transaction ${hash} reverted`);
  }
}
