// Block timestamps of a backfill range (moved out of sync.ts, which keeps the loop itself).
import type { Hex } from "viem";
import { ChainInconsistentError } from "./errors.ts";
import type { BlockHeader, ChainLog, ChainRpc } from "./rpc.ts";

/** Block timestamps for every block holding a log: from the logs when the node includes them, else from headers. */
export async function blockTimestamps(rpc: ChainRpc, chainId: number, logs: readonly ChainLog[], known: readonly BlockHeader[]): Promise<Map<bigint, bigint>> {
  const out = new Map<bigint, bigint>();
  const byNumber = new Map<bigint, Hex>();
  for (const h of known) {
    out.set(h.number, h.timestamp);
    byNumber.set(h.number, h.hash);
  }
  const missing = new Map<bigint, Hex>();
  for (const log of logs) {
    const expected = byNumber.get(log.blockNumber);
    if (expected !== undefined && expected !== log.blockHash) {
      throw new ChainInconsistentError(`a log of block ${log.blockNumber} names another block hash`, { chainId });
    }
    if (log.blockTimestamp !== undefined) out.set(log.blockNumber, log.blockTimestamp);
    else if (!out.has(log.blockNumber)) missing.set(log.blockNumber, log.blockHash);
  }
  const headers = await Promise.all([...missing.keys()].map((n) => rpc.block(n)));
  for (const header of headers) {
    if (!header || header.hash !== missing.get(header.number)) {
      throw new ChainInconsistentError("a block changed while its logs were read", { chainId });
    }
    out.set(header.number, header.timestamp);
  }
  return out;
}
