import { maybeCacheControlFromInfo } from "@apollo/cache-control-types";
import type { GraphQLResolveInfo } from "graphql";
import { MAX_AGE } from "../../core/max-age.ts";
import { betDepth, type NetworkDirectory } from "../../core/networks.ts";

// Cache-Control for CDNs: subgraphs hint each field (a tier of core/max-age.ts), the gateway sends
// the minimum.

export function cacheFor(info: GraphQLResolveInfo, maxAge: number): void {
  maybeCacheControlFromInfo(info)?.setCacheHint({ maxAge, scope: "PUBLIC" });
}

/** `final` once a settled or refunded bet's change is finalized on its network; a pending bet is always `live`. */
export async function betMaxAge(networks: NetworkDirectory, bet: { chainId: number | bigint; lastChangeBlock: bigint; status: string }): Promise<number> {
  if (bet.status === "PENDING") return MAX_AGE.live;
  return betDepth(bet.lastChangeBlock, await networks.get(bet.chainId)).finalized ? MAX_AGE.final : MAX_AGE.live;
}
