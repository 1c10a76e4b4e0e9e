import { MAX_AGE } from "../../../../core/max-age.ts";
import { blockPointers } from "../../../kit/read-at.ts";
import { cacheFor } from "../../../kit/cache-hints.ts";
import { allIndexingCursors } from "../../data.ts";
import type { QueryResolvers } from "../../generated/resolvers-types.ts";

// This subgraph's own heads; the gateway answers the lowest over every subgraph the request reached
// (gateway/read-at.ts), the same list as extensions.readAt.
export const readAt: QueryResolvers["readAt"] = async (_parent, _args, ctx, info) => {
  cacheFor(info, MAX_AGE.live);
  return blockPointers(ctx.readAt?.cursors ?? (await allIndexingCursors(ctx.db)));
};
