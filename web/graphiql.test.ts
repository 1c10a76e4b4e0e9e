// GraphiQL in a real browser: Debian's Chromium driven by playwright-core opens `GET /graphql` on a
// gateway run in production mode (NODE_ENV=production, `production: true`). The page must load
// under its CSP with every request going to this origin, read the schema by introspection, and
// run queries: the default one with the run button, then one set in the editor.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { silentLogger } from "../core/logger.ts";
import { binaryService, describeWith } from "../test/services.ts";
import { startTestStack, type TestStack } from "../test/stack.ts";
import { buildLivePage } from "./build.ts";
import { createLivePage, LIVE_PAGE_CSP } from "./server.ts";

const CHROMIUM = "/usr/bin/chromium";
const ARTIFACTS = new URL("../test/.artifacts/", import.meta.url).pathname;

describeWith(binaryService(CHROMIUM, "apt-get install -y chromium"), "GraphiQL in Chromium (production mode)", () => {
  let dir: string;
  let t: TestStack;
  let browser: Browser;
  let page: Page;
  const requested: string[] = [];
  const consoleErrors: string[] = [];
  /** Bodies of the GraphQL answers the page received, by the operation it sent. */
  const answers: { request: string; status: number; body: string }[] = [];

  beforeAll(async () => {
    vi.stubEnv("NODE_ENV", "production");
    dir = mkdtempSync(join(tmpdir(), "graphiql-browser-"));
    await buildLivePage(join(dir, "dist"));
    t = await startTestStack({ bets: 4 }, { production: true, web: createLivePage({ logger: silentLogger(), distDir: join(dir, "dist") }) });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    });
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.on("request", (request) => requested.push(request.url()));
    page.on("console", (message) => {
      if (message.type() === "error" || /Refused to/.test(message.text())) consoleErrors.push(message.text());
    });
    page.on("pageerror", (error) => consoleErrors.push(error.message));
    page.on("response", async (response) => {
      if (new URL(response.url()).pathname !== "/graphql" || response.request().method() !== "POST") return;
      answers.push({ request: response.request().postData() ?? "", status: response.status(), body: await response.text().catch(() => "") });
    });
    // Counted in the page itself: a violation the console did not report still shows here.
    // (Scripts as strings: this file is typed for Node, without the DOM.)
    await page.addInitScript({
      content: `window.cspViolations = [];
        document.addEventListener("securitypolicyviolation", (event) => window.cspViolations.push(event.violatedDirective + " " + event.blockedURI));`,
    });
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    vi.unstubAllEnvs();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("serves GraphiQL, which reads the schema by introspection and runs the default query, all same-origin", async () => {
    expect(process.env.NODE_ENV).toBe("production");
    const response = await page.goto(`${t.url}/graphql`);
    expect(response?.status()).toBe(200);
    expect(response?.headers()["content-security-policy"]).toBe(LIVE_PAGE_CSP);
    await page.waitForSelector(".graphiql-container", { timeout: 30_000 });
    // Introspection answered (production mode) and GraphiQL took the schema: the docs show Query.
    await expect.poll(() => answers.find((a) => a.request.includes("__schema"))?.status, { timeout: 30_000 }).toBe(200);
    expect(JSON.parse(answers.find((a) => a.request.includes("__schema"))!.body)).toMatchObject({ data: { __schema: { queryType: { name: "Query" } } } });

    await page.click(".graphiql-execute-button");
    const result = page.locator(".result-window");
    await expect.poll(() => result.textContent(), { timeout: 30_000 }).toContain('"networkConfigs"');
    expect(await result.textContent()).toContain('"indexedBlock"');
    expect(consoleErrors).toEqual([]);
  }, 120_000);

  it("runs a query set in the editor and shows its answer", async () => {
    const before = answers.length;
    // Typed as a user types it (CodeMirror closes brackets itself and types over the closing ones).
    await page.click(".graphiql-query-editor .CodeMirror");
    await page.keyboard.press("Control+A");
    await page.keyboard.press("Delete");
    await page.keyboard.type("query Health { health { status version } }", { delay: 10 });
    await page.keyboard.press("Escape"); // closes the completion list, if open
    expect(await page.evaluate<string>(`document.querySelector(".graphiql-query-editor .CodeMirror").CodeMirror.getValue()`)).toBe(
      "query Health { health { status version } }",
    );
    // At once: GraphiQL learns the operation's name from the editor only after a pause.
    await page.keyboard.press("Control+Enter");
    await expect.poll(() => page.locator(".result-window").textContent(), { timeout: 30_000 }).toContain('"health"');
    const sent = () => answers.slice(before).find((a) => a.request.includes("Health"));
    // The answer is recorded once its body is read, which can be after GraphiQL shows it.
    await expect.poll(() => sent()?.status, { timeout: 10_000 }).toBe(200);
    expect((JSON.parse(sent()!.body) as { data: { health: { status: string } } }).data.health.status).toMatch(/^(OK|DEGRADED|DOWN)$/);

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: `${ARTIFACTS}graphiql.png` });
    expect(consoleErrors).toEqual([]);
    expect(await page.evaluate<string[]>("window.cspViolations")).toEqual([]);
    // Every request went to this origin (data: URLs are in the page itself).
    const origins = new Set(requested.filter((url) => !url.startsWith("data:")).map((url) => new URL(url).origin));
    expect(origins).toEqual(new Set([new URL(t.url).origin]));
    expect(requested).toEqual(expect.arrayContaining([`${t.url}/assets/graphiql.js`, `${t.url}/assets/graphiql.css`]));
  }, 120_000);
});
