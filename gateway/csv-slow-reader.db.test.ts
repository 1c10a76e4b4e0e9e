import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type RunningStack } from "../bin/stack.ts";
import { silentLogger } from "../core/logger.ts";
import { NetworkDirectory } from "../core/networks.ts";
import { readProofCache } from "../fixtures/proof-cache.ts";
import { seedFixtures, type FixtureSummary } from "../fixtures/seed.ts";
import { walletBetsPage } from "../subgraphs/history/data.ts";
import { createTestDatabase, type TestDatabase } from "../test/db.ts";
import { testGatewaySettings } from "../test/stack.ts";
import type { ExportRow, WalletBetPages } from "./csv-export.ts";

// A CSV export to a client that stops reading (issue 21, slow readers): the gateway cuts the
// connection after the write deadline, counts it at /metrics, and the export stops reading pages.
// The pages here never end (a real row, repeated), so only the cut can stop the export.

const DEADLINE_MS = 300;

describe("a CSV export to a client that stops reading", () => {
  let db: TestDatabase;
  let fixtures: FixtureSummary;
  let stack: RunningStack;
  let pagesRead = 0;
  beforeAll(async () => {
    db = await createTestDatabase();
    fixtures = await seedFixtures(db, { bets: 20, proofCache: readProofCache() });
    const [row] = await walletBetsPage(db, { wallet: fixtures.whale, take: 1 });
    const endless: WalletBetPages = async ({ take }) => {
      pagesRead++;
      return Array.from({ length: take }, () => row as ExportRow);
    };
    stack = await startStack({
      deps: { db, logger: silentLogger(), networks: new NetworkDirectory(db), production: false },
      host: "127.0.0.1",
      port: 0,
      gateway: testGatewaySettings({ walletBetPages: endless, writeDeadlineMs: DEADLINE_MS }),
    });
  });
  afterAll(async () => {
    await stack?.stop();
    await db?.close();
  });

  const disconnects = async () => {
    const text = await (await fetch(`${stack.url}/metrics`)).text();
    return Number(/^http_slow_reader_disconnects_total\{[^}]*\} (\d+)/m.exec(text)?.[1] ?? Number.NaN);
  };

  it("is cut off after the write deadline, counted, and reads no more pages", async () => {
    expect(await disconnects()).toBe(0);
    const socket = net.connect(stack.http.port, "127.0.0.1");
    socket.on("error", () => undefined);
    socket.once("data", () => socket.pause()); // takes the first bytes, then never reads again
    socket.write(`GET /wallets/${fixtures.whale}/bets.csv HTTP/1.1\r\nHost: x\r\n\r\n`);
    while ((await disconnects()) === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await disconnects()).toBe(1);
    // The page loop saw the connection close: however long we look, no page is read after it.
    const atCut = pagesRead;
    expect(atCut).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, DEADLINE_MS * 3));
    expect(pagesRead).toBe(atCut);
    socket.destroy();
  });
});
