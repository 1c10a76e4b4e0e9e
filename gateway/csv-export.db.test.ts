// GET /wallets/{address}/bets.csv: one header row and exactly playerBets.totalCount rows (newest
// first, the same order and values as GraphQL), per network with ?chainId=; bad input → 400 in the
// REST error shape; compressed like JSON; charged to the rate limit by pages of rows, an export whose
// bucket runs dry ending cleanly with a `truncated` trailer.
import http, { request } from "node:http";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_COMPRESSION } from "../core/compression.ts";
import { silentLogger } from "../core/logger.ts";
import { NetworkDirectory } from "../core/networks.ts";
import { walletBetsPage } from "../subgraphs/history/data.ts";
import { startTestStack, type TestStack } from "../test/stack.ts";
import { createCsvExportRoute, CSV_COLUMNS, CSV_PAGE_POINTS, CSV_ROW_POINTS, EXPORT_STATUS_TRAILER } from "./csv-export.ts";
import { createMemoryRateLimitStore } from "../core/token-bucket.ts";

let t: TestStack;
beforeAll(async () => {
  t = await startTestStack();
});
afterAll(() => t?.close());

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  trailers: NodeJS.Dict<string>;
  body: Buffer;
}

/** A raw GET (fetch would decompress by itself and drop the trailers). */
function get(url: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, trailers: res.trailers, body: Buffer.concat(chunks) }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

const lines = (body: Buffer | string) =>
  body
    .toString("utf8")
    .split("\r\n")
    .filter((line) => line !== "");

interface PlayerBets {
  playerBets: {
    totalCount: number;
    nodes: { chainId: number; betId: string; stake: string; status: string; result: { won: boolean; payout: string; proof: { verified: boolean } } | null }[];
  };
}

async function playerBets(wallet: string, chainId?: number): Promise<PlayerBets["playerBets"]> {
  const response = await t.gql<PlayerBets>(
    `query ($wallet: Address!, $filter: PlayerBetsFilter) { playerBets(wallet: $wallet, filter: $filter, first: 100) { totalCount nodes { chainId betId stake status result { won payout proof { verified } } } } }`,
    { wallet, filter: chainId === undefined ? null : { chainId } },
  );
  return response.data!.playerBets;
}

