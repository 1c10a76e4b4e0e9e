/**
 * BetVault logs decoded into the three lifecycle events the indexer stores. A log that carries one
 * of their topics but does not decode is an invariant failure (a wrong ABI or address), never
 * skipped silently.
 */
import { decodeEventLog, type Hex } from "viem";
import { betVaultAbi } from "../chain/generated/artifacts.ts";
import type { SolidityProof } from "../chain/betvault.ts";
import { IndexerInvariantError } from "./errors.ts";
import type { ChainLog } from "./rpc.ts";

interface EventBase {
  betId: bigint;
  player: Hex;
  blockNumber: bigint;
  blockHash: Hex;
  transactionHash: Hex;
  logIndex: number;
}

export interface BetPlacedEvent extends EventBase {
  kind: "BetPlaced";
  token: Hex;
  stake: bigint;
  game: string;
  clientSeed: Hex;
  serverSeedHash: Hex;
  deadline: bigint;
}

export interface BetSettledEvent extends EventBase {
  kind: "BetSettled";
  outcome: bigint;
  won: boolean;
  payout: bigint;
  proof: SolidityProof;
}

export interface BetRefundedEvent extends EventBase {
  kind: "BetRefunded";
  amount: bigint;
}

export type BetEvent = BetPlacedEvent | BetSettledEvent | BetRefundedEvent;

const lower = (v: Hex) => v.toLowerCase() as Hex;

export function decodeBetLog(log: ChainLog): BetEvent {
  let decoded;
  try {
    decoded = decodeEventLog({ abi: betVaultAbi, data: log.data, topics: log.topics as [Hex, ...Hex[]], strict: true });
  } catch (error) {
    throw new IndexerInvariantError("a BetVault log does not decode", {
      cause: error,
      details: `block ${log.blockNumber} log ${log.logIndex} tx ${log.transactionHash}`,
    });
  }
  const base = {
    blockNumber: log.blockNumber,
    blockHash: log.blockHash,
    transactionHash: log.transactionHash,
    logIndex: log.logIndex,
  };
  switch (decoded.eventName) {
    case "BetPlaced": {
      const a = decoded.args;
      return {
        kind: "BetPlaced",
        ...base,
        betId: a.betId,
        player: lower(a.player),
        token: lower(a.token),
        stake: a.stake,
        game: a.game,
        clientSeed: lower(a.clientSeed),
        serverSeedHash: lower(a.serverSeedHash),
        deadline: BigInt(a.deadline),
      };
    }
    case "BetSettled": {
      const a = decoded.args;
      return {
        kind: "BetSettled",
        ...base,
        betId: a.betId,
        player: lower(a.player),
        outcome: a.outcome,
        won: a.won,
        payout: a.payout,
        proof: { pA: a.pA, pB: a.pB, pC: a.pC },
      };
    }
    case "BetRefunded": {
      const a = decoded.args;
      return { kind: "BetRefunded", ...base, betId: a.betId, player: lower(a.player), amount: a.amount };
    }
    default:
      throw new IndexerInvariantError(`unexpected BetVault event ${decoded.eventName}`, { details: `tx ${log.transactionHash}` });
  }
}

/** Decodes and orders logs by (block, log index); `removed` logs are refused (they belong to a reorged block). */
export function decodeBetLogs(logs: readonly ChainLog[]): BetEvent[] {
  const events = logs.map((log) => {
    if (log.removed) throw new IndexerInvariantError("the node returned a removed log", { details: `block ${log.blockNumber}` });
    return decodeBetLog(log);
  });
  return events.sort((a, b) => (a.blockNumber === b.blockNumber ? a.logIndex - b.logIndex : a.blockNumber < b.blockNumber ? -1 : 1));
}
