import { maybeCacheControlFromInfo } from "@apollo/cache-control-types";
import type { GraphQLResolveInfo } from "graphql";
import { betDepth, type NetworkDirectory } from "./networks.ts";

// Cache-Control for CDNs: subgraphs hint each field, the gateway sends the minimum. Everything
// defaults to `live`; only data that cannot change any more is allowed to live long.
export const MAX_AGE = {
  /** A finalized bet, its result and proof: never change again. */
  final: 3600,
  /** Network settings, contracts and verification keys: change only on re-registration. */
  settings: 60,
  /** Anything that moves with the chain head: pending bets, lists, counts, confirmations. */
  live: 2,
} as const;

export function cacheFor(info: GraphQLResolveInfo, maxAge: number): void {
  maybeCacheControlFromInfo(info)?.setCacheHint({ maxAge, scope: "PUBLIC" });
}

/** `final` once a settled or refunded bet's change is finalized on its network; a pending bet is always `live`. */
export async function betMaxAge(networks: NetworkDirectory, bet: { chainId: number | bigint; lastChangeBlock: bigint; status: string }): Promise<number> {
  if (bet.status === "PENDING") return MAX_AGE.live;
  return betDepth(bet.lastChangeBlock, await networks.get(bet.chainId)).finalized ? MAX_AGE.final : MAX_AGE.live;
}
