// The raw floor (bench/floor.ts raw): what a hand-written service on `pg` alone sends and writes
// for the benchmark's two operations. No ORM, no project data layer: one named (prepared)
// statement per request, numbers cast to text in SQL, the answer's JSON built from the rows. The
// bytes it writes are checked against the `data` member of the service's answer (bench/gateways.ts).
// A faster honest floor replaces this one; it does not work out Cache-Control (the service does).
import pg from "pg";
import { checkBetIdCount, checkPageSize } from "../core/arguments.ts";
import { parseAddress, parseChainId, parseUInt256 } from "../core/scalars.ts";
import { encodeCursor, queryFingerprint } from "../subgraphs/history/cursor.ts";
import { BENCH_CURSOR_KEY } from "./common.ts";
import type { Floor, FloorAnswer } from "./floor.ts";

/** `betResults`: the ids in their order (unknown ones answered null), each bet's result if any. */
const BET_RESULTS_SQL = `
  SELECT b."betId"::text AS "betId", r."outcome"::text AS outcome, r."won", r."payout"::text AS payout, r."proof", to_json(r."publicSignals") AS "publicSignals", r."verified"
  FROM unnest($2::numeric[]) WITH ORDINALITY AS wanted("betId", position)
  LEFT JOIN "Bet" b ON b."chainId" = $1 AND b."betId" = wanted."betId"
  LEFT JOIN "BetResult" r ON r."chainId" = b."chainId" AND r."betId" = b."betId"
  ORDER BY wanted.position`;

/** A wallet's newest bets (one more than the page, for hasNextPage) with network and result, and its count from the per-wallet counters. */
const PLAYER_BETS_SQL = `
  SELECT b."chainId"::int AS "chainId", b."betId"::text AS "betId", b."player", b."stake"::text AS stake, b."game", b."status"::text AS status,
         b."placedBlock"::text AS "placedBlock", b."placedLogIndex" AS "logIndex", n."name", n."confirmations",
         r."outcome"::text AS outcome, r."won", r."payout"::text AS payout, r."proof"->'pi_a' AS "piA", to_json(r."publicSignals") AS "publicSignals", r."verified",
         (SELECT coalesce(sum(c."bets"), 0)::int FROM "PlayerBetCount" c WHERE c."player" = $1) AS "totalCount"
  FROM (SELECT "chainId", "betId", "player", "stake", "game", "status", "placedBlock", "placedLogIndex" FROM "Bet" WHERE "player" = $1
        ORDER BY "placedBlock" DESC, "placedLogIndex" DESC, "chainId" DESC LIMIT $2) b
  LEFT JOIN "Network" n ON n."chainId" = b."chainId"
  LEFT JOIN "BetResult" r ON r."chainId" = b."chainId" AND r."betId" = b."betId"
  ORDER BY b."placedBlock" DESC, b."placedLogIndex" DESC, b."chainId" DESC`;

interface ResultColumns {
  outcome: string | null;
  won: boolean | null;
  payout: string | null;
  publicSignals: string[] | null;
  verified: boolean | null;
}

interface BetResultRow extends ResultColumns {
  betId: string | null;
  proof: { pi_a: string[]; pi_b: string[][]; pi_c: string[] } | null;
}

interface PlayerBetRow extends ResultColumns {
  chainId: number;
  betId: string;
  player: string;
  stake: string;
  game: string;
  status: string;
  placedBlock: string;
  logIndex: number;
  name: string | null;
  confirmations: number | null;
  piA: string[] | null;
  totalCount: number;
}

export async function openRawFloor(url: string): Promise<Floor> {
  // The subgraphs' pool (core/db.ts): its size, and the connections it opened kept.
  const pool = new pg.Pool({ connectionString: url, max: 10, min: 10, application_name: "bench-floor-raw" });

  async function betResults(variables: Record<string, unknown>): Promise<FloorAnswer> {
    const chainId = parseChainId(variables.chainId);
    const betIds = (variables.betIds as unknown[]).map((id) => parseUInt256(id));
    checkBetIdCount(betIds.length);
    const { rows } = await pool.query<BetResultRow>({ name: "floor-bet-results", text: BET_RESULTS_SQL, values: [chainId, betIds] });
    const out = rows.map((row) =>
      row.betId === null
        ? null
        : {
            betId: row.betId,
            result:
              row.won === null || row.proof === null
                ? null
                : {
                    outcome: row.outcome,
                    won: row.won,
                    payout: row.payout,
                    proof: { piA: row.proof.pi_a, piB: row.proof.pi_b, piC: row.proof.pi_c, publicSignals: row.publicSignals, verified: row.verified ?? false },
                  },
          },
    );
    return { body: `${JSON.stringify({ data: { betResults: out } })}\n` };
  }

  async function playerBets(variables: Record<string, unknown>): Promise<FloorAnswer> {
    const wallet = parseAddress(variables.wallet);
    const first = typeof variables.first === "number" ? variables.first : 20;
    checkPageSize(first);
    const { rows } = await pool.query<PlayerBetRow>({ name: "floor-player-bets", text: PLAYER_BETS_SQL, values: [wallet, first + 1] });
    const page = rows.slice(0, first);
    const nodes = page.map((bet) => ({
      chainId: bet.chainId,
      betId: bet.betId,
      player: bet.player.toLowerCase(),
      stake: bet.stake,
      game: bet.game,
      status: bet.status,
      placedBlock: bet.placedBlock,
      network: bet.name === null ? null : { chainId: bet.chainId, name: bet.name, confirmations: bet.confirmations },
      result:
        bet.won === null
          ? null
          : {
              outcome: bet.outcome,
              won: bet.won,
              payout: bet.payout,
              proof: { piA: bet.piA, publicSignals: bet.publicSignals, verified: bet.verified ?? false },
            },
    }));
    const last = page.at(-1);
    const endCursor = last
      ? encodeCursor(queryFingerprint([wallet, null, null, null, null, null, "DESC"], BENCH_CURSOR_KEY), {
          placedBlock: BigInt(last.placedBlock),
          logIndex: last.logIndex,
          chainId: BigInt(last.chainId),
        })
      : null;
    const data = { playerBets: { totalCount: rows[0]?.totalCount ?? 0, nodes, pageInfo: { hasNextPage: rows.length > first, endCursor } } };
    return { body: `${JSON.stringify({ data })}\n` };
  }

  return { operations: { BenchBetResults: betResults, BenchPlayerBets: playerBets }, close: () => pool.end() };
}
