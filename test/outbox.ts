// Outbox rows for tests and benchmarks, written through the one write path (core/outbox.ts), so
// they take the same lock as the indexer and seq order stays commit order: fake bets that keep the
// contract's conventions, a writer that keeps the outbox moving, and the Network rows subscriptions
// need.
import type { BetJson } from "../core/bet-json.ts";
import type { Database } from "../core/db.ts";
import { Outbox, type BetUpdateRow } from "../core/outbox.ts";
import type { BetUpdateType } from "../realtime/events.ts";

export interface TestUpdate {
  chainId: number;
  betId: string;
  player: string;
  type?: BetUpdateType;
  /** Characters of filler added to the stored bet JSON (large payloads: slow-consumer tests). */
  fillerChars?: number;
  /** Default: the writing transaction's start. */
  createdAt?: Date;
}

const hex = (n: bigint, bytes: number) =>
  `0x${BigInt.asUintN(bytes * 8, n)
    .toString(16)
    .padStart(bytes * 2, "0")}`;

/** A BetJson that keeps the contract's conventions (decimal strings, lowercase hex). */
export function fakeBet(update: TestUpdate): BetJson {
  const type = update.type ?? "PLACED";
  const id = BigInt(update.betId);
  const status = type === "SETTLED" ? "SETTLED" : type === "REFUNDED" ? "REFUNDED" : "PENDING";
  const settled = status === "SETTLED";
  return {
    chainId: update.chainId,
    betId: update.betId,
    player: update.player,
    token: hex(0n, 20),
    stake: "1500000000000000000",
    game: "coinflip",
    clientSeed: hex(id + 1n, 32),
    serverSeedHash: hex(id + 2n, 32),
    status,
    placedBlock: "100",
    placedTx: hex(id + 3n, 32),
    placedAt: "1700000200",
    settledBlock: settled ? "101" : null,
    settledTx: settled ? hex(id + 4n, 32) : null,
    settledAt: settled ? "1700000202" : null,
    refundedBlock: status === "REFUNDED" ? "101" : null,
    refundedTx: status === "REFUNDED" ? hex(id + 5n, 32) : null,
    refundedAt: status === "REFUNDED" ? "1700000202" : null,
    confirmations: "1",
    finalized: false,
    result: settled
      ? {
          outcome: "12345678901234567890123456789",
          won: true,
          payout: "3000000000000000000",
          proof: {
            protocol: "groth16",
            curve: "bn128",
            piA: ["1", "2", "1"],
            piB: [
              ["1", "2"],
              ["3", "4"],
              ["1", "0"],
            ],
            piC: ["5", "6", "1"],
            publicSignals: ["7", "8", "9", "10"],
            solidityCalldata: "0x",
            verified: true,
          },
        }
      : null,
  };
}

/** The outbox row of a test update (block 100). */
export function testUpdateRow(update: TestUpdate, bet: BetJson = fakeBet(update)): BetUpdateRow {
  return {
    chainId: BigInt(update.chainId),
    betId: update.betId,
    type: update.type ?? "PLACED",
    player: update.player,
    blockNumber: 100n,
    blockHash: hex(1n, 32),
    bet: update.fillerChars ? ({ ...bet, filler: "x".repeat(update.fillerChars) } as BetJson) : bet,
    ...(update.createdAt ? { createdAt: update.createdAt } : {}),
  };
}

/** Writes the updates as outbox rows in one transaction (one INSERT); resolves to their seqs once committed. */
export function insertUpdates(db: Database, updates: TestUpdate[]): Promise<bigint[]> {
  return new Outbox(db).append(updates.map((u) => testUpdateRow(u)));
}

export function wallet(n: number): string {
  return hex(BigInt(n) + 0xabc0000n, 20);
}

/** Minimal Network rows for chain ids (subscriptions refuse unknown chains). */
export async function createNetworks(db: Database, chainIds: number[]): Promise<void> {
  for (const chainId of chainIds) {
    await db.prisma.network.create({
      data: { chainId: BigInt(chainId), name: `test${chainId}`, confirmations: 2, verificationKeyJson: "{}", verificationKeySha256: hex(0n, 32) },
    });
  }
}

export interface WrittenUpdate {
  seq: bigint;
  player: string;
}

export interface Writer {
  /** Every update committed so far, in seq order. */
  written: WrittenUpdate[];
  /** Stops writing and resolves once the last write has committed. */
  stop(): Promise<void>;
}

/** Writes one update every `intervalMs`, players in turn, until stopped (write failures are retried). */
export function keepWriting(db: Database, options: { players: string[]; intervalMs?: number; chainId?: number; firstBetId?: number }): Writer {
  const written: WrittenUpdate[] = [];
  let writing = true;
  let betId = options.firstBetId ?? 1_000_000;
  const loop = (async () => {
    for (let i = 0; writing; i++) {
      const player = options.players[i % options.players.length]!;
      const [seq] = await insertUpdates(db, [{ chainId: options.chainId ?? 1, betId: String(betId++), player }]);
      written.push({ seq: seq!, player });
      await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 20));
    }
  })();
  return {
    written,
    async stop() {
      writing = false;
      await loop;
    },
  };
}
