/**
 * The indexer's pure core: BetVault events applied, in chain order, to bet rows, producing the
 * final state of every bet a batch touches, the new results, and one BetUpdate outbox row per state
 * change whose `bet` is betToJson(...) of the state right after that change. No I/O here, so the
 * rules are unit-tested on their own (apply.test.ts).
 */
import type { Hex } from "viem";
import { lifecycleOf, pendingBet, withLifecycle } from "../core/bet-row.ts";
import type { NetworkEntry } from "../core/networks.ts";
import { betUpdateRow, type BetUpdateRow } from "../core/outbox.ts";
import { Prisma, type Bet, type BetResult } from "../prisma/generated/client.ts";
import { betResult as gameResult, isGameId } from "../chain/betvault.ts";
import { IndexerInvariantError } from "./errors.ts";
import type { BetEvent, BetSettledEvent } from "./events.ts";
import type { SettlementProof } from "./proofs.ts";

export interface AppliedBatch {
  /** Final state of every bet the events touched, in first-touch order. */
  bets: Bet[];
  /** Results of the settlements in the batch. */
  results: BetResult[];
  /** One outbox row per state change, in chain order. */
  updates: BetUpdateRow[];
}

export interface ApplyInput {
  chainId: bigint;
  events: readonly BetEvent[];
  /** Stored bets the batch settles or refunds but does not place, by betId (decimal string). */
  existing: ReadonlyMap<string, Bet>;
  /** Block timestamps (unix seconds) of every block holding an event. */
  timestamps: ReadonlyMap<bigint, bigint>;
  /** The proof of each BetSettled event, by settlementKey(event). */
  proofs: ReadonlyMap<string, SettlementProof>;
  /** The network's depth as this commit will record it: what the payloads' confirmations use. */
  network: NetworkEntry;
}

export const settlementKey = (event: { blockNumber: bigint; logIndex: number }) => `${event.blockNumber}:${event.logIndex}`;
/** A bet id as a map key within one chain (decimal text): not core/bet-key.ts's `chainId:betId`. */
export const betIdKey = (betId: bigint | Prisma.Decimal) => (typeof betId === "bigint" ? betId.toString(10) : betId.toFixed(0));

function timestampOf(timestamps: ReadonlyMap<bigint, bigint>, block: bigint): bigint {
  const t = timestamps.get(block);
  if (t === undefined) throw new IndexerInvariantError(`no timestamp for block ${block}`);
  return t;
}

/** The pending bet a BetPlaced event creates. */
function placedBet(chainId: bigint, e: Extract<BetEvent, { kind: "BetPlaced" }>, placedAt: bigint): Bet {
  return pendingBet({
    chainId,
    betId: new Prisma.Decimal(e.betId.toString(10)),
    player: e.player,
    token: e.token,
    stake: new Prisma.Decimal(e.stake.toString(10)),
    game: e.game,
    clientSeed: e.clientSeed,
    serverSeedHash: e.serverSeedHash,
    placedBlock: e.blockNumber,
    placedLogIndex: e.logIndex,
    placedBlockHash: e.blockHash,
    placedTx: e.transactionHash,
    placedAt,
  });
}

function settledResult(chainId: bigint, bet: Bet, e: BetSettledEvent, proof: SettlementProof): BetResult {
  // The contract emits won/payout from its fixed game rules; a mismatch with the off-chain mirror
  // would mean a different contract than chain/betvault.ts describes.
  if (isGameId(bet.game)) {
    const expected = gameResult(bet.game, e.outcome, BigInt(bet.stake.toFixed(0)));
    if (expected.won !== e.won || expected.payout !== e.payout) {
      throw new IndexerInvariantError(`bet ${e.betId}: BetSettled won/payout disagree with the game rules`, { details: `tx ${e.transactionHash}` });
    }
  }
  return {
    chainId,
    betId: bet.betId,
    outcome: new Prisma.Decimal(e.outcome.toString(10)),
    won: e.won,
    payout: new Prisma.Decimal(e.payout.toString(10)),
    proof: proof.proof as unknown as Prisma.JsonValue,
    publicSignals: proof.publicSignals,
    solidityCalldata: proof.solidityCalldata,
    verified: proof.verified,
  };
}

