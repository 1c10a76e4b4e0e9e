// GraphiQL at `GET /graphql` for browsers, on the gateway's HTTP front under NODE_ENV=production:
// a browser (`Accept: text/html`, no `query`) gets the self-hosted page under the live page's CSP,
// every asset it names is served by this origin; GraphQL over GET and POST is unchanged, and a
// client that does not ask for HTML never gets the page. The pages are built into a temporary
// directory by web/build.ts and handed in the way the composition root does (bin/gateway.ts).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { silentLogger } from "../core/logger.ts";
import { startTestStack, type TestStack } from "../test/stack.ts";
import { buildLivePage } from "./build.ts";
import { createLivePage, LIVE_PAGE_CSP } from "./server.ts";

const BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
const QUERY = "{ __schema { queryType { name } } }";

let dir: string;
let t: TestStack;
beforeAll(async () => {
  vi.stubEnv("NODE_ENV", "production");
  dir = mkdtempSync(join(tmpdir(), "graphiql-"));
  await buildLivePage(join(dir, "dist"));
  const web = createLivePage({ logger: silentLogger(), distDir: join(dir, "dist") });
  t = await startTestStack({ bets: 4 }, { production: true, web });
}, 180_000);
afterAll(async () => {
  await t?.close();
  vi.unstubAllEnvs();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Every src/href of an HTML document. */
const referencesOf = (html: string) => [...html.matchAll(/(?:src|href)="([^"]*)"/g)].map((m) => m[1]!);

describe("GET /graphql from a browser (production mode)", () => {
  it("serves the self-hosted GraphiQL page under the live page's CSP, naming only same-origin assets", async () => {
    expect(process.env.NODE_ENV).toBe("production");
    const response = await fetch(`${t.url}/graphql`, { headers: { accept: BROWSER_ACCEPT } });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(response.headers.get("content-security-policy")).toBe(LIVE_PAGE_CSP);
    const html = await response.text();
    expect(html).toContain('id="graphiql"');
    expect(html).not.toMatch(/apollographql|https?:\/\//);
    expect(html).not.toMatch(/<script>|<style>|\sstyle=|\son[a-z]+=/);
    const references = referencesOf(html);
    expect(references).toEqual(expect.arrayContaining(["/assets/graphiql.js", "/assets/graphiql.css"]));
    for (const reference of references) expect(reference).toMatch(/^(\/assets\/|data:)/);
  });

  it("serves GraphiQL's script and stylesheet from this origin, with the CSP", async () => {
    const script = await fetch(`${t.url}/assets/graphiql.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(script.headers.get("content-security-policy")).toBe(LIVE_PAGE_CSP);
    const code = await script.text();
    expect(code).toContain("graphiql-container");
    expect(code).not.toMatch(/^\s*import\s/m);
    const style = await fetch(`${t.url}/assets/graphiql.css`);
    expect(style.status).toBe(200);
    expect(style.headers.get("content-type")).toBe("text/css; charset=utf-8");
    // No font, image or import from another host.
    expect(await style.text()).not.toMatch(/url\(\s*["']?(https?:)?\/\/|@import/);
  });

  it("still answers a GET query as GraphQL JSON, for a browser link too, with introspection on", async () => {
    const search = `?query=${encodeURIComponent(QUERY)}`;
    for (const accept of ["application/json", BROWSER_ACCEPT]) {
      const response = await fetch(`${t.url}/graphql${search}`, { headers: { accept } });
      expect(response.status, accept).toBe(200);
      expect(response.headers.get("content-type"), accept).toMatch(/^application\/(graphql-response\+)?json/);
      expect(await response.json(), accept).toEqual({ data: { __schema: { queryType: { name: "Query" } } }, extensions: { cost: expect.any(Object) } });
    }
    const posted = await t.gql(QUERY);
    expect(posted.data).toEqual({ __schema: { queryType: { name: "Query" } } });
  });

  it("answers an automatic persisted query sent by hash alone (no `query`) as GraphQL, whatever the Accept", async () => {
    const extensions = JSON.stringify({ persistedQuery: { version: 1, sha256Hash: "a".repeat(64) } });
    const response = await fetch(`${t.url}/graphql?extensions=${encodeURIComponent(extensions)}`, { headers: { accept: BROWSER_ACCEPT } });
    expect(response.headers.get("content-type")).toMatch(/^application\/(graphql-response\+)?json/);
    const body = (await response.json()) as { errors: { extensions: { code: string } }[] };
    expect(body.errors[0]!.extensions.code).toBe("PERSISTED_QUERY_NOT_FOUND");
  });

  it("never serves a page to a client that does not ask for HTML", async () => {
    for (const accept of ["application/json", "*/*"]) {
      const response = await fetch(`${t.url}/graphql`, { headers: { accept } });
      expect(response.status, accept).toBe(400);
      expect(response.headers.get("content-type"), accept).toMatch(/^application\/json/);
    }
  });
});
