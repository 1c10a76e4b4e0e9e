// The floor of the peer gateway benchmark (bench/gateways.ts): one Node process that answers the
// benchmark's two gateway queries with no GraphQL at all. It sends the statements the owning
// subgraphs send (it calls their data functions: subgraphs/results/data.ts, subgraphs/history/data.ts,
// subgraphs/networks/data.ts, the same Prisma client and pool) and writes the JSON bytes the gateway
// answers; bench/gateways.ts checks those bytes against the gateway's before any load. What is left
// between a gateway and this process is the price of GraphQL (parsing, validation, planning, the
// subgraph hops, per-field execution), which is what the benchmark measures.
//
//   serve: BENCH_SERVE_DATABASE_URL=... npx tsx bench/floor.ts   → prints { pid, role: "floor", url }
//
// Apollo Server ends every JSON body with a newline; so does this. It knows exactly two operations, told apart by their name (BenchBetResults, BenchPlayerBets) and
// read from the variables; anything else is answered 400. Stops on SIGTERM/SIGINT.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { pino } from "pino";
import { stopOnSignals } from "../bin/wiring.ts";
import { checkBetIdCount, checkPageSize } from "../core/arguments.ts";
import { openDatabase, type Database } from "../core/db.ts";
import { MAX_AGE } from "../core/max-age.ts";
import { NetworkDirectory } from "../core/networks.ts";
import { formatUInt256, parseAddress, parseChainId, parseUInt256 } from "../core/scalars.ts";
import { betKey } from "../subgraphs/kit/bet-key.ts";
import { betMaxAge, betMaxAgeAt } from "../subgraphs/kit/cache-hints.ts";
import { encodeCursor, queryFingerprint } from "../subgraphs/history/cursor.ts";
import { betFilterConditions, betPage, countBets } from "../subgraphs/history/data.ts";
import { networksOf } from "../subgraphs/networks/data.ts";
import { betsWithResults } from "../subgraphs/results/data.ts";
import type { BetResultModel } from "../subgraphs/results/mappers.ts";
import { BENCH_CURSOR_KEY, benchConfig } from "./common.ts";

const logger = pino({ name: "bench-floor", level: benchConfig.BENCH_LOG_LEVEL ?? "warn" }, pino.destination(2));
const url = benchConfig.BENCH_SERVE_DATABASE_URL;
if (!url) {
  process.stderr.write("bench/floor.ts: BENCH_SERVE_DATABASE_URL is not set\n");
  process.exit(2);
}
const db: Database = await openDatabase({ url, logger, migrate: false });
// The subgraphs' own network snapshot (1 s TTL): the same periodic statement they send.
const networks = new NetworkDirectory(db);

interface Answer {
  body: string;
  maxAge: number;
}

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
async function betResults(variables: Record<string, unknown>): Promise<Answer> {
  const chainId = parseChainId(variables.chainId);
  const betIds = (variables.betIds as unknown[]).map((id) => parseUInt256(id));
  checkBetIdCount(betIds.length);
  const network = await networks.require(chainId);
  const rows = await betsWithResults(
    db,
    betIds.map((betId) => betKey(chainId, betId)),
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
async function playerBets(variables: Record<string, unknown>): Promise<Answer> {
  const wallet = parseAddress(variables.wallet);
  const first = typeof variables.first === "number" ? variables.first : 20;
  checkPageSize(first);
  const conditions = betFilterConditions({ wallet });
  const fingerprint = queryFingerprint([wallet, null, null, null, null, null, "DESC"], BENCH_CURSOR_KEY);
  const [page, totalCount] = await Promise.all([betPage(db, conditions.where, { direction: "DESC", take: first + 1 }), countBets(db, conditions)]);
  const rows = page.slice(0, first);
  const chainIds = [...new Set(rows.map((r) => Number(r.chainId)))];
  const [results, nets] = await Promise.all([
    betsWithResults(
      db,
      rows.map((r) => betKey(r.chainId, r.betId.toFixed(0))),
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

const OPERATIONS: Record<string, (variables: Record<string, unknown>) => Promise<Answer>> = {
  BenchBetResults: betResults,
  BenchPlayerBets: playerBets,
};

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const request = JSON.parse(await readBody(req)) as { query?: string; variables?: Record<string, unknown> };
  const name = /^\s*query\s+(\w+)/.exec(request.query ?? "")?.[1];
  const operation = name ? OPERATIONS[name] : undefined;
  if (!operation) {
    res.writeHead(400, { "content-type": "application/json" }).end('{"errors":[{"message":"the floor knows two operations"}]}');
    return;
  }
  const answer = await operation(request.variables ?? {});
  res
    .writeHead(200, {
      "content-type": "application/graphql-response+json; charset=utf-8",
      "content-length": Buffer.byteLength(answer.body),
      "cache-control": `max-age=${answer.maxAge}, public`,
    })
    .end(answer.body);
}

const server = createServer((req, res) => {
  handle(req, res).catch((error: unknown) => {
    logger.error({ err: error }, "floor request failed");
    if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" }).end('{"errors":[{"message":"internal"}]}');
  });
});
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
process.stdout.write(`${JSON.stringify({ pid: process.pid, role: "floor", url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql` })}\n`);
stopOnSignals(logger, async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await db.close();
});
