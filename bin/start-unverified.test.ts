// `verified: false` seen through everything a user reads, on the real path: `npm start`'s second
// chain (1337, "devnet") has a BetVault built against a verifier that accepts every proof, and its
// simulator settles some bets with a bad proof (the claimed outcome moved by one). The chain settles
// them; the indexer checks every proof itself, and the result travels chain → indexer → outbox →
// feed. A bet seen SETTLED over Socket.IO with `verified: false` is then read through the gateway
// (first run and compiled), the CSV export, the client's own check, /health, and the live page in
// Chromium, which shows it plainly (screenshot for the record).
import { copyFileSync, existsSync, mkdirSync } from "node:fs";
import * as snarkjs from "snarkjs";
import { chromium, type Browser } from "playwright-core";
import { io as ioClient } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyBetProof, type Groth16Verify } from "../client/proof.ts";
import { startService, type RunningService } from "../test/service.ts";

const CHROMIUM = "/usr/bin/chromium";
const ARTIFACTS = new URL("../test/.artifacts/", import.meta.url).pathname;
/** Where the lead of issue 22 looks for the screenshot (outside the repository; skipped when absent). */
const BRIEF_SCREENSHOT = "/work/wt/_brief/verified-false.png";
const skipBrowser = !existsSync(CHROMIUM) && !process.env.CI;

let service: RunningService;
/** The first bad-proof settlement seen on the feed. */
let bad: { chainId: number; betId: string; player: string };

interface Update {
  type: string;
  chainId: number;
  betId: string;
  seq: string;
  bet: { player: string; result: { proof: { verified: boolean } } | null };
}

interface Answer<T> {
  data: T;
  errors?: { extensions?: { code?: string; retryAfterSeconds?: number } }[];
}

/**
 * One GraphQL request as a well-behaved client sends it: refused RATE_LIMITED, it waits the
 * refusal's `retryAfterSeconds` and asks again (a few times at most). A new address starts with
 * half a budget (RATE_LIMIT_POINTS_INITIAL), less than this file's lists of 100 cost in a row.
 */
