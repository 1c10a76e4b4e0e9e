// The live page at `/` of the API port, served as files from web/dist/ (`npm run build`, see
// web/build.ts): one static HTML file, a stylesheet, the page's script (web/page/main.ts with the
// client package, one bundled ES module) and snarkjs' own browser build. Beside it GraphiQL, the
// page a browser gets at `GET /graphql` (web/page/graphiql.ts bundled with React and its
// stylesheet). Everything is same-origin: the Content-Security-Policy names no other host. The
// composition root hands these routes, and the GraphiQL handler, to the gateway's HTTP front.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { brotliCompress, constants, gzip } from "node:zlib";
import { type ContentEncoding, negotiateEncoding } from "../core/compression.ts";
import type { RouteHandler } from "../core/http.ts";
import type { Logger } from "../core/logger.ts";

/** Where `npm run build` writes the page (git-ignored). */
export const LIVE_PAGE_DIST = fileURLToPath(new URL("./dist/", import.meta.url));

/**
 * Only this origin, for everything. snarkjs compiles WebAssembly (`'wasm-unsafe-eval'`, which
 * allows no JavaScript eval) and runs its BN254 arithmetic in workers it creates from blob: URLs
 * (`worker-src blob:`; only same-origin script can mint those). GraphiQL's stylesheet carries its
 * fonts inline (`font-src data:`). No inline script or style.
 */
export const LIVE_PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "worker-src blob:",
  "connect-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** Where the page's files are served (the page refers to them by these paths). */
export const LIVE_PAGE_PATHS = {
  page: "/",
  script: "/assets/app.js",
  style: "/assets/style.css",
  snarkjs: "/assets/snarkjs.min.js",
} as const;

/** GraphiQL: its page is answered at the GraphQL path to browsers (core/http.ts), its assets beside the live page's. */
export const GRAPHIQL_PATHS = {
  page: "/graphql",
  script: "/assets/graphiql.js",
  style: "/assets/graphiql.css",
} as const;

const ALL_PATHS = [...Object.values(LIVE_PAGE_PATHS), ...Object.values(GRAPHIQL_PATHS)];

const TYPES: Record<string, string> = { ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8" };

/** The file under the build directory that a page path is served from. */
export function livePageFile(path: string): string {
  if (path === LIVE_PAGE_PATHS.page) return "index.html";
  if (path === GRAPHIQL_PATHS.page) return "graphiql.html";
  return path.slice(1);
}

/** Files smaller than this go as they are: the encoding would save less than its headers cost. */
const MIN_COMPRESSED_BYTES = 1024;

interface Representation {
  body: Buffer;
  etag: string;
}

interface Asset extends Representation {
  type: string;
  /** Compressed once, on the first request that accepts each encoding; then served from memory. */
  encoded: Map<ContentEncoding, Promise<Representation>>;
}

const brotli = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

// Static files are compressed once, so harder than per-request answers (core/compression.ts);
// Brotli's top levels (10–11) cost seconds for a megabyte of script for a few percent more.
function encode(asset: Asset, encoding: ContentEncoding): Promise<Representation> {
  let encoded = asset.encoded.get(encoding);
  if (!encoded) {
    const bytes =
      encoding === "br"
        ? brotli(asset.body, { params: { [constants.BROTLI_PARAM_QUALITY]: 9, [constants.BROTLI_PARAM_SIZE_HINT]: asset.body.length } })
        : gzipAsync(asset.body, { level: 9 });
    // A validator per representation (RFC 9110 §8.8.3): a cache must not answer a br ETag with gzip bytes.
    encoded = bytes.then((body) => ({ body, etag: `${asset.etag.slice(0, -1)}-${encoding}"` }));
    asset.encoded.set(encoding, encoded);
  }
  return encoded;
}

function readAsset(distDir: string, path: string): Asset {
  const file = livePageFile(path);
  const body = readFileSync(join(distDir, file));
  const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`;
  return { body, type: TYPES[file.slice(file.lastIndexOf("."))]!, etag, encoded: new Map() };
}

export interface LivePage {
  /** The live page and every asset (GraphiQL's included), by path. */
  routes: Record<string, RouteHandler>;
  /** GraphiQL's page, for the HTTP front to answer a browser's `GET /graphql` with. */
  graphiql: RouteHandler;
}

export function createLivePage(deps: { logger: Logger; distDir?: string }): LivePage {
  const distDir = deps.distDir ?? LIVE_PAGE_DIST;
  let assets: Map<string, Asset> | undefined;
  const load = () => {
    // Read once, on first use; a missing build is looked for again by the next request.
    assets ??= new Map(ALL_PATHS.map((path) => [path, readAsset(distDir, path)]));
    return assets;
  };

  const serve =
    (path: string): RouteHandler =>
    async (req: IncomingMessage, res: ServerResponse) => {
      if (req.method !== "GET" && req.method !== "HEAD") {
        res.writeHead(405, { allow: "GET, HEAD" }).end();
        return;
      }
      let file: Asset;
      try {
        file = load().get(path)!;
      } catch (error) {
        deps.logger.error({ err: error, distDir }, "the live page is not built: run `npm run build`");
        res.writeHead(500, { "content-type": "text/plain; charset=utf-8" }).end("The live page is not built (npm run build)");
        return;
      }
      const encoding = file.body.length >= MIN_COMPRESSED_BYTES ? negotiateEncoding(req.headers["accept-encoding"]) : undefined;
      let sent: Representation = file;
      if (encoding) {
        try {
          sent = await encode(file, encoding);
        } catch (error) {
          file.encoded.delete(encoding);
          deps.logger.warn({ err: error, path, encoding }, "compressing a page asset failed: sending it as it is");
        }
      }
      const headers: Record<string, string> = {
        "content-type": file.type,
        etag: sent.etag,
        vary: "accept-encoding",
        ...(sent !== file && encoding ? { "content-encoding": encoding } : {}),
        // Revalidated on every load (a 304 costs nothing): a new deploy shows at once.
        "cache-control": "no-cache",
        "content-security-policy": LIVE_PAGE_CSP,
        "cross-origin-opener-policy": "same-origin",
      };
      if (req.headers["if-none-match"] === sent.etag) {
        res.writeHead(304, headers).end();
        return;
      }
      res.writeHead(200, { ...headers, "content-length": String(sent.body.length) });
      res.end(req.method === "HEAD" ? undefined : sent.body);
    };

  const assetPaths = ALL_PATHS.filter((path) => path !== GRAPHIQL_PATHS.page);
  return { routes: Object.fromEntries(assetPaths.map((path) => [path, serve(path)])), graphiql: serve(GRAPHIQL_PATHS.page) };
}
