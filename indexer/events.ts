/**
 * BetVault logs decoded into the three lifecycle events the indexer stores. A log that carries one
 * of their topics but does not decode is an invariant failure (a wrong ABI or address), never
 * skipped silently.
 */
import { decodeEventLog, type Hex } from "viem";
import { betVaultAbi } from "../chain/generated/artifacts.ts";
import { EVENT_TOPICS, type SolidityProof } from "../chain/betvault.ts";
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

// ---------------------------------------------------------------------------- fast decoding
// Backfills decode tens of thousands of logs; viem's generic decoder costs ~60 µs per log. The
// three layouts are fixed, so canonical encodings are read word by word here (~3 µs); anything
// not in canonical form falls through to viem, which stays the authority (events.test.ts checks
// both agree on random events).

const W = 64; // hex characters per 32-byte word
const hexWord = (data: string, i: number) => data.slice(2 + i * W, 2 + (i + 1) * W);
const uint = (word: string) => BigInt(`0x${word}`);
const ZERO_PREFIX_ADDRESS = "0".repeat(24);
const isAddressWord = (word: string) => word.length === W && word.startsWith(ZERO_PREFIX_ADDRESS);
const addressOf = (word: string) => `0x${word.slice(24).toLowerCase()}` as Hex;
const utf8 = new TextDecoder();

function fastDecode(log: ChainLog, base: Omit<EventBase, "betId" | "player">): BetEvent | undefined {
  const [topic0, betTopic, playerTopic] = log.topics;
  if (log.topics.length !== 3 || !betTopic || !playerTopic) return undefined;
  const player = playerTopic.slice(2);
  if (!isAddressWord(player)) return undefined;
  const common = { ...base, betId: uint(betTopic.slice(2)), player: addressOf(player) };
  const data = log.data;
  const words = (data.length - 2) / W;
  if (topic0 === EVENT_TOPICS.BetRefunded) {
    if (words !== 1) return undefined;
    return { kind: "BetRefunded", ...common, amount: uint(hexWord(data, 0)) };
  }
  if (topic0 === EVENT_TOPICS.BetSettled) {
    if (words !== 11) return undefined;
    const won = uint(hexWord(data, 1));
    if (won > 1n) return undefined;
    const w = (i: number) => uint(hexWord(data, i));
    return {
      kind: "BetSettled",
      ...common,
      outcome: w(0),
      won: won === 1n,
      payout: w(2),
      proof: {
        pA: [w(3), w(4)],
        pB: [
          [w(5), w(6)],
          [w(7), w(8)],
        ],
        pC: [w(9), w(10)],
      },
    };
  }
  if (topic0 === EVENT_TOPICS.BetPlaced) {
    if (!Number.isInteger(words) || words < 7) return undefined;
    const token = hexWord(data, 0);
    const offset = uint(hexWord(data, 2));
    const deadline = uint(hexWord(data, 5));
    const length = Number(uint(hexWord(data, 6)));
    if (!isAddressWord(token) || offset !== 0xc0n || deadline >= 1n << 64n || words !== 7 + Math.ceil(length / 32)) return undefined;
    const start = 2 + 7 * W;
    return {
      kind: "BetPlaced",
      ...common,
      token: addressOf(token),
      stake: uint(hexWord(data, 1)),
      game: utf8.decode(Buffer.from(data.slice(start, start + length * 2), "hex")),
      clientSeed: `0x${hexWord(data, 3).toLowerCase()}`,
      serverSeedHash: `0x${hexWord(data, 4).toLowerCase()}`,
      deadline,
    };
  }
  return undefined;
}

/** Decodes one BetVault log with viem's generic decoder (the reference; also the fallback). */
export function decodeBetLogWithViem(log: ChainLog): BetEvent {
  let decoded: ReturnType<typeof decodeEventLog<typeof betVaultAbi>>;
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

export function decodeBetLog(log: ChainLog): BetEvent {
  const fast = fastDecode(log, { blockNumber: log.blockNumber, blockHash: log.blockHash, transactionHash: log.transactionHash, logIndex: log.logIndex });
  return fast ?? decodeBetLogWithViem(log);
}

/** Decodes and orders logs by (block, log index); `removed` logs are refused (they belong to a reorged block). */
export function decodeBetLogs(logs: readonly ChainLog[]): BetEvent[] {
  const events = logs.map((log) => {
    if (log.removed) throw new IndexerInvariantError("the node returned a removed log", { details: `block ${log.blockNumber}` });
    return decodeBetLog(log);
  });
  return events.sort((a, b) => (a.blockNumber === b.blockNumber ? a.logIndex - b.logIndex : a.blockNumber < b.blockNumber ? -1 : 1));
}
