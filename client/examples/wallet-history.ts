// Walks a wallet's whole history with a filter, page by page, over hash-only GETs (persisted
// queries, the CDN-friendly form; the client falls back to the full query once per new hash), then
// says which indexed head per network the last answer was read at, and asks again "not before"
// that head (minBlock).
//
//   npx tsx client/examples/wallet-history.ts 0x70997970c51812dc3a010c7d01b50e0d17dc79c8
//   npx tsx client/examples/wallet-history.ts <wallet> --api http://127.0.0.1:4000 --status SETTLED --first 20
//
// Imports only the package's entry point ("../index.ts"): the packed package ships a copy that
// imports it by name (client/scripts/pack-examples.ts), which client/pack.test.ts runs.
import { parseArgs } from "node:util";
import { createGraphQLClient, pageThrough, playerBetsPageQuery, playerBetsPages, type BetStatus } from "../index.ts";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    api: { type: "string", default: "http://127.0.0.1:4000" },
    status: { type: "string", default: "SETTLED" },
    first: { type: "string", default: "20" },
  },
});
const wallet = positionals[0];
if (!wallet) {
  process.stderr.write("usage: wallet-history.ts <wallet> [--api URL] [--status PLACED|SETTLED|REFUNDED] [--first N]\n");
  process.exit(2);
}
const status = values.status as BetStatus;
const first = Number(values.first);
// What went over the wire: a GET whose URL carries no query text is a hash-only one.
const sent = { hashOnlyGets: 0, withText: 0 };
const api = createGraphQLClient({
  url: `${values.api}/graphql`,
  persistedQueries: true,
  fetch: (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if ((init?.method ?? "GET") === "GET" && !url.searchParams.has("query")) sent.hashOnlyGets++;
    else sent.withText++;
    return fetch(input, init);
  },
});

let pages = 0;
let bets = 0;
const seen = new Set<string>();
for await (const page of pageThrough(api, playerBetsPages({ wallet, filter: { status: [status] }, first }))) {
  pages++;
  bets += page.nodes.length;
  for (const bet of page.nodes) seen.add(`${bet.chainId}:${bet.betId}`);
  process.stdout.write(`page ${pages}: ${page.nodes.map((bet) => `${bet.chainId}/${bet.betId}`).join(" ") || "(empty)"}\n`);
}
process.stdout.write(`${bets} ${status} bets of ${wallet} in ${pages} pages (${seen.size} distinct)\n`);

const { data, readAt } = await api.requestWithMeta(playerBetsPageQuery, { wallet, filter: { status: [status] }, first: 1 });
for (const head of readAt) process.stdout.write(`read at chain ${head.chainId} block ${head.block} (${head.hash})\n`);
// The same question "not before" those heads: answered (never by an older database).
const again = await api.request(playerBetsPageQuery, {
  wallet,
  filter: { status: [status] },
  first: 1,
  minBlock: readAt.map(({ chainId, block }) => ({ chainId, block })),
});
process.stdout.write(`not before those heads: ${again.playerBets.totalCount} ${status} bets (was ${data.playerBets.totalCount})\n`);
process.stdout.write(`requests: ${sent.hashOnlyGets} hash-only GETs, ${sent.withText} with the query text\n`);
