import type { Database, ReadStatement } from "../../core/db.ts";
import { splitBetKey } from "../kit/bet-key.ts";
import { betResultOf, resultColumns, type ResultColumns } from "../kit/bet-result.ts";
import type { BetWithResult } from "./mappers.ts";

// Every statement of the results subgraph.

type Row = ResultColumns & { key: string; lastChangeBlock: string; status: string };
type ChainRow = ResultColumns & { betId: string; lastChangeBlock: string; status: string };

/**
 * The statement of betsWithResults (through the driver: Prisma's per-row conversion was most of a
 * betResults answer's CPU). `solidityCalldata` only when $3: ~850 bytes a row, more than the rest of
 * a proof, sent and decoded for nothing when the operation does not ask for it.
 */
const BETS_WITH_RESULTS: ReadStatement = {
  name: "results-bets-with-results",
  text: `
    SELECT b."chainId"::text || ':' || b."betId"::text AS key, b."lastChangeBlock"::text AS "lastChangeBlock", b."status"::text AS status,
           ${resultColumns("r", "$3::boolean")}
    FROM unnest($1::text[]::bigint[], $2::text[]::numeric[]) AS wanted("chainId", "betId")
    JOIN "Bet" b ON b."chainId" = wanted."chainId" AND b."betId" = wanted."betId"
    LEFT JOIN "BetResult" r ON r."chainId" = b."chainId" AND r."betId" = b."betId"`,
};

/** betResults' statement: one network's bets by id, as BETS_WITH_RESULTS reads them (no "chainId:betId" key made and split per bet). */
const BETS_ON_CHAIN: ReadStatement = {
  name: "results-bets-on-chain",
  text: `
    SELECT b."betId"::text AS "betId", b."lastChangeBlock"::text AS "lastChangeBlock", b."status"::text AS status,
           ${resultColumns("r", "$3::boolean")}
    FROM unnest($2::text[]::numeric[]) AS wanted("betId")
    JOIN "Bet" b ON b."chainId" = $1::bigint AND b."betId" = wanted."betId"
    LEFT JOIN "BetResult" r ON r."chainId" = b."chainId" AND r."betId" = b."betId"`,
};

/** What betsWithResults reads beyond what every result has. */
export interface ResultReads {
  /** The proofs' `solidityCalldata` (read only for operations that can select it: kit/selection.ts). */
  solidityCalldata: boolean;
}

/**
 * Bets by "chainId:betId" key with their result (null while unsettled), null for an unknown bet:
 * one statement for a whole batch, the bets LEFT JOIN their results, 256-bit numerics cast to
 * text. The ids arrive as two arrays joined through unnest: a fixed statement shape that plans in a
 * fraction of what a 100-tuple IN list costs (measured by bench/graphql.ts), prepared once per
 * connection. A key given twice is read once and answered at both positions.
 */
export async function betsWithResults(
  db: Database,
  keys: readonly string[],
  reads: ResultReads = { solidityCalldata: true },
): Promise<(BetWithResult | null)[]> {
  // A list may repeat an id (betResults allows it): each distinct bet is read once, every position answered from it.
  const ids = [...new Set(keys)].map(splitBetKey);
  const chainIds = ids.map((id) => id.chainId.toString());
  const betIds = ids.map((id) => id.betId);
  const rows = await db.read<Row>(BETS_WITH_RESULTS, [chainIds, betIds, reads.solidityCalldata]);
  const byKey = new Map(
    rows.map((row): [string, BetWithResult] => {
      const result = betResultOf(row);
      return [row.key, { chainId: Number(splitBetKey(row.key).chainId), result, lastChangeBlock: BigInt(row.lastChangeBlock), status: row.status }];
    }),
  );
  return keys.map((key) => byKey.get(key) ?? null);
}

/**
 * betsWithResults for ids of one network (betResults' list, canonical decimal text as the UInt256
 * scalar parsed them): the same answer, one statement, each distinct bet read once.
 */
export async function betsOnChain(db: Database, chainId: number, betIds: readonly string[], reads: ResultReads): Promise<(BetWithResult | null)[]> {
  const rows = await db.read<ChainRow>(BETS_ON_CHAIN, [String(chainId), [...new Set(betIds)], reads.solidityCalldata]);
  const byId = new Map(
    rows.map((row): [string, BetWithResult] => [
      row.betId,
      { chainId, result: betResultOf(row), lastChangeBlock: BigInt(row.lastChangeBlock), status: row.status },
    ]),
  );
  return betIds.map((betId) => byId.get(betId) ?? null);
}

/** A "FairnessCounter" row as fairnessCounters reads it (numbers as text), with its settled bets not final yet. */
export interface FairnessCounterRow {
  chainId: string;
  game: string;
  settledBets: string;
  wonBets: string;
  refundedBets: string;
  totalStake: string;
  totalPayout: string;
  outcomeHistogram: string[];
  /** Settled bets whose settlement block is above the network's finality bound. */
  notFinal: string;
}

/**
 * The fairness counters of the given networks (and game), with how many of each game's settled
 * bets are not final yet: those whose settlement block is above `bounds[i]` (core/finality.ts
 * finalityBound), few and found through the index on ("chainId", "lastChangeBlock") — only the
 * last `confirmations` blocks are read, never the game's history. One statement, so the counters
 * and that count are of one snapshot.
 */
export async function fairnessCounters(
  db: Database,
  chainIds: readonly number[],
  bounds: readonly bigint[],
  game: string | null,
): Promise<FairnessCounterRow[]> {
  const ids = chainIds.map(String);
  const limits = bounds.map(String);
  return db.prisma.$queryRaw<FairnessCounterRow[]>`
    WITH wanted AS (SELECT * FROM unnest(${ids}::text[]::bigint[], ${limits}::text[]::bigint[]) AS w("chainId", bound)),
    not_final AS (
      SELECT b."chainId", b."game", count(*) AS n
      FROM wanted JOIN "Bet" b ON b."chainId" = wanted."chainId" AND b."lastChangeBlock" > wanted.bound
      WHERE b."status" = 'SETTLED' AND (${game}::text IS NULL OR b."game" = ${game}::text)
      GROUP BY 1, 2
    )
    SELECT c."chainId"::text AS "chainId", c."game", c."settledBets"::text AS "settledBets", c."wonBets"::text AS "wonBets",
           c."refundedBets"::text AS "refundedBets", c."totalStake"::text AS "totalStake", c."totalPayout"::text AS "totalPayout",
           c."outcomeHistogram"::text[] AS "outcomeHistogram", coalesce(nf.n, 0)::text AS "notFinal"
    FROM wanted JOIN "FairnessCounter" c ON c."chainId" = wanted."chainId"
    LEFT JOIN not_final nf ON nf."chainId" = c."chainId" AND nf."game" = c."game"
    WHERE ${game}::text IS NULL OR c."game" = ${game}::text`;
}
