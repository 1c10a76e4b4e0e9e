// waitForBet against `npm start` (its local anvil chain, whose demo players place bets, the indexer,
// the gateway and Socket.IO on the API host): a bet transaction seen on the chain itself (a block's
// transaction to BetVault), not through the API, resolves to its indexed bet within a bounded time.
import { createPublicClient, type Hash, http, parseEventLogs } from "viem";
import { betVaultAbi } from "../chain/generated/artifacts.ts";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startService, type RunningService } from "../test/service.ts";
import { createGraphQLClient } from "./graphql.ts";
import { networksQuery } from "./operations.ts";
import { waitForBet } from "./wait-for-bet.ts";

let service: RunningService;
beforeAll(async () => {
  service = await startService();
}, 180_000);
afterAll(async () => {
  await service?.stop();
});

it("resolves for a bet transaction sent on the local chain, following the feed and asking with minBlock", async () => {
  const api = createGraphQLClient({ url: `${service.url}/graphql` });
  const vault = (await api.request(networksQuery)).networkConfigs
    .find((network) => network.chainId === 31337)!
    .contracts.find((contract) => contract.name === "BetVault")!.address;
  const chain = createPublicClient({ transport: http(service.rpcUrl), cacheTime: 0 });
  // The next bet transaction mined on the chain: a transaction to BetVault that placed, settled or
  // refunded a bet (a demo player's bet or a settlement). Not any transaction to BetVault: the
  // operator's commitment (CommitmentPublished) goes there too and is no bet, and on a fast start
  // it is the first one the watch sees.
  const betEvents: readonly string[] = ["BetPlaced", "BetSettled", "BetRefunded"];
  const txHash = await new Promise<`0x${string}`>((resolve, reject) => {
    let found = false;
    const stop = chain.watchBlocks({
      includeTransactions: true,
      pollingInterval: 100,
      onBlock: (block) => {
        const sent = block.transactions.filter((candidate) => candidate.to?.toLowerCase() === vault);
        void (async () => {
          for (const tx of sent) {
            const receipt = await chain.getTransactionReceipt({ hash: tx.hash as Hash });
            const events = parseEventLogs({ abi: betVaultAbi, logs: receipt.logs.filter((log) => log.address.toLowerCase() === vault) });
            if (found || !events.some((event) => betEvents.includes(event.eventName))) continue;
            found = true;
            stop();
            resolve(tx.hash);
            return;
          }
        })().catch(reject);
      },
      onError: reject,
    });
  });
  const bets = await waitForBet({ api, feed: { urls: [service.url], path: "/socket.io" } }, { chainId: 31337, txHash, timeoutMs: 60_000 });
  expect(bets.length).toBeGreaterThan(0);
  expect(bets.every((bet) => [bet.placedTx, bet.settledTx, bet.refundedTx].includes(txHash))).toBe(true);
}, 120_000);
