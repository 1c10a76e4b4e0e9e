// The live page in a real browser: Debian's Chromium driven by playwright-core, against `npm start`
// (anvil, the operator simulator placing and settling bets with real Groth16 proofs, the indexer,
// the gateway with Socket.IO). The page must show bets pushed live over Socket.IO, open a settled
// bet and verify its proof in the page with snarkjs — and refuse a tampered one — under its CSP.
// Proofs are checked on the honest chain (31337); the demo's permissive chain (1337) and its bad
// proofs, shown as not verified: bin/start-unverified.test.ts.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_VERIFICATION_KEY_PATH } from "../indexer/config.ts";
import { startService, type RunningService } from "../test/service.ts";
import { LIVE_PAGE_CSP } from "./server.ts";

const CHROMIUM = "/usr/bin/chromium";
const ARTIFACTS = new URL("../test/.artifacts/", import.meta.url).pathname;
// In CI the browser must be there (.ci/run installs it): a missing one fails instead of skipping.
const skip = !existsSync(CHROMIUM) && !process.env.CI;
const title = skip ? `live page in Chromium — SKIPPED: ${CHROMIUM} is absent (apt-get install -y chromium)` : "live page in Chromium";

describe.skipIf(skip)(title, () => {
  let service: RunningService;
  let browser: Browser;
  let page: Page;
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    service = await startService();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    });
    page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    page.on("console", (message) => {
      if (message.type() === "error") consoleErrors.push(message.text());
    });
    page.on("pageerror", (error) => consoleErrors.push(error.message));
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await service?.stop();
  });

  it("serves / with a strict same-origin CSP", async () => {
    const response = await page.goto(`${service.url}/`);
    expect(response?.status()).toBe(200);
    const csp = response?.headers()["content-security-policy"];
    expect(csp).toBe(LIVE_PAGE_CSP);
    expect(csp).not.toMatch(/unsafe-inline|'unsafe-eval'|https?:|\*/);
  });

  it("shows bets pushed live over Socket.IO, opens a settled one and verifies its proof in the page", async () => {
    await page.waitForSelector("#feed-status[data-state='live']", { timeout: 30_000 });
    await expect.poll(() => page.locator("#networks").textContent(), { timeout: 30_000 }).toContain("localnet");
    // Rows replayed at load are marked "replay"; these arrived after the page went live.
    await page.waitForSelector("#latest tr[data-origin='live']", { timeout: 90_000 });
    const firstSettled = page.locator("#latest tr[data-chain-id='31337'][data-status='SETTLED']").first();
    await firstSettled.waitFor({ timeout: 90_000 });
    // Pinned by its id: a bare `.first()` resolves again at each use, and new bets arrive above it.
    const betId = await firstSettled.getAttribute("data-bet-id");
    const settled = page.locator(`#latest tr[data-chain-id='31337'][data-bet-id='${betId}']`);
    // Stakes in whole tokens with the symbol once the token is read (Bet.tokenInfo: the demo chain's native coin, ETH / 18).
    await expect.poll(() => settled.locator("td").nth(2).textContent(), { timeout: 30_000 }).toMatch(/^\d+(\.\d{1,4})? ETH$/);
    await settled.click();
    await page.waitForSelector(`#detail[data-bet-id='${betId}'][data-status='SETTLED']`, { timeout: 30_000 });
    await page.click("#verify");
    const result = page.locator("#verify-result");
    await expect.poll(() => result.getAttribute("data-state"), { timeout: 45_000 }).toMatch(/^(verified|not-verified|error)$/);
    expect(await result.textContent()).toBe("verified ✓");
    expect(await result.getAttribute("data-state")).toBe("verified");
    expect(await page.locator("#detail").textContent()).toMatch(/\d+(\.\d+)? ETH \(\d+ in units of 10\^-18\)/);
    // A FINALIZED update marks a shown result final once the head has confirmed it.
    const final = page.locator("#latest tr[data-final='true']").first();
    await final.waitFor({ timeout: 90_000 });
    expect(await final.textContent()).toContain("✓ final");

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: `${ARTIFACTS}live-page.png`, fullPage: true });
    expect(consoleErrors).toEqual([]);
  }, 180_000);

  it("starts the latest table from GraphQL `bets` at load, before any update over Socket.IO, one row per bet", async () => {
    // A second page whose Socket.IO never connects: whatever #latest shows came from the `bets` read.
    const offline = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    try {
      // The client uses the WebSocket transport only: a mocked socket that never answers the handshake.
      await offline.routeWebSocket(/\/socket\.io\//, () => undefined);
      await offline.goto(`${service.url}/`);
      await offline.waitForSelector("#latest tr", { timeout: 30_000 });
      const origins = await offline.locator("#latest tr").evaluateAll((rows) => rows.map((row) => row.getAttribute("data-origin")));
      expect(origins.length).toBeGreaterThan(0);
      expect(origins.length).toBeLessThanOrEqual(20);
      expect(new Set(origins)).toEqual(new Set(["read"]));
      // Newest first, as `bets` answers: on each of the two demo networks, bet ids descending.
      for (const chainId of ["31337", "1337"]) {
        const ids = await offline
          .locator(`#latest tr[data-chain-id='${chainId}']`)
          .evaluateAll((rows) => rows.map((row) => BigInt(row.getAttribute("data-bet-id") ?? "0")));
        expect(ids).toEqual([...ids].sort((a, b) => (a > b ? -1 : a < b ? 1 : 0)));
      }
      expect(await offline.locator("#feed-status").getAttribute("data-state")).not.toBe("live");
    } finally {
      await offline.close();
    }
    // On the live page, the read and the feed (backlog and live) never show a bet twice.
    const keys = await page
      .locator("#latest tr")
      .evaluateAll((rows) => rows.map((row) => `${row.getAttribute("data-chain-id")}:${row.getAttribute("data-bet-id")}`));
    expect(keys.length).toBeGreaterThan(0);
    expect(new Set(keys).size).toBe(keys.length);
  }, 60_000);

  it("shows a fairness panel per game: a 16-bar outcome histogram with the uniform line, and the RTP band", async () => {
    const figures = page.locator("#fairness figure.game-stats");
    // Every game the contract defines on the demo network, with bets settled by now.
    await expect.poll(() => figures.count(), { timeout: 30_000 }).toBeGreaterThanOrEqual(3);
    await expect.poll(() => page.locator("#fairness figure.game-stats:not([data-settled='0'])").count(), { timeout: 60_000 }).toBeGreaterThan(0);
    const shapes = await figures.evaluateAll((nodes) =>
      nodes.map((figure) => {
        const bars = [...figure.querySelectorAll("svg.histogram rect.bar")];
        const counts = bars.map((bar) => Number(/: (\d+)$/.exec(bar.querySelector("title")?.textContent ?? "")?.[1]));
        const heights = bars.map((bar) => Number(bar.getAttribute("height")));
        const line = figure.querySelector("svg.histogram line.uniform");
        const svgHeight = Number(figure.querySelector("svg.histogram")?.getAttribute("height"));
        return {
          game: figure.getAttribute("data-game"),
          settled: Number(figure.getAttribute("data-settled")),
          svgs: figure.querySelectorAll("svg").length,
          lines: figure.querySelectorAll("svg line.uniform").length,
          counts,
          heights,
          lineY: line ? Number(line.getAttribute("y1")) : Number.NaN,
          svgHeight,
          rtp: figure.querySelector("p.rtp")?.textContent ?? "",
        };
      }),
    );
    expect(new Set(shapes.map((shape) => shape.game))).toEqual(new Set(["coinflip", "dice", "wheel"]));
    for (const shape of shapes) {
      expect(shape.svgs).toBe(1);
      expect(shape.lines).toBe(1);
      expect(shape.counts).toHaveLength(16);
      expect(shape.counts.reduce((a, b) => a + b, 0)).toBe(shape.settled);
      if (shape.settled === 0) continue;
      // Bars and line share one scale: height per outcome, and the line at settled/16 on it.
      const tallest = shape.counts.indexOf(Math.max(...shape.counts));
      const scale = shape.heights[tallest]! / shape.counts[tallest]!;
      for (const [i, count] of shape.counts.entries()) expect(shape.heights[i]).toBeCloseTo(count * scale, 6);
      expect(shape.lineY).toBeCloseTo(shape.svgHeight - (shape.settled / 16) * scale, 6);
      expect(shape.rtp).toMatch(/^RTP observed \d+\.\d{4} \(95% \d+\.\d{4}–\d+\.\d{4}\) · expected 0\.9[89]00$/);
    }
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.locator("#fairness").screenshot({ path: `${ARTIFACTS}live-page-fairness.png` });
    expect(consoleErrors).toEqual([]);
  }, 120_000);

  it("shows a tampered proof (the service still saying verified) as not verified", async () => {
    // Change the outcome in the bet and in the proof's public signals alike: only the pairing check can tell.
    await page.route("**/graphql", async (route) => {
      const body = route.request().postData() ?? "";
      if (!body.includes("BetWithProof")) return route.continue();
      const response = await route.fetch();
      const json = (await response.json()) as { data: { betResult: { result: { outcome: string; proof: { publicSignals: string[]; verified: boolean } } } } };
      const result = json.data.betResult.result;
      result.outcome = String(BigInt(result.outcome) + 1n);
      result.proof.publicSignals[0] = result.outcome;
      expect(result.proof.verified).toBe(true);
      await route.fulfill({ response, json });
    });
    // A FINALIZED update marks a shown result final once the head has confirmed it.
    const final = page.locator("#latest tr[data-final='true']").first();
    await final.waitFor({ timeout: 90_000 });
    expect(await final.textContent()).toContain("✓ final");
    // Pinned by its id, as above.
    const betId = await page.locator("#latest tr[data-chain-id='31337'][data-status='SETTLED']").first().getAttribute("data-bet-id");
    await page.locator(`#latest tr[data-chain-id='31337'][data-bet-id='${betId}']`).first().click();
    await page.waitForSelector(`#detail[data-bet-id='${betId}'][data-status='SETTLED']`, { timeout: 30_000 });
    await expect.poll(() => page.locator("#verify").isEnabled(), { timeout: 30_000 }).toBe(true);
    await page.click("#verify");
    const result = page.locator("#verify-result");
    await expect.poll(() => result.getAttribute("data-state"), { timeout: 45_000 }).toMatch(/^(verified|not-verified|error)$/);
    expect(await result.getAttribute("data-state")).toBe("not-verified");
    expect(await result.textContent()).toBe("not verified ✗ (rejected by groth16.verify)");
    await page.unroute("**/graphql");
    expect(consoleErrors).toEqual([]);
  }, 180_000);

  it("checks the served key against a pinned sha256: a forged key is refused, the honest one passes, the trust path shown", async () => {
    // The sha256 a user pins: of the key file the network's operator published (here the DEV key).
    const pinned = createHash("sha256").update(readFileSync(DEFAULT_VERIFICATION_KEY_PATH, "utf8")).digest("hex");
    /** A fresh page (the key is cached per page) verifying a settled bet of the honest chain, with `pin` typed in. */
    const verifyWith = async (pin: string, forge: boolean) => {
      const fresh = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
      const errors: string[] = [];
      fresh.on("pageerror", (error) => errors.push(error.message));
      if (forge) {
        // A lying service: the key it serves has one constant changed.
        await fresh.route("**/graphql", async (route) => {
          if (!(route.request().postData() ?? "").includes("VerificationKey")) return route.continue();
          const response = await route.fetch();
          const json = (await response.json()) as { data: { networkConfigs: { verificationKey: { json: string } }[] } };
          for (const network of json.data.networkConfigs) {
            const key = JSON.parse(network.verificationKey.json) as { vk_alpha_1: string[] };
            key.vk_alpha_1[0] = (BigInt(key.vk_alpha_1[0] as string) + 1n).toString();
            network.verificationKey.json = JSON.stringify(key);
          }
          await route.fulfill({ response, json });
        });
      }
      try {
        await fresh.goto(`${service.url}/`);
        const settled = fresh.locator("#latest tr[data-chain-id='31337'][data-status='SETTLED']").first();
        await settled.waitFor({ timeout: 60_000 });
        await settled.click();
        await fresh.waitForSelector("#detail[data-status='SETTLED']", { timeout: 30_000 });
        await expect.poll(() => fresh.locator("#verify").isEnabled(), { timeout: 30_000 }).toBe(true);
        await fresh.fill("#pinned-key", pin);
        await fresh.click("#verify");
        const result = fresh.locator("#verify-result");
        await expect.poll(() => result.getAttribute("data-state"), { timeout: 45_000 }).toMatch(/^(verified|not-verified|error)$/);
        const trust = fresh.locator("#key-trust");
        return {
          state: await result.getAttribute("data-state"),
          text: await result.textContent(),
          path: await trust.getAttribute("data-path"),
          trust: await trust.textContent(),
          errors,
        };
      } finally {
        await fresh.close();
      }
    };
    const forgedPinned = await verifyWith(pinned, true);
    expect(forgedPinned).toMatchObject({ state: "not-verified", text: "not verified ✗ (the served key is not the pinned one)", path: "refused" });
    expect(forgedPinned.trust).toMatch(new RegExp(`^key: REFUSED \\(the served key's sha256 [0-9a-f]{64} is not the pinned ${pinned}\\)$`));
    // Without a pin the page says the key is the service's word (and the forged key fails the proof here).
    const forgedServed = await verifyWith("", true);
    expect(forgedServed).toMatchObject({
      state: "not-verified",
      path: "served",
      trust: "key: as served by the service, not checked (pin its sha256 above to check it)",
    });
    const honestPinned = await verifyWith(pinned, false);
    expect(honestPinned).toMatchObject({ state: "verified", text: "verified ✓", path: "pinned", trust: "key: matches your pinned sha256 ✓", errors: [] });
  }, 240_000);

  it("follows a wallet: its history through GraphQL, then its updates live", async () => {
    const wallet = await page.locator("#latest tr").first().getAttribute("data-player");
    await page.fill("#wallet-input", wallet!);
    await page.click("#wallet-form button");
    await expect.poll(() => page.locator("#wallet-summary").textContent(), { timeout: 30_000 }).toMatch(/^\d+ bets, \d+ pending/);
    await page.waitForSelector("#wallet-bets tr[data-origin='read']", { timeout: 30_000 });
    const csv = page.locator("#wallet-csv");
    expect(await csv.isVisible()).toBe(true);
    const href = await csv.getAttribute("href");
    expect(href).toBe(`/wallets/${wallet}/bets.csv`);
    const download = await page.request.get(`${service.url}${href}`);
    expect(download.status()).toBe(200);
    expect(download.headers()["content-type"]).toMatch(/^text\/csv/);
    expect((await download.text()).split("\r\n")[0]).toMatch(/^chainId,betId,player,/);
    await page.waitForSelector("#wallet-bets tr[data-origin='live']", { timeout: 90_000 });
    const players = await page.locator("#wallet-bets tr").evaluateAll((rows) => rows.map((row) => row.getAttribute("data-player")));
    expect(new Set(players)).toEqual(new Set([wallet]));
    expect(consoleErrors).toEqual([]);
  }, 180_000);
});
