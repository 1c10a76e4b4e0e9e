// waitForBet: a wallet has sent a transaction and wants its bet as the API serves it. Not by polling:
// it follows the bet feed for the chain, asks whenever the feed is live (again; the bet may be
// indexed already), and while the feed cannot get in (a node refusing its firehose subscription, a
// node down) at most every 5 s, so a full node delays the answer but never hides it; when an update
// of that transaction arrives, it asks with `minBlock` at the update's
// block, so that the answer comes from a database that has indexed it (client/graphql.ts retries a
// NOT_YET_INDEXED after the wait the server names).
import type { GraphQLClient } from "./graphql.ts";
import type { BetsSource } from "./live.ts";
import { betsByTransactionQuery } from "./operations.ts";
import { openBetsFeed } from "./realtime.ts";

/** While the feed cannot get in, GraphQL is asked at most this often. */
const RECONNECTING_ASK_INTERVAL_MS = 5_000;

export type WaitedBet = Awaited<ReturnType<typeof askTransaction>>[number];

function askTransaction(api: GraphQLClient, chainId: number, txHash: `0x${string}`, block?: string) {
  return api
    .request(betsByTransactionQuery, { chainId, txHash, ...(block === undefined ? {} : { minBlock: [{ chainId, block }] }) })
    .then((data) => data.betsByTransaction);
}

/**
 * The bets of transaction `txHash` on `chainId` once indexed (placed, settled or refunded in it).
 * Rejects after `timeoutMs` (default 120 s) or when `signal` aborts.
 */
export function waitForBet(
  source: BetsSource,
  options: { chainId: number; txHash: `0x${string}`; timeoutMs?: number; signal?: AbortSignal },
): Promise<WaitedBet[]> {
  const txHash = options.txHash.toLowerCase() as `0x${string}`;
  return new Promise((resolve, reject) => {
    let settled = false;
    const finish = (outcome: { bets: WaitedBet[] } | { error: unknown }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      feed.close();
      if ("bets" in outcome) resolve(outcome.bets);
      else reject(outcome.error);
    };
    let askedAt = Number.NEGATIVE_INFINITY;
    const ask = (block?: string) => {
      askedAt = performance.now();
      return askTransaction(source.api, options.chainId, txHash, block).then(
        (bets) => {
          if (bets.length > 0) finish({ bets });
        },
        (error: unknown) => {
          // Asked at the update's block: the answer must come; anything else is the caller's to see.
          if (block !== undefined) finish({ error });
        },
      );
    };
    const timer = setTimeout(
      () => finish({ error: new Error(`waitForBet: ${txHash} not indexed within ${options.timeoutMs ?? 120_000} ms`) }),
      options.timeoutMs ?? 120_000,
    );
    options.signal?.addEventListener("abort", () => finish({ error: options.signal?.reason ?? new Error("aborted") }), { once: true });
    const open = source.openFeed ?? openBetsFeed;
    const feed = open({
      ...source.feed,
      subscription: { chainIds: [options.chainId] },
      onStatus(status) {
        // Live (again): the bet may have been indexed before (or while) the feed was away.
        if (status.state === "live") void ask();
        else if (status.state === "reconnecting" && performance.now() - askedAt >= RECONNECTING_ASK_INTERVAL_MS) void ask();
      },
      onUpdate(update) {
        const { bet } = update;
        const block =
          bet.placedTx === txHash ? bet.placedBlock : bet.settledTx === txHash ? bet.settledBlock : bet.refundedTx === txHash ? bet.refundedBlock : null;
        if (block) void ask(block);
      },
    });
  });
}
