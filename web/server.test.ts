// The live page's routes on a plain HTTP server, over a build made by web/build.ts in a temporary
// directory: the CSP on every file, only same-origin references in the HTML, the bundle built from
// web/page/main.ts, snarkjs' browser build, revalidation; a clear 500 while nothing is built; and
// the staleness check `npm start` rebuilds on.
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../core/logger.ts";
import { buildLivePage, ensureLivePageBuilt, livePageStaleness } from "./build.ts";
import { createLivePage, GRAPHIQL_PATHS, LIVE_PAGE_CSP, LIVE_PAGE_PATHS, type LivePage } from "./server.ts";

let dir: string;
const servers: http.Server[] = [];

async function serve(page: LivePage): Promise<string> {
  const server = http.createServer((req, res) => {
    const route = page.routes[new URL(req.url ?? "/", "http://x").pathname];
    if (route) return void route(req, res);
    res.writeHead(404).end();
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

let url: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "live-page-"));
  await buildLivePage(join(dir, "dist"));
  url = await serve(createLivePage({ logger: silentLogger(), distDir: join(dir, "dist") }));
});
afterAll(async () => {
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  rmSync(dir, { recursive: true, force: true });
});

describe("live page routes", () => {
  it("serves the page under a CSP that allows only this origin, WebAssembly and blob: workers", async () => {
    const response = await fetch(`${url}/`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const csp = response.headers.get("content-security-policy")!;
    expect(csp).toBe(LIVE_PAGE_CSP);
    const directives = Object.fromEntries(csp.split("; ").map((d) => [d.split(" ")[0], d.split(" ").slice(1).join(" ")]));
    expect(directives).toMatchObject({ "default-src": "'none'", "script-src": "'self' 'wasm-unsafe-eval'", "connect-src": "'self'", "worker-src": "blob:" });
    expect(csp).not.toMatch(/unsafe-inline|'unsafe-eval'|https?:|\*/);
    const html = await response.text();
    const references = [...html.matchAll(/(?:src|href)="([^"]*)"/g)].map((m) => m[1]!);
    expect(references.length).toBeGreaterThan(0);
    for (const reference of references) expect(reference).toMatch(/^(\/assets\/|data:)/);
    expect(html).not.toMatch(/<script>|<style>|\sstyle=|\son[a-z]+=/); // nothing inline: the CSP would block it
  });

  it("serves the bundled script and snarkjs' browser build, with the CSP and an ETag (304 on revalidation)", async () => {
    const script = await fetch(`${url}${LIVE_PAGE_PATHS.script}`);
    expect(script.status).toBe(200);
    expect(script.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    const code = await script.text();
    expect(code).toContain("bets:subscribe");
    expect(code).not.toMatch(/^\s*import\s/m); // one self-contained module: no bare imports left for the browser
    const etag = script.headers.get("etag")!;
    const again = await fetch(`${url}${LIVE_PAGE_PATHS.script}`, { headers: { "if-none-match": etag } });
    expect(again.status).toBe(304);

    const snarkjs = await fetch(`${url}${LIVE_PAGE_PATHS.snarkjs}`);
    expect(snarkjs.status).toBe(200);
    expect(snarkjs.headers.get("content-security-policy")).toBe(LIVE_PAGE_CSP);
    expect((await snarkjs.text()).startsWith("var snarkjs=")).toBe(true);
    expect((await fetch(`${url}${LIVE_PAGE_PATHS.style}`, { method: "POST" })).status).toBe(405);
  });
});

describe("the build (web/dist/)", () => {
  it("answers 500 naming `npm run build` while nothing is built, and serves the files once they are", async () => {
    const distDir = join(dir, "later");
    const missing = await serve(createLivePage({ logger: silentLogger(), distDir }));
    const before = await fetch(`${missing}/`);
    expect(before.status).toBe(500);
    expect(await before.text()).toContain("npm run build");
    await buildLivePage(distDir);
    expect((await fetch(`${missing}/`)).status).toBe(200);
  });

  it("is stale when missing, or when an output was changed, and fresh once rebuilt", async () => {
    const distDir = join(dir, "stale");
    expect(livePageStaleness(distDir)).toBe("not built");
    expect(await ensureLivePageBuilt(distDir)).toBe("not built");
    expect(livePageStaleness(distDir)).toBeUndefined();
    expect(await ensureLivePageBuilt(distDir)).toBeUndefined();
    appendFileSync(join(distDir, "assets", "app.js"), "\n// edited");
    expect(livePageStaleness(distDir)).toBe("assets/app.js is missing or was changed");
    await ensureLivePageBuilt(distDir);
    expect(livePageStaleness(distDir)).toBeUndefined();
  });

  it("records every source it read, the client package's included, and is stale when one changes", async () => {
    const distDir = join(dir, "inputs");
    const manifest = await buildLivePage(distDir);
    expect(Object.keys(manifest.inputs)).toEqual(
      expect.arrayContaining(["web/page/main.ts", "web/page/index.html", "client/realtime.ts", "client/wire/events.ts", "web/build.ts"]),
    );
    // As if web/page/main.ts had been edited since the build.
    writeFileSync(join(distDir, "manifest.json"), JSON.stringify({ ...manifest, inputs: { ...manifest.inputs, "web/page/main.ts": "0".repeat(64) } }));
    expect(livePageStaleness(distDir)).toBe("web/page/main.ts changed");
  });

  it("bundles only production dependencies: the image builds the pages after `npm ci --omit=dev`", async () => {
    const pkg = JSON.parse(readFileSync("package.json", "utf8")) as { dependencies: Record<string, string> };
    const manifest = await buildLivePage(join(dir, "deps"));
    // The package each bundled file belongs to: its outermost node_modules/<name> (or <@scope/name>).
    const bundled = new Set(
      Object.keys(manifest.inputs).flatMap((path) => {
        const match = /^node_modules\/(@[^/]+\/[^/]+|[^/]+)\//.exec(path);
        return match ? [match[1]!] : [];
      }),
    );
    expect([...bundled]).toEqual(expect.arrayContaining(["graphiql", "react", "react-dom", "socket.io-client"]));
    // Nested packages arrive with their top-level parent; a top-level one must be a dependency or one of theirs.
    // npm's lockfile marks what `npm ci --omit=dev` leaves out with `dev` (a `devOptional` one is an
    // optional dependency of a production package too, and stays).
    const lock = JSON.parse(readFileSync("package-lock.json", "utf8")) as { packages: Record<string, { dev?: boolean }> };
    const devOnly = [...bundled].filter((name) => {
      const entry = lock.packages[`node_modules/${name}`];
      return !(name in pkg.dependencies) && (!entry || entry.dev === true);
    });
    expect(devOnly).toEqual([]);
  });

  it("sends the assets compressed when the browser accepts it (GraphiQL's script is over a megabyte as it is)", async () => {
    // A raw request: fetch() would ask for and undo the encoding itself, hiding what was sent.
    const get = (path: string, acceptEncoding?: string, method = "GET") =>
      new Promise<{ headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
        const request = http.request(`${url}${path}`, { method, headers: acceptEncoding ? { "accept-encoding": acceptEncoding } : {} }, (response) => {
          const chunks: Buffer[] = [];
          response.on("data", (chunk: Buffer) => chunks.push(chunk));
          response.on("end", () => resolve({ headers: response.headers, body: Buffer.concat(chunks) }));
        });
        request.on("error", reject).end();
      });
    for (const path of [GRAPHIQL_PATHS.script, LIVE_PAGE_PATHS.script, LIVE_PAGE_PATHS.snarkjs]) {
      const plain = await get(path);
      expect(plain.headers["content-encoding"], path).toBeUndefined();
      expect(plain.headers.vary, path).toMatch(/accept-encoding/i);
      const br = await get(path, "gzip, deflate, br");
      expect(br.headers["content-encoding"], path).toBe("br");
      expect(Number(br.headers["content-length"])).toBe(br.body.length);
      expect(br.body.length, path).toBeLessThan(plain.body.length * 0.4);
      expect(brotliDecompressSync(br.body).equals(plain.body), path).toBe(true);
      const gz = await get(path, "gzip");
      expect(gz.headers["content-encoding"], path).toBe("gzip");
      expect(gunzipSync(gz.body).equals(plain.body), path).toBe(true);
      // Each representation has its own validator, and a HEAD says what a GET would send.
      expect(new Set([plain.headers.etag, br.headers.etag, gz.headers.etag]).size).toBe(3);
      const head = await get(path, "br", "HEAD");
      expect(head.headers["content-length"]).toBe(br.headers["content-length"]);
      expect(head.body.length).toBe(0);
    }
  });
});
