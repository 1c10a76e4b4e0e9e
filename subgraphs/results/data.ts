import type { Database } from "../../core/db.ts";
import { splitBetKey } from "../kit/bet-key.ts";
import type { BetResultModel, BetWithResult } from "./mappers.ts";

// Every statement of the results subgraph.

type Row = Omit<BetResultModel, "won" | "verified"> & {
  key: string;
  lastChangeBlock: string;
  status: string;
  won: boolean | null;
  verified: boolean | null;
};

/**
 * Bets by "chainId:betId" key with their result (null while unsettled), null for an unknown bet:
 * one statement for a whole batch, the bets LEFT JOIN their results. Prisma's relation joins go
 * through JSON, which turns 256-bit numerics into floats; this query casts them to text instead.
 * The ids arrive as two arrays joined through unnest: a fixed statement shape that plans in a
 * fraction of what a 100-tuple IN list costs (measured by bench/graphql.ts).
 */
export async function betsWithResults(db: Database, keys: readonly string[]): Promise<(BetWithResult | null)[]> {
  const ids = keys.map(splitBetKey);
  const chainIds = ids.map((id) => id.chainId.toString());
  const betIds = ids.map((id) => id.betId);
  const rows = await db.prisma.$queryRaw<Row[]>`
    SELECT b."chainId"::text || ':' || b."betId"::text AS key, b."lastChangeBlock"::text AS "lastChangeBlock", b."status"::text AS status,
           r."outcome"::text AS outcome, r."won", r."payout"::text AS payout, r."proof",
           r."publicSignals", r."solidityCalldata", r."verified"
    FROM unnest(${chainIds}::text[]::bigint[], ${betIds}::text[]::numeric[]) AS wanted("chainId", "betId")
    JOIN "Bet" b ON b."chainId" = wanted."chainId" AND b."betId" = wanted."betId"
    LEFT JOIN "BetResult" r ON r."chainId" = b."chainId" AND r."betId" = b."betId"`;
  const byKey = new Map(
    rows.map((row): [string, BetWithResult] => {
      const result: BetResultModel | null =
        row.won === null
          ? null
          : {
              outcome: row.outcome,
              won: row.won,
              payout: row.payout,
              proof: row.proof,
              publicSignals: row.publicSignals,
              solidityCalldata: row.solidityCalldata,
              verified: row.verified ?? false,
            };
      return [row.key, { chainId: Number(splitBetKey(row.key).chainId), result, lastChangeBlock: BigInt(row.lastChangeBlock), status: row.status }];
    }),
  );
  return keys.map((key) => byKey.get(key) ?? null);
}
