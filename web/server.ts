// The live page at `/` of the API port: one static HTML file, a stylesheet, the page's script
// (web/page/main.ts and the client package, bundled by esbuild in memory on the first request, so
// there is no build output to commit or drift) and snarkjs' own browser build, served from
// node_modules. Everything is same-origin: the Content-Security-Policy names no other host.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import type { RouteHandler } from "../core/http.ts";
import type { Logger } from "../core/logger.ts";

const PAGE_DIR = fileURLToPath(new URL("./page/", import.meta.url));

/**
 * Only this origin, for everything. snarkjs compiles WebAssembly (`'wasm-unsafe-eval'`, which
 * allows no JavaScript eval) and runs its BN254 arithmetic in workers it creates from blob: URLs
 * (`worker-src blob:`; only same-origin script can mint those). No inline script or style.
 */
export const LIVE_PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "worker-src blob:",
  "connect-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
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

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

function asset(body: Buffer | string, type: string): Asset {
  const bytes = typeof body === "string" ? Buffer.from(body) : body;
  return { body: bytes, type, etag: `"${createHash("sha256").update(bytes).digest("base64url").slice(0, 27)}"` };
}

/** The page's script: web/page/main.ts with the client package and socket.io-client, one ES module. */
export async function bundleLivePageScript(): Promise<string> {
  const result = await build({
    entryPoints: [join(PAGE_DIR, "main.ts")],
    bundle: true,
    format: "esm",
    platform: "browser",
    target: ["es2022"],
    minify: true,
    legalComments: "none",
    write: false,
    logLevel: "silent",
    define: { "process.env.NODE_ENV": '"production"' },
  });
  return result.outputFiles[0]!.text;
}

function snarkjsBrowserBuild(): Buffer {
  // The package's exports map hides its build folder; its CommonJS entry lives in that folder.
  const entry = createRequire(import.meta.url).resolve("snarkjs");
  return readFileSync(join(dirname(entry), "snarkjs.min.js"));
}

export interface LivePage {
  routes: Record<string, RouteHandler>;
}

export function createLivePage(deps: { logger: Logger }): LivePage {
  let assets: Promise<Map<string, Asset>> | undefined;
  const load = () => {
    // Built once, on first use: servers that never serve the page never pay for the bundle.
    assets ??= (async () => {
      const started = performance.now();
      const script = await bundleLivePageScript();
      const built = new Map<string, Asset>([
        [LIVE_PAGE_PATHS.page, asset(readFileSync(join(PAGE_DIR, "index.html")), "text/html; charset=utf-8")],
        [LIVE_PAGE_PATHS.script, asset(script, "text/javascript; charset=utf-8")],
        [LIVE_PAGE_PATHS.style, asset(readFileSync(join(PAGE_DIR, "style.css")), "text/css; charset=utf-8")],
        [LIVE_PAGE_PATHS.snarkjs, asset(snarkjsBrowserBuild(), "text/javascript; charset=utf-8")],
      ]);
      deps.logger.info({ ms: Math.round(performance.now() - started), scriptBytes: script.length }, "live page built");
      return built;
    })();
    // A failed build is retried by the next request rather than remembered.
    assets.catch(() => (assets = undefined));
    return assets;
  };

  const serve = (path: string): RouteHandler => async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD" }).end();
      return;
    }
    let file: Asset;
    try {
      file = (await load()).get(path)!;
    } catch (error) {
      deps.logger.error({ err: error }, "live page build failed");
      res.writeHead(500, { "content-type": "text/plain; charset=utf-8" }).end("The live page could not be built");
      return;
    }
    const headers: Record<string, string> = {
      "content-type": file.type,
      etag: file.etag,
      // Revalidated on every load (a 304 costs nothing): a new deploy shows at once.
      "cache-control": "no-cache",
      "content-security-policy": LIVE_PAGE_CSP,
      "cross-origin-opener-policy": "same-origin",
    };
    if (req.headers["if-none-match"] === file.etag) {
      res.writeHead(304, headers).end();
      return;
    }
    res.writeHead(200, { ...headers, "content-length": String(file.body.length) });
    res.end(req.method === "HEAD" ? undefined : file.body);
  };

  return { routes: Object.fromEntries(Object.values(LIVE_PAGE_PATHS).map((path) => [path, serve(path)])) };
}
