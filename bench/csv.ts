// The CSV export's memory: RSS before, at its peak during, and after exporting wallets of very
// different sizes (the scale dataset's whales: 55 %, 5 % and 1 % of all bets), streamed through
// the real route (gateway/csv-export.ts over the history data's keyset pages) to a client that
// reads as fast as it can. Flat means the peak over the baseline does not grow with the rows. The
// peer: the same wallet read in one query (what a non-streaming export would hold in memory).
//
//   npx tsx bench/csv.ts [--bets 2000000] [--reuse] [--keep] [--peer-wallet 1]
//
// PostgreSQL at BENCH_DATABASE_URL; the dataset is bench/scale-data.ts's (generated, or reused).
import http from "node:http";
import { parseArgs } from "node:util";
import { DEFAULT_COMPRESSION } from "../core/compression.ts";
import { openDatabase } from "../core/db.ts";
import { silentLogger } from "../core/logger.ts";
import { NetworkDirectory } from "../core/networks.ts";
import { createCsvExportRoute, EXPORT_STATUS_TRAILER } from "../gateway/csv-export.ts";
import { walletBetsPage } from "../subgraphs/history/data.ts";
import { databaseUrl, dropPostgresDatabase } from "../test/db.ts";
import { benchConfig, fmt, log, table } from "./common.ts";
import { DEFAULT_PENDING_TAIL, generateScaleDataset, isGenerated, scaleWallet, type ScaleOptions } from "./scale-data.ts";

const { values: args } = parseArgs({
  options: {
    bets: { type: "string", default: "2000000" },
    reuse: { type: "boolean", default: false },
    keep: { type: "boolean", default: false },
    "peer-wallet": { type: "string", default: "1" },
  },
});
const bets = Number(args.bets);
const server = benchConfig.BENCH_DATABASE_URL;
const name = `bench_csv_${bets}`;
const options: ScaleOptions = { bets, pendingTail: DEFAULT_PENDING_TAIL };
if (!(args.reuse && (await isGenerated(server, name, options)))) {
  const started = performance.now();
  await generateScaleDataset(server, name, options, (line) => log(`  ${line}`));
  log(`generated ${bets} bets in ${fmt.s(performance.now() - started)}`);
}

const db = await openDatabase({ url: databaseUrl(name, server) });
const route = createCsvExportRoute({
  pages: (query) => walletBetsPage(db, query),
  networks: new NetworkDirectory(db),
  logger: silentLogger(),
  compression: DEFAULT_COMPRESSION,
});
const httpServer = http.createServer((req, res) => void route(req, res));
await new Promise<void>((resolve) => httpServer.listen(0, "127.0.0.1", resolve));
const base = `http://127.0.0.1:${(httpServer.address() as { port: number }).port}`;

const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`;

/** Exports `wallet`, sampling this process's RSS every 20 ms; the client only counts bytes and lines. */
async function exportWallet(wallet: string, acceptEncoding?: string) {
  global.gc?.();
  const before = process.memoryUsage().rss;
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 20);
  const started = performance.now();
  const result = await new Promise<{ bytes: number; lines: number; status: string }>((resolve, reject) => {
    const req = http.get(`${base}/wallets/${wallet}/bets.csv`, { headers: acceptEncoding ? { "accept-encoding": acceptEncoding } : {} }, (res) => {
      let bytes = 0;
      let lines = 0;
      res.on("data", (chunk: Buffer) => {
        bytes += chunk.length;
        if (!acceptEncoding) for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) lines++;
      });
      res.on("end", () => resolve({ bytes, lines, status: res.trailers[EXPORT_STATUS_TRAILER] ?? "?" }));
      res.on("error", reject);
    });
    req.on("error", reject);
  });
  const ms = performance.now() - started;
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage().rss);
  global.gc?.();
  const after = process.memoryUsage().rss;
  return { ...result, ms, before, peak, after };
}

try {
  log(`CSV export over ${bets} bets (${name}), node ${process.version}`);
  const rows: string[][] = [];
  for (const k of [3, 1, 0]) {
    const wallet = scaleWallet(k);
    const count = await db.prisma.bet.count({ where: { player: wallet } });
    // Brotli for the smaller wallets only: the big one's time is the database's, not the encoder's.
    for (const encoding of k === 0 ? [undefined] : [undefined, "br"]) {
      const r = await exportWallet(wallet, encoding);
      if (r.status !== "complete") throw new Error(`export of ${wallet} ended ${r.status}`);
      if (!encoding && r.lines !== count + 1) throw new Error(`export of ${wallet}: ${r.lines} lines for ${count} bets`);
      rows.push([
        `whale ${k}`,
        String(count),
        encoding ?? "identity",
        mb(r.bytes),
        fmt.s(r.ms),
        `${Math.round(count / (r.ms / 1000))}`,
        mb(r.before),
        mb(r.peak),
        mb(r.peak - r.before),
        mb(r.after),
      ]);
      log(`  whale ${k}: ${count} rows, ${encoding ?? "identity"}, ${fmt.s(r.ms)}, RSS ${mb(r.before)} → peak ${mb(r.peak)} → ${mb(r.after)}`);
    }
  }
  log();
  log(
    table(["wallet", "rows", "encoding", "bytes", "time", "rows/s", "RSS before", "RSS peak", "peak − before", "RSS after"], rows, [
      false,
      true,
      false,
      true,
      true,
      true,
      true,
      true,
      true,
      true,
    ]),
  );

  // The peer: the same rows in one query, held at once (what streaming avoids).
  const peerWallet = scaleWallet(Number(args["peer-wallet"]));
  global.gc?.();
  const before = process.memoryUsage().rss;
  const started = performance.now();
  // Bet rows only: an `include` of 100 000 results exceeds PostgreSQL's bind-parameter limit.
  const all = await db.prisma.bet.findMany({ where: { player: peerWallet } });
  const peak = process.memoryUsage().rss;
  log();
  log(
    `peer, one findMany of whale ${args["peer-wallet"]}: ${all.length} rows in ${fmt.s(performance.now() - started)}, RSS ${mb(before)} → ${mb(peak)} (+${mb(peak - before)})`,
  );
} finally {
  httpServer.close();
  await db.close();
  if (!args.keep && !args.reuse) await dropPostgresDatabase(name, server);
}
