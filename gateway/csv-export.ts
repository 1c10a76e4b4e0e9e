import { once } from "node:events";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Writable } from "node:stream";
import { compressionStreamFor, type CompressionSettings } from "../core/compression.ts";
import { ErrorCode } from "../core/errors.ts";
import { sendJson, type RouteHandler } from "../core/http.ts";
import type { Logger } from "../core/logger.ts";
import { betDepth, type NetworkDirectory } from "../core/networks.ts";
import { parseAddress, parseChainId } from "../core/scalars.ts";
import type { Bet } from "../prisma/generated/client.ts";
import { clientAddress } from "../core/client-address.ts";
import { rateLimitHeaders, refusal, type PointsBudgetSettings } from "./points-budget.ts";

// GET /wallets/{address}/bets.csv[?chainId=]: a wallet's whole history as CSV, newest first
// (docs/reference/csv.md). Streamed page by page (keyset pages of CSV_PAGE_ROWS rows, each written
// only once the previous one has drained), so memory stays flat for any wallet. The points budget
// (gateway/points-budget.ts) is charged per page before it is read — its statement and a full
// page of rows — and the rows the page did not hold are refunded; an export whose budget runs dry
// stops at a page boundary, ends cleanly and says so in a trailer.

/** Rows per keyset page. */
export const CSV_PAGE_ROWS = 1_000;
/** Points per exported row: a bet row read through an index and written, cheaper than through GraphQL (3 per bet, plus its fields). */
export const CSV_ROW_POINTS = 1;
/** Points per page read (one keyset statement), as a GraphQL page's statement. */
export const CSV_PAGE_POINTS = 10;

/** The route's path: the address is the only variable segment. */
export const CSV_PATH = /^\/wallets\/([^/]+)\/bets\.csv$/;

/** The trailer that tells a complete export from one the rate limit cut short. */
export const EXPORT_STATUS_TRAILER = "export-status";

/** Where the next page starts: the last row's sort key (placedBlock, log index, chain), descending. */
export interface ExportKey {
  placedBlock: bigint;
  logIndex: number;
  chainId: bigint;
}

/** A bet as the export reads it: the Bet row and, when settled, won / payout / verified. */
export type ExportRow = Bet & { result: { won: boolean; payout: { toFixed(digits: number): string }; verified: boolean } | null };

/**
 * One keyset page of a wallet's bets, newest first, strictly after `after` (wired by the composition
 * root to the history data). `signal` fires when the client has left: the page's statement is then
 * cancelled, or never sent if it still waits for a connection.
 */
export type WalletBetPages = (query: {
  wallet: string;
  chainId?: number;
  after?: ExportKey;
  take: number;
  signal?: AbortSignal;
}) => Promise<readonly ExportRow[]>;

export interface CsvExportOptions {
  pages: WalletBetPages;
  networks: NetworkDirectory;
  logger: Logger;
  compression?: CompressionSettings;
  rateLimit?: PointsBudgetSettings;
  /** Rows per page; default CSV_PAGE_ROWS (tests use fewer). */
  pageRows?: number;
}

export const CSV_COLUMNS = [
  "chainId",
  "betId",
  "player",
  "token",
  "stake",
  "game",
  "clientSeed",
  "serverSeedHash",
  "status",
  "placedBlock",
  "placedTx",
  "placedAt",
  "settledBlock",
  "settledTx",
  "settledAt",
  "refundedBlock",
  "refundedTx",
  "refundedAt",
  "confirmations",
  "finalized",
  "won",
  "payout",
  "verified",
] as const;

