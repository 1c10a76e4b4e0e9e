import type { ApolloServerPlugin } from "@apollo/server";

/**
 * Apollo computes `Cache-Control` from the subgraphs' hints. Two things it cannot know: the
 * health subgraph runs in process (no hints travel), and an answer with no policy must still
 * tell a CDN not to keep it. Both get `no-store`.
 */
export function cachePolicyPlugin(): ApolloServerPlugin {
  return {
    async requestDidStart() {
      return {
        async willSendResponse({ response, operation }) {
          const asksHealth = operation?.selectionSet.selections.some((s) => s.kind === "Field" && s.name.value === "health") ?? false;
          if (asksHealth || !response.http.headers.has("cache-control")) response.http.headers.set("cache-control", "no-store");
        },
      };
    },
  };
}