describe("GET /wallets/{address}/bets.csv", () => {
  it("has a header and exactly totalCount rows, newest first, as GraphQL has them", async () => {
    const wallet = t.fixtures.whale;
    const answer = await get(`${t.url}/wallets/${wallet.toUpperCase().replace("0X", "0x")}/bets.csv`);
    expect(answer.status).toBe(200);
    expect(answer.headers["content-type"]).toMatch(/^text\/csv/);
    expect(answer.trailers[EXPORT_STATUS_TRAILER]).toBe("complete");
    const [header, ...rows] = lines(answer.body);
    expect(header).toBe(CSV_COLUMNS.join(","));
    const graphql = await playerBets(wallet);
    expect(graphql.totalCount).toBeGreaterThan(1);
    expect(rows).toHaveLength(graphql.totalCount);
    const column = (row: string, name: (typeof CSV_COLUMNS)[number]) => row.split(",")[CSV_COLUMNS.indexOf(name)];
    // The first page of GraphQL, field by field, in the same order.
    graphql.nodes.forEach((node, i) => {
      const row = rows[i]!;
      expect([column(row, "chainId"), column(row, "betId"), column(row, "stake"), column(row, "status")]).toEqual([
        String(node.chainId),
        node.betId,
        node.stake,
        node.status,
      ]);
      expect([column(row, "won"), column(row, "payout"), column(row, "verified")]).toEqual(
        node.result ? [String(node.result.won), node.result.payout, String(node.result.proof.verified)] : ["", "", ""],
      );
      expect(column(row, "player")).toBe(wallet.toLowerCase());
    });
    // Per network.
    const chainId = graphql.nodes[0]!.chainId;
    const one = await get(`${t.url}/wallets/${wallet}/bets.csv?chainId=${chainId}`);
    expect(lines(one.body)).toHaveLength(1 + (await playerBets(wallet, chainId)).totalCount);
    // A wallet without bets: the header alone.
    const empty = await get(`${t.url}/wallets/0x${"ab".repeat(20)}/bets.csv`);
    expect(lines(empty.body)).toEqual([CSV_COLUMNS.join(",")]);
  });

  it("answers bad input with 400 and the REST error shape", async () => {
    const indexedChainId = (await playerBets(t.fixtures.whale)).nodes[0]!.chainId;
    expect((await get(`${t.url}/wallets/${t.fixtures.whale}/bets.csv?chainId=${indexedChainId}`)).status).toBe(200);
    for (const [path, argumentName] of [
      [`/wallets/0x1234/bets.csv`, "address"],
      [`/wallets/0x${"zz".repeat(20)}/bets.csv`, "address"],
      // Not percent-encoding at all: said in the address's own words, not "URI malformed".
      [`/wallets/%ZZ/bets.csv`, "address"],
      [`/wallets/${t.fixtures.whale}/bets.csv?chainId=abc`, "chainId"],
      [`/wallets/${t.fixtures.whale}/bets.csv?chainId=0`, "chainId"],
      [`/wallets/${t.fixtures.whale}/bets.csv?chainId=999999`, "chainId"],
      // An indexed network's id, written otherwise: not the canonical decimal, and given twice.
      [`/wallets/${t.fixtures.whale}/bets.csv?chainId=00${indexedChainId}`, "chainId"],
      [`/wallets/${t.fixtures.whale}/bets.csv?chainId=+${indexedChainId}`, "chainId"],
      [`/wallets/${t.fixtures.whale}/bets.csv?chainId=`, "chainId"],
      [`/wallets/${t.fixtures.whale}/bets.csv?chainId=${indexedChainId}&chainId=${indexedChainId}`, "chainId"],
    ] as const) {
      const answer = await get(`${t.url}${path}`);
      expect(answer.status, path).toBe(400);
      expect(answer.headers["content-type"]).toMatch(/^application\/json/);
      const body = JSON.parse(answer.body.toString("utf8")) as { errors: { message: string; extensions: { code: string; argumentName: string } }[] };
      expect(body.errors[0]!.extensions, path).toEqual({ code: "BAD_USER_INPUT", argumentName });
      expect(body.errors[0]!.message, path).toContain(argumentName);
    }
  });

  it("is compressed like JSON: Brotli, else gzip, to the same bytes as identity", async () => {
    const url = `${t.url}/wallets/${t.fixtures.whale}/bets.csv`;
    const identity = await get(url);
    expect(identity.headers["content-encoding"]).toBeUndefined();
    const br = await get(url, { "accept-encoding": "gzip, br" });
    expect(br.headers["content-encoding"]).toBe("br");
    expect(br.headers.vary).toMatch(/accept-encoding/i);
    expect(brotliDecompressSync(br.body).equals(identity.body)).toBe(true);
    expect(br.body.length).toBeLessThan(identity.body.length / 2);
    const gzip = await get(url, { "accept-encoding": "gzip" });
    expect(gzip.headers["content-encoding"]).toBe("gzip");
    expect(gunzipSync(gzip.body).equals(identity.body)).toBe(true);
  });
});

