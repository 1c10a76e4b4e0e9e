// The floor "through the data functions" (bench/floor.ts data): the benchmark's two operations
// answered by the owning subgraphs' own data functions (subgraphs/results/data.ts,
// subgraphs/history/data.ts, subgraphs/networks/data.ts: the same Prisma client, pool and
// statements), writing the gateway's JSON bytes. What is left between it and the raw floor
// (bench/floor-raw.ts) is the data layer's own cost.
import type { Logger } from "../core/logger.ts";
import { checkBetIdCount, checkPageSize } from "../core/arguments.ts";
import { openDatabase } from "../core/db.ts";
import { MAX_AGE } from "../core/max-age.ts";
import { NetworkDirectory } from "../core/networks.ts";
import { formatUInt256, parseAddress, parseChainId, parseUInt256 } from "../core/scalars.ts";
import { betKey } from "../subgraphs/kit/bet-key.ts";
import { betMaxAge, betMaxAgeAt } from "../subgraphs/kit/cache-hints.ts";
import { encodeCursor, queryFingerprint } from "../subgraphs/history/cursor.ts";
import { betPage, countBets } from "../subgraphs/history/data.ts";
import { betFilterConditions } from "../subgraphs/history/filter-conditions.ts";
import { networksOf } from "../subgraphs/networks/data.ts";
import { betsWithResults } from "../subgraphs/results/data.ts";
import type { BetResultModel } from "../subgraphs/results/mappers.ts";
import { BENCH_CURSOR_KEY } from "./common.ts";
import type { Floor, FloorAnswer } from "./floor.ts";

/** What the results subgraph reads for these operations: neither selects a proof's solidityCalldata. */
const NO_CALLDATA = { solidityCalldata: false };

export async function openDataFloor(url: string, logger: Logger): Promise<Floor> {
  const db = await openDatabase({ url, logger, migrate: false });
  // The subgraphs' own network snapshot (1 s TTL): the same periodic statement they send.
  const networks = new NetworkDirectory(db);

  /** The full proof selection of BenchBetResults, in its selection order. */
  function fullResult(r: BetResultModel | null) {
    if (!r) return null;
    return {
      outcome: r.outcome,
      won: r.won,
      payout: formatUInt256(r.payout),
      proof: { piA: r.proof.piA, piB: r.proof.piB, piC: r.proof.piC, publicSignals: r.proof.publicSignals, verified: r.proof.verified },
    };
  }

  /** What the results subgraph does for `betResults`: one statement, the hints folded into one max-age. */
  async function betResults(variables: Record<string, unknown>): Promise<FloorAnswer> {
    const chainId = parseChainId(variables.chainId);
    const betIds = (variables.betIds as unknown[]).map((id) => parseUInt256(id));
    checkBetIdCount(betIds.length);
    const network = await networks.require(chainId);
    const rows = await betsWithResults(
      db,
      betIds.map((betId) => betKey(chainId, betId)),
      NO_CALLDATA,
    );
    let maxAge: number = MAX_AGE.final;
    const out = [];
    for (const [i, row] of rows.entries()) {
      maxAge = Math.min(maxAge, row ? betMaxAgeAt(network, row) : MAX_AGE.live);
      out.push(row ? { betId: betIds[i]!, result: fullResult(row.result) } : null);
    }
    return { body: `${JSON.stringify({ data: { betResults: out } })}\n`, maxAge };
  }

  /** History's page and count, then results' and networks' statements for the page (as the gateway's plan runs them: both at once). */
  async function playerBets(variables: Record<string, unknown>): Promise<FloorAnswer> {
    const wallet = parseAddress(variables.wallet);
    const first = typeof variables.first === "number" ? variables.first : 20;
    checkPageSize(first);
    const conditions = betFilterConditions({ wallet });
    const fingerprint = queryFingerprint([wallet, null, null, null, null, null, "DESC"], BENCH_CURSOR_KEY);
    const [{ bets: page }, totalCount] = await Promise.all([betPage(db, conditions.filter, { direction: "DESC", take: first + 1 }), countBets(db, conditions)]);
    const rows = page.slice(0, first);
    const chainIds = [...new Set(rows.map((r) => Number(r.chainId)))];
    const [results, nets] = await Promise.all([
      betsWithResults(
        db,
        rows.map((r) => betKey(r.chainId, formatUInt256(r.betId))),
        NO_CALLDATA,
      ),
      networksOf(db, chainIds),
    ]);
    const netById = new Map(nets.map((n) => [Number(n.chainId), n]));
    let maxAge: number = MAX_AGE.final;
    const nodes = [];
    for (const [i, bet] of rows.entries()) {
      const chainId = Number(bet.chainId);
      const net = netById.get(chainId);
      const found = results[i] ?? null;
      maxAge = Math.min(maxAge, await betMaxAge(networks, bet), found ? await betMaxAge(networks, found) : MAX_AGE.live);
      const r = found?.result ?? null;
      nodes.push({
        chainId,
        betId: formatUInt256(bet.betId),
        player: bet.player.toLowerCase(),
        stake: formatUInt256(bet.stake),
        game: bet.game,
        status: bet.status,
        placedBlock: formatUInt256(bet.placedBlock),
        network: net ? { chainId, name: net.name, confirmations: net.confirmations } : null,
        result: r
          ? {
              outcome: r.outcome,
              won: r.won,
              payout: formatUInt256(r.payout),
              proof: { piA: r.proof.piA, publicSignals: r.proof.publicSignals, verified: r.proof.verified },
            }
          : null,
      });
    }
    const last = rows.at(-1);
    const endCursor = last ? encodeCursor(fingerprint, { placedBlock: last.placedBlock, logIndex: last.placedLogIndex, chainId: last.chainId }) : null;
    const data = { playerBets: { totalCount, nodes, pageInfo: { hasNextPage: page.length > first, endCursor } } };
    return { body: `${JSON.stringify({ data })}\n`, maxAge };
  }

  return { operations: { BenchBetResults: betResults, BenchPlayerBets: playerBets }, close: () => db.close() };
}