export function applyEvents(input: ApplyInput): AppliedBatch {
  const { chainId, network } = input;
  const touched = new Map<string, Bet>();
  const results = new Map<string, BetResult>();
  const updates: BetUpdateRow[] = [];

  const current = (betId: bigint, e: BetEvent): Bet => {
    const key = betIdKey(betId);
    const bet = touched.get(key) ?? input.existing.get(key);
    if (!bet)
      throw new IndexerInvariantError(`${e.kind} of bet ${betId}, which was never placed`, { details: `block ${e.blockNumber} tx ${e.transactionHash}` });
    if (bet.status !== "PENDING") {
      throw new IndexerInvariantError(`${e.kind} of bet ${betId}, which is already ${bet.status}`, {
        details: `block ${e.blockNumber} tx ${e.transactionHash}`,
      });
    }
    return bet;
  };

  for (const e of input.events) {
    const key = betIdKey(e.betId);
    const block = { number: e.blockNumber, hash: e.blockHash };
    switch (e.kind) {
      case "BetPlaced": {
        if (touched.has(key) || input.existing.has(key)) throw new IndexerInvariantError(`bet ${e.betId} placed twice`, { details: `tx ${e.transactionHash}` });
        const bet = placedBet(chainId, e, timestampOf(input.timestamps, e.blockNumber));
        touched.set(key, bet);
        updates.push(betUpdateRow("PLACED", bet, null, block, network));
        break;
      }
      case "BetSettled": {
        const before = current(e.betId, e);
        const proof = input.proofs.get(settlementKey(e));
        if (!proof) throw new IndexerInvariantError(`no proof prepared for the settlement of bet ${e.betId}`);
        const bet = withLifecycle(before, {
          ...lifecycleOf(before),
          status: "SETTLED",
          settledBlock: e.blockNumber,
          settledBlockHash: e.blockHash,
          settledTx: e.transactionHash,
          settledAt: timestampOf(input.timestamps, e.blockNumber),
          lastChangeBlock: e.blockNumber,
        });
        const result = settledResult(chainId, bet, e, proof);
        touched.set(key, bet);
        results.set(key, result);
        updates.push(betUpdateRow("SETTLED", bet, result, block, network));
        break;
      }
      case "BetRefunded": {
        const before = current(e.betId, e);
        const bet = withLifecycle(before, {
          ...lifecycleOf(before),
          status: "REFUNDED",
          refundedBlock: e.blockNumber,
          refundedBlockHash: e.blockHash,
          refundedTx: e.transactionHash,
          refundedAt: timestampOf(input.timestamps, e.blockNumber),
          lastChangeBlock: e.blockNumber,
        });
        touched.set(key, bet);
        updates.push(betUpdateRow("REFUNDED", bet, null, block, network));
        break;
      }
    }
  }
  return { bets: [...touched.values()], results: [...results.values()], updates };
}

/** The seeds a settlement's public signals need, from the batch's own placements or the stored bets. */
export function settlementInputs(
  events: readonly BetEvent[],
  existing: ReadonlyMap<string, Pick<Bet, "serverSeedHash" | "clientSeed">>,
): { event: BetSettledEvent; bet: { serverSeedHash: Hex; clientSeed: Hex } }[] {
  const placed = new Map<string, { serverSeedHash: Hex; clientSeed: Hex }>();
  const out: { event: BetSettledEvent; bet: { serverSeedHash: Hex; clientSeed: Hex } }[] = [];
  for (const e of events) {
    if (e.kind === "BetPlaced") placed.set(betIdKey(e.betId), { serverSeedHash: e.serverSeedHash, clientSeed: e.clientSeed });
    if (e.kind !== "BetSettled") continue;
    const key = betIdKey(e.betId);
    const stored = existing.get(key);
    const bet = placed.get(key) ?? (stored ? { serverSeedHash: stored.serverSeedHash as Hex, clientSeed: stored.clientSeed as Hex } : undefined);
    if (!bet) throw new IndexerInvariantError(`BetSettled of bet ${e.betId}, which was never placed`, { details: `tx ${e.transactionHash}` });
    out.push({ event: e, bet });
  }
  return out;
}

/** Bet ids the batch settles or refunds without placing them: they must be read from the database. */
export function betsToLoad(events: readonly BetEvent[]): bigint[] {
  const placed = new Set<string>();
  const load = new Map<string, bigint>();
  for (const e of events) {
    const key = betIdKey(e.betId);
    if (e.kind === "BetPlaced") placed.add(key);
    else if (!placed.has(key)) load.set(key, e.betId);
  }
  return [...load.values()];
}
