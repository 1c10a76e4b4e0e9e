// Stands in for graphql-ws in GraphiQL's bundle (web/build.ts aliases it here). GraphiQL's fetcher
// toolkit imports it only for GraphQL subscriptions over WebSocket, which this API does not serve
// (live updates are on Socket.IO). It is only an optional peer there, installed or not depending
// on the rest of the tree: the bundle does not depend on that.
export function createClient(): never {
  throw new Error("GraphQL subscriptions are not served here: live updates are on Socket.IO (see docs/reference/realtime.md)");
}