/** A CSV field (RFC 4180): quoted only when it must be. */
function field(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

const dec = (value: bigint | null) => (value === null ? "" : value.toString(10));

function csvLine(bet: ExportRow, depth: { confirmations: bigint; finalized: boolean }): string {
  const values = [
    bet.chainId.toString(10),
    bet.betId.toFixed(0),
    bet.player.toLowerCase(),
    bet.token.toLowerCase(),
    bet.stake.toFixed(0),
    field(bet.game),
    bet.clientSeed.toLowerCase(),
    bet.serverSeedHash.toLowerCase(),
    bet.status,
    dec(bet.placedBlock),
    bet.placedTx.toLowerCase(),
    dec(bet.placedAt),
    dec(bet.settledBlock),
    bet.settledTx?.toLowerCase() ?? "",
    dec(bet.settledAt),
    dec(bet.refundedBlock),
    bet.refundedTx?.toLowerCase() ?? "",
    dec(bet.refundedAt),
    depth.confirmations.toString(10),
    String(depth.finalized),
    bet.result ? String(bet.result.won) : "",
    bet.result ? bet.result.payout.toFixed(0) : "",
    bet.result ? String(bet.result.verified) : "",
  ];
  return `${values.join(",")}\r\n`;
}

function badInput(res: ServerResponse, message: string, argumentName: string): void {
  sendJson(res, 400, { errors: [{ message, extensions: { code: ErrorCode.BadUserInput, argumentName } }] }, { "cache-control": "no-store" });
}

/** Writes `chunk`, waiting for the stream to drain when its buffer is full (false: the client went away). */
async function write(out: Writable, chunk: string, gone: () => boolean): Promise<boolean> {
  if (gone()) return false;
  if (!out.write(chunk)) {
    // Both waits end together: a listener left behind per page would grow with the export.
    const done = new AbortController();
    await Promise.race([once(out, "drain", { signal: done.signal }), once(out, "close", { signal: done.signal })])
      .catch(() => undefined)
      .finally(() => done.abort());
  }
  return !gone();
}

/** A path segment percent-decoded; one that is not valid percent-encoding as written (parseAddress then says why it is no address). */
function decodedSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

export function createCsvExportRoute(options: CsvExportOptions): RouteHandler {
  const pageRows = options.pageRows ?? CSV_PAGE_ROWS;
  const pagePoints = CSV_PAGE_POINTS + pageRows * CSV_ROW_POINTS;
  const now = options.rateLimit?.now ?? Date.now;
  const charge = async (req: IncomingMessage, res: ServerResponse | undefined) => {
    if (!options.rateLimit) return { allowed: true, retryAfterSeconds: 0 };
    const { store, policy, trustProxyHops } = options.rateLimit;
    try {
      const decision = await store.take(clientAddress(req, trustProxyHops), now(), pagePoints);
      if (res && !res.headersSent) for (const [name, value] of rateLimitHeaders(policy, decision)) res.setHeader(name, value);
      if (!decision.allowed && res) {
        sendJson(res, 429, { errors: [refusal(policy, pagePoints, decision)] }, { "retry-after": String(decision.retryAfterSeconds) });
      }
      return decision;
    } catch (error) {
      // As the request guard: a store that fails lets the export through rather than failing it.
      options.logger.warn({ err: error instanceof Error ? error.message : String(error) }, "rate limit store unavailable: not limiting the export");
      return { allowed: true, retryAfterSeconds: 0 };
    }
  };

  /** Rows a page did not hold go back to the budget, in the background (as the GraphQL settlement). */
  const refund = (req: IncomingMessage, points: number) => {
    if (!options.rateLimit) return;
    const { store, trustProxyHops } = options.rateLimit;
    store.settle(clientAddress(req, trustProxyHops), now(), -points).catch(() => undefined);
  };

  return async (req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    if (req.method !== "GET" && req.method !== "HEAD") {
      sendJson(res, 405, { errors: [{ message: "Only GET and HEAD", extensions: { code: "METHOD_NOT_ALLOWED" } }] }, { allow: "GET, HEAD" });
      return;
    }
    let wallet: string;
    try {
      wallet = parseAddress(decodedSegment(CSV_PATH.exec(url.pathname)?.[1] ?? ""), "address");
    } catch (error) {
      return badInput(res, error instanceof Error ? error.message : "address is not an address", "address");
    }
    const rawChainIds = url.searchParams.getAll("chainId");
    if (rawChainIds.length > 1) return badInput(res, "chainId is given more than once", "chainId");
    const rawChainId = rawChainIds[0];
    let chainId: number | undefined;
    if (rawChainId !== undefined) {
      try {
        // The canonical decimal only (no sign, no leading zero): one spelling per network, as in the filename.
        chainId = parseChainId(/^[1-9][0-9]{0,15}$/.test(rawChainId) ? Number(rawChainId) : Number.NaN, "chainId");
      } catch (error) {
        return badInput(res, error instanceof Error ? error.message : "chainId is not a chain id", "chainId");
      }
      if (!(await options.networks.get(chainId))) return badInput(res, `Unknown chainId ${chainId}: see networkConfigs for the indexed networks`, "chainId");
    }

    const first = await charge(req, res);
    if (!first.allowed) return; // answered 429

    const compression = req.method === "GET" ? compressionStreamFor(req, options.compression) : undefined;
    const headers = {
      "content-type": "text/csv; charset=utf-8; header=present",
      "content-disposition": `attachment; filename="bets-${wallet}${chainId === undefined ? "" : `-${chainId}`}.csv"`,
      "cache-control": "no-store",
      vary: "accept-encoding",
      ...(compression ? { "content-encoding": compression.encoding } : {}),
    };
    if (req.method === "HEAD") {
      // No body, so no chunked encoding and no trailer (Node refuses to announce one); no row is
      // read, so the page of rows charged is refunded: a HEAD costs a page's statement.
      res.writeHead(200, headers);
      res.end();
      refund(req, pageRows * CSV_ROW_POINTS);
      return;
    }
    res.writeHead(200, { ...headers, trailer: EXPORT_STATUS_TRAILER });
    let closed = false;
    const left = new AbortController();
    res.once("close", () => {
      closed = true;
      compression?.stream.destroy();
      if (!res.writableFinished) left.abort(new Error("the client left the export"));
    });
    const gone = () => closed || res.destroyed;
    const out: Writable = compression ? compression.stream : res;
    if (compression) compression.stream.pipe(res);

    const networks = await options.networks.all();
    let status = "complete";
    let after: ExportKey | undefined;
    let more = await write(out, `${CSV_COLUMNS.join(",")}\r\n`, gone);
    for (let page = 0; more; page++) {
      if (page > 0) {
        const decision = await charge(req, undefined);
        if (!decision.allowed) {
          status = `truncated; retry-after=${decision.retryAfterSeconds}`;
          break;
        }
      }
      let rows: readonly ExportRow[];
      try {
        rows = await options.pages({ wallet, chainId, after, take: pageRows, signal: left.signal });
      } catch (error) {
        if (gone()) return; // its statement was cancelled: nobody to answer
        throw error;
      }
      if (rows.length < pageRows) refund(req, (pageRows - rows.length) * CSV_ROW_POINTS);
      let chunk = "";
      for (const bet of rows) chunk += csvLine(bet, betDepth(bet.lastChangeBlock, networks.get(Number(bet.chainId))));
      const last = rows.at(-1);
      if (last) after = { placedBlock: last.placedBlock, logIndex: last.placedLogIndex, chainId: last.chainId };
      if (chunk && !(await write(out, chunk, gone))) return;
      more = rows.length === pageRows;
    }
    if (gone()) return;
    res.addTrailers({ [EXPORT_STATUS_TRAILER]: status });
    out.end();
  };
}
