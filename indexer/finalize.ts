/**
 * The FINALIZED announcements of the outbox (core/outbox.ts): which settled or refunded bets became
 * final in a transaction, claimed exactly once through the "Bet" marker column
 * `finalizedUpdateBlock`, and their rows. Used by indexer/store.ts inside its write transactions
 * (a commit, the head advance of touchCursor).
 */
import { lifecycleOf, withLifecycle } from "../core/bet-row.ts";
import type { NetworkEntry } from "../core/networks.ts";
import { betUpdateRow, type BetUpdateRow } from "../core/outbox.ts";
import { Prisma, type Bet, type BetResult } from "../prisma/generated/client.ts";
import { betIdKey } from "./apply.ts";

type Tx = Prisma.TransactionClient;
/** Bets read back per statement. */
const CHUNK = 5_000;

export type Claimed = { bet: Bet; result: BetResult | null };

/**
 * The claim of finalizeBets made as the bets are written, for those a commit writes settled or
 * refunded in a block already final (a backfill's, all of them): each row is written with its
 * marker (`finalizedUpdateBlock` = `lastChangeBlock`) rather than written, then updated again by
 * the claim's UPDATE (a second write of every row: each index of "Bet", the counters' triggers).
 * The indexer writes a bet only when it is new or PENDING in the table (apply.ts refuses any other
 * change), so its stored marker is null and writing it claims it, exactly once. A settled bet is
 * claimed only with its result, which its FINALIZED row carries.
 */
export function claimWritten(bets: readonly Bet[], results: readonly BetResult[], finalizedBlock: bigint): { bets: Bet[]; claimed: Claimed[] } {
  const resultOf = new Map(results.map((r) => [betIdKey(r.betId), r]));
  const claimed: Claimed[] = [];
  const marked = bets.map((bet) => {
    const result = resultOf.get(betIdKey(bet.betId)) ?? null;
    if (bet.status === "PENDING" || bet.lastChangeBlock > finalizedBlock || (bet.status === "SETTLED" && !result)) return bet;
    const claim = withLifecycle(bet, { ...lifecycleOf(bet), finalizedUpdateBlock: bet.lastChangeBlock });
    claimed.push({ bet: claim, result });
    return claim;
  });
  return { bets: marked, claimed };
}

/**
 * Claims, inside `tx`, every settled or refunded bet of the chain whose latest change is at or below
 * `finalizedBlock` (the published finality, finalizedBlockAt of core/finality.ts) and was not
 * announced yet, and returns one FINALIZED row per bet, oldest change first. The claim is a single
 * UPDATE of the marker column: the caller's commit makes marker and outbox rows durable together
 * (exactly once across restarts), a concurrent claimer blocks on the row locks and then skips the
 * rows, and a reorg rolls back only changes above the finality, which were never announced.
 *
 * `written.claimed`: the bets this transaction has just written already claimed (claimWritten),
 * with their results: announced with the others, in the same order, without being read back.
 */
export async function finalizeBets(
  tx: Tx,
  chainId: number,
  finalizedBlock: bigint,
  network: NetworkEntry,
  written: { claimed: readonly Claimed[] } = { claimed: [] },
): Promise<BetUpdateRow[]> {
  const id = BigInt(chainId);
  // The predicate repeats the partial index's ("Bet_finalized_pending_idx") so the planner uses it.
  const claimed = await tx.$queryRaw<{ betId: string }[]>`
    UPDATE "Bet" SET "finalizedUpdateBlock" = "lastChangeBlock"
    WHERE "chainId" = ${id} AND "finalizedUpdateBlock" IS NULL AND status <> 'PENDING' AND "lastChangeBlock" <= ${finalizedBlock}
    RETURNING "betId"::text AS "betId"`;
  const claimedBets: Claimed[] = [...written.claimed];
  for (let i = 0; i < claimed.length; i += CHUNK) {
    const bets = await tx.bet.findMany({
      where: { chainId: id, betId: { in: claimed.slice(i, i + CHUNK).map(({ betId }) => new Prisma.Decimal(betId)) } },
      include: { result: true },
    });
    for (const { result, ...bet } of bets) claimedBets.push({ bet, result });
  }
  // Oldest change first: (lastChangeBlock, placedBlock, placedLogIndex) is unique within a chain.
  claimedBets.sort(
    ({ bet: a }, { bet: b }) =>
      compareBig(a.lastChangeBlock, b.lastChangeBlock) || compareBig(a.placedBlock, b.placedBlock) || a.placedLogIndex - b.placedLogIndex,
  );
  return claimedBets.map(({ bet, result }) => {
    const hash = (bet.status === "SETTLED" ? bet.settledBlockHash : bet.refundedBlockHash) ?? "";
    return betUpdateRow("FINALIZED", bet, result, { number: bet.lastChangeBlock, hash }, network);
  });
}

const compareBig = (a: bigint, b: bigint) => (a < b ? -1 : a > b ? 1 : 0);
