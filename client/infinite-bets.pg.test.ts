// useInfiniteBets in a real browser: Debian's Chromium (playwright-core) loads a React page
// (test/browser/infinite-bets-page.ts, bundled by esbuild) served at the gateway's origin over the
// fixture set, and clicks "load more" until the last page. The rows must be the wallet's filtered
// history exactly: no duplicate, no gap, against the database itself. PostgreSQL only: one browser
// run is enough, and the paging itself runs on both databases in client/pages.db.test.ts.
import { existsSync, mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestStack, type TestStack } from "../test/stack.ts";

const CHROMIUM = "/usr/bin/chromium";
const ARTIFACTS = fileURLToPath(new URL("../test/.artifacts/", import.meta.url));
const PAGE_ENTRY = fileURLToPath(new URL("../test/browser/infinite-bets-page.ts", import.meta.url));
const ROOT = fileURLToPath(new URL("..", import.meta.url));
// In CI the browser must be there (.ci/run installs it): a missing one fails instead of skipping.
const skip = !existsSync(CHROMIUM) && !process.env.CI;
const PAGE_SIZE = 7;

describe.skipIf(skip)("useInfiniteBets in Chromium", () => {
  let t: TestStack;
  let browser: Browser;

  beforeAll(async () => {
    t = await startTestStack({ bets: 120 });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it("walks a wallet's whole SETTLED history by 'load more': no duplicate, no gap against the database", async () => {
    const bundle = await build({
      entryPoints: [PAGE_ENTRY],
      absWorkingDir: ROOT,
      bundle: true,
      format: "esm",
      platform: "browser",
      target: ["es2022"],
      write: false,
      logLevel: "silent",
      define: { "process.env.NODE_ENV": '"production"' },
    });
    const script = bundle.outputFiles[0]!.text;
    const html = `<!doctype html><html><head><meta charset="utf-8"><title>useInfiniteBets</title></head><body><div id="root"></div><script type="module" src="/infinite-bets-test.js"></script></body></html>`;

    const page = await browser.newPage({ viewport: { width: 900, height: 700 } });
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    page.on("console", (message) => {
      if (message.type() === "error") errors.push(message.text());
    });
    // The page and its script at the gateway's origin, so its GraphQL requests are same-origin ones.
    await page.route(`${t.url}/infinite-bets-test.html*`, (route) => route.fulfill({ contentType: "text/html", body: html }));
    await page.route(`${t.url}/infinite-bets-test.js`, (route) => route.fulfill({ contentType: "text/javascript", body: script }));
    const requests: string[] = [];
    page.on("request", (request) => {
      if (request.url().startsWith(`${t.url}/graphql`)) requests.push(request.url());
    });

    const wallet = t.fixtures.whale.toLowerCase();
    await page.goto(`${t.url}/infinite-bets-test.html?wallet=${wallet}&status=SETTLED&first=${PAGE_SIZE}`);
    const status = page.locator("#status");
    let clicks = 0;
    for (;;) {
      await expect.poll(() => status.getAttribute("data-state"), { timeout: 30_000 }).toMatch(/^(more|done|error)$/);
      const state = await status.getAttribute("data-state");
      if (state !== "more") break;
      await page.click("#load-more");
      clicks++;
      // The click is taken: the row count grows (or the page says it loads) before the next look.
      const before = clicks * PAGE_SIZE;
      await expect.poll(async () => Number(await status.getAttribute("data-count")), { timeout: 30_000 }).toBeGreaterThan(before);
    }
    expect(await status.getAttribute("data-state")).toBe("done");

    const rows = await page
      .locator("#bets tr")
      .evaluateAll((trs) =>
        trs.map((tr) => ({ key: tr.getAttribute("data-key"), status: tr.getAttribute("data-status"), player: tr.getAttribute("data-player") })),
      );
    const expected = await t.db.prisma.bet.findMany({ where: { player: wallet, status: "SETTLED" }, select: { chainId: true, betId: true } });
    const direct = await t.db.prisma.bet.count({ where: { player: wallet, status: "SETTLED" } });
    // Several pages, or the walk proves nothing about paging.
    expect(direct).toBeGreaterThan(2 * PAGE_SIZE);
    expect(rows).toHaveLength(direct);
    expect(Number(await status.getAttribute("data-total"))).toBe(direct);
    expect(rows.every((row) => row.status === "SETTLED" && row.player === wallet)).toBe(true);
    const keys = rows.map((row) => row.key);
    expect(new Set(keys).size).toBe(keys.length);
    expect([...keys].sort()).toEqual(expected.map((bet) => `${bet.chainId}:${bet.betId.toFixed(0)}`).sort());
    expect(clicks).toBe(Math.ceil(direct / PAGE_SIZE) - 1);
    expect(await page.locator("#load-more").isDisabled()).toBe(true);
    expect(errors).toEqual([]);
    console.log(
      `useInfiniteBets: ${keys.length} SETTLED bets of ${wallet} in ${clicks + 1} pages of ${PAGE_SIZE}, ${requests.length} GraphQL requests; database count ${direct}`,
    );

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: `${ARTIFACTS}infinite-bets.png`, fullPage: true });
    await page.close();
  }, 180_000);
});