async function gql<T>(query: string, variables?: Record<string, unknown>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    const response = await fetch(`${service.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await response.json()) as Answer<T>;
    const refusal = body.errors?.[0]?.extensions;
    if (attempt < 3 && refusal?.code === "RATE_LIMITED" && refusal.retryAfterSeconds !== undefined) {
      await new Promise((resolve) => setTimeout(resolve, refusal.retryAfterSeconds! * 1000));
      continue;
    }
    expect(body.errors).toBeUndefined();
    return body.data;
  }
}

beforeAll(async () => {
  service = await startService({ readyTimeoutMs: 90_000 });
}, 120_000);
afterAll(() => service?.stop());

describe("npm start: a bad proof a permissive verifier accepted, shown as verified: false", () => {
  it("arrives over Socket.IO as SETTLED with verified: false (and genuine ones on the same chain as true)", async () => {
    const socket = ioClient(service.url, { path: "/socket.io", transports: ["websocket"], reconnection: false, forceNew: true });
    // Collected here, asserted below: an expect in a socket callback would not fail the test.
    const seen: Update[] = [];
    socket.on("bets:update", (update: Update) => seen.push(update));
    try {
      await new Promise<void>((resolve, reject) => {
        socket.once("connect", resolve);
        socket.once("connect_error", reject);
      });
      const ack = (await socket.timeout(10_000).emitWithAck("bets:subscribe", { chainIds: [1337] })) as { chainIds?: number[] };
      expect(ack.chainIds).toEqual([1337]);
      const settled = (verified: boolean) => seen.find((u) => u.type === "SETTLED" && u.bet.result?.proof.verified === verified);
      const deadline = Date.now() + 150_000;
      while ((!settled(false) || !settled(true)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 250));
      const found = settled(false);
      expect(found).toBeDefined();
      expect(settled(true)).toBeDefined();
      expect(seen.every((u) => u.chainId === 1337)).toBe(true);
      bad = { chainId: found!.chainId, betId: found!.betId, player: found!.bet.player };
    } finally {
      socket.close();
    }
  }, 180_000);

  it("reads as verified: false through the gateway, first run and compiled, in both serving paths", async () => {
    const betResult = `query BadProof($c: ChainId!, $b: UInt256!) { betResult(chainId: $c, betId: $b) { status result { proof { verified } } } }`;
    const list = `query BadProofList($c: ChainId!) { bets(filter: { chainId: $c, status: [SETTLED] }, first: 100) { nodes { betId result { proof { verified } } } } }`;
    // The subgraphs' executor runs an operation on graphql-js the first time and compiled after
    // (subgraphs/kit/executor.ts): three rounds cover both.
    for (let round = 0; round < 3; round++) {
      const one = await gql<{ betResult: { status: string; result: { proof: { verified: boolean } } } }>(betResult, { c: bad.chainId, b: bad.betId });
      expect(one.betResult).toEqual({ status: "SETTLED", result: { proof: { verified: false } } });
      const many = await gql<{ bets: { nodes: { betId: string; result: { proof: { verified: boolean } } }[] } }>(list, { c: bad.chainId });
      expect(many.bets.nodes.find((n) => n.betId === bad.betId)?.result.proof.verified).toBe(false);
    }
  });

  it("exports verified=false in the wallet's CSV", async () => {
    const response = await fetch(`${service.url}/wallets/${bad.player}/bets.csv?chainId=${bad.chainId}`);
    expect(response.status).toBe(200);
    const [header, ...rows] = (await response.text()).split("\r\n").filter((line) => line !== "");
    const columns = header!.split(",");
    const row = rows.map((r) => r.split(",")).find((r) => r[columns.indexOf("betId")] === bad.betId);
    expect(row?.[columns.indexOf("status")]).toBe("SETTLED");
    expect(row?.[columns.indexOf("verified")]).toBe("false");
  });

  it("fails the client's own check (client/proof.ts) under the served key", async () => {
    const { betResult } = await gql<{ betResult: Parameters<typeof verifyBetProof>[0] }>(
      `query ($c: ChainId!, $b: UInt256!) { betResult(chainId: $c, betId: $b) { betId clientSeed serverSeedHash result { outcome proof { protocol curve piA piB piC publicSignals } } } }`,
      { c: bad.chainId, b: bad.betId },
    );
    const { networkConfigs } = await gql<{ networkConfigs: { chainId: number; verificationKey: { json: string } }[] }>(
      "{ networkConfigs { chainId verificationKey { json } } }",
    );
    const key = networkConfigs.find((n) => n.chainId === bad.chainId)!.verificationKey.json;
    expect(await verifyBetProof(betResult, key, snarkjs.groth16 as Groth16Verify)).toEqual({ verified: false, reason: "rejected by groth16.verify" });
  });

  it("degrades /health with the network's verifier check", async () => {
    const report = (await (await fetch(`${service.url}/health`)).json()) as { status: string; checks: { name: string; status: string; detail: string }[] };
    expect(report.status).toBe("DEGRADED");
    expect(report.checks.find((c) => c.name === "verifier:devnet")).toMatchObject({ status: "DEGRADED" });
    expect(report.checks.find((c) => c.name === "verifier:devnet")?.detail).toMatch(
      /^\d+ settled proofs? accepted on chain fail under the served verification key/,
    );
    expect(report.checks.some((c) => c.name === "verifier:localnet")).toBe(false);
  });

  it.skipIf(skipBrowser)(
    "shows it plainly on the live page: the row, the detail, and the page's own check",
    async () => {
      let browser: Browser | undefined;
      try {
        browser = await chromium.launch({
          executablePath: CHROMIUM,
          args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
        });
        const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
        const errors: string[] = [];
        page.on("pageerror", (error) => errors.push(error.message));
        await page.goto(`${service.url}/`);
        // The wallet's history is read through GraphQL: the bet is there whatever the latest table shows by now.
        await page.fill("#wallet-input", bad.player);
        await page.click("#wallet-form button");
        const row = page.locator(`#wallet-bets tr[data-chain-id='${bad.chainId}'][data-bet-id='${bad.betId}']`);
        await row.waitFor({ timeout: 30_000 });
        expect(await row.getAttribute("data-verified")).toBe("false");
        expect(await row.locator("td.proof-unverified").textContent()).toBe("✗ NOT VERIFIED");
        await row.click();
        await page.waitForSelector(`#detail[data-bet-id='${bad.betId}'][data-status='SETTLED']`, { timeout: 30_000 });
        expect(await page.locator("#detail dd.proof-unverified").textContent()).toMatch(/^NOT VERIFIED: the proof fails under the network's key/);
        await expect.poll(() => page.locator("#verify").isEnabled(), { timeout: 30_000 }).toBe(true);
        await page.click("#verify");
        const result = page.locator("#verify-result");
        await expect.poll(() => result.getAttribute("data-state"), { timeout: 45_000 }).toMatch(/^(verified|not-verified|error)$/);
        expect(await result.getAttribute("data-state")).toBe("not-verified");
        expect(await result.textContent()).toBe("not verified ✗ (rejected by groth16.verify)");
        mkdirSync(ARTIFACTS, { recursive: true });
        const shot = `${ARTIFACTS}verified-false.png`;
        await page.screenshot({ path: shot, fullPage: true });
        if (existsSync("/work/wt/_brief")) copyFileSync(shot, BRIEF_SCREENSHOT);
        expect(errors).toEqual([]);
      } finally {
        await browser?.close();
      }
    },
    180_000,
  );
});