describe("the points budget, charged by rows", () => {
  const PAGE_ROWS = 5;
  /** What a page costs before it is read: its statement and a full page of rows. */
  const PAGE = CSV_PAGE_POINTS + PAGE_ROWS * CSV_ROW_POINTS;
  /** The route on its own server: pages of 5 rows, a budget of `capacity` points on a frozen clock. */
  async function server(capacity: number) {
    const policy = { capacity, refillPerSecond: 1 };
    const route = createCsvExportRoute({
      pages: (query) => walletBetsPage(t.db, query),
      networks: new NetworkDirectory(t.db),
      logger: silentLogger(),
      compression: DEFAULT_COMPRESSION,
      rateLimit: { store: createMemoryRateLimitStore(policy), policy, trustProxyHops: 0, now: () => 7_000_000 },
      pageRows: PAGE_ROWS,
    });
    const s = http.createServer((req, res) => void route(req, res));
    await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
    return { url: `http://127.0.0.1:${(s.address() as { port: number }).port}`, close: () => new Promise((resolve) => s.close(resolve)) };
  }

  it("charges each page its statement and its rows (the rows a page did not hold refunded), ends a dry export cleanly with a truncated trailer, then answers 429", async () => {
    const wallet = t.fixtures.whale;
    const { totalCount } = await playerBets(wallet);
    const pages = Math.floor(totalCount / PAGE_ROWS) + 1; // the last page is short (or empty) and ends the export
    expect(pages).toBeGreaterThan(3);
    const price = pages * CSV_PAGE_POINTS + totalCount * CSV_ROW_POINTS;

    // A budget of exactly the export's price, plus one full page to take before the short last one is refunded.
    const enough = await server(price + PAGE);
    const full = await get(`${enough.url}/wallets/${wallet}/bets.csv`);
    expect(full.trailers[EXPORT_STATUS_TRAILER]).toBe("complete");
    expect(lines(full.body)).toHaveLength(1 + totalCount);
    expect(full.headers["ratelimit-limit"]).toBe(String(price + PAGE));
    expect(full.headers["ratelimit-remaining"]).toBe(String(price)); // after the first page's charge
    // What is left is one page's worth (the refund of the short last page included), so one more export starts ...
    const second = await get(`${enough.url}/wallets/${wallet}/bets.csv`);
    expect(second.status).toBe(200);
    expect(second.headers["ratelimit-remaining"]).toBe("0");
    expect(second.trailers[EXPORT_STATUS_TRAILER]).toMatch(/^truncated; retry-after=\d+$/);
    expect(lines(second.body)).toHaveLength(1 + PAGE_ROWS);
    // ... and the next is refused before any row.
    const refused = await get(`${enough.url}/wallets/${wallet}/bets.csv`);
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body.toString("utf8"))).toMatchObject({ errors: [{ extensions: { code: "RATE_LIMITED" } }] });
    await enough.close();

    // Three pages' worth: three pages of 5 rows, then a clean end that says why.
    const short = await server(3 * PAGE);
    const cut = await get(`${short.url}/wallets/${wallet}/bets.csv`, { "accept-encoding": "gzip" });
    expect(cut.status).toBe(200);
    expect(cut.trailers[EXPORT_STATUS_TRAILER]).toMatch(/^truncated; retry-after=\d+$/);
    const rows = lines(gunzipSync(cut.body));
    expect(rows).toHaveLength(1 + 15);
    expect(rows).toEqual(lines(full.body).slice(0, 16));
    await short.close();
  });

  it("answers a HEAD (found: Node threw ERR_HTTP_TRAILER_INVALID, a 500 through the gateway) and charges it a page's statement only", async () => {
    const wallet = t.fixtures.whale;
    const capacity = 10 * PAGE;
    const s = await server(capacity);
    const head = () =>
      new Promise<number>((resolve, reject) => {
        const req = request(`${s.url}/wallets/${wallet}/bets.csv`, { method: "HEAD" }, (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode ?? 0));
        });
        req.on("error", reject);
        req.end();
      });
    expect([await head(), await head()]).toEqual([200, 200]);
    // The refund is settled in the background: the next GET's charge reads it (a frozen clock, nothing refills).
    const after = await get(`${s.url}/wallets/${wallet}/bets.csv`);
    expect(after.headers["ratelimit-remaining"]).toBe(String(capacity - 2 * CSV_PAGE_POINTS - PAGE));
    await s.close();
  });
});
