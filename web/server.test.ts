// The live page's routes on a plain HTTP server: the CSP on every file, only same-origin references
// in the HTML, the bundle built from web/page/main.ts, snarkjs' browser build, and revalidation.
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../core/logger.ts";
import { createLivePage, LIVE_PAGE_CSP, LIVE_PAGE_PATHS } from "./server.ts";

let server: http.Server;
let url: string;

beforeAll(async () => {
  const { routes } = createLivePage({ logger: silentLogger() });
  server = http.createServer((req, res) => {
    const route = routes[new URL(req.url ?? "/", "http://x").pathname];
    if (route) return void route(req, res);
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

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
