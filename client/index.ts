// The client package: typed GraphQL operations over a tiny fetch executor, the bet feed over
// Socket.IO with gapless resume and failover, and proof verification. Browser and Node alike.
export {
  createGraphQLClient,
  GraphQLRequestError,
  type FullGraphQLClient,
  type GraphQLAnswer,
  type GraphQLClient,
  type GraphQLClientOptions,
  type ReadAtPointer,
  type RetryOptions,
  type TypedDocument,
} from "./graphql.ts";
export { betsPages, createPager, pageThrough, playerBetsPages, type PagedBet, type PagedQuery, type Pager, type PagerState } from "./pages.ts";
export * from "./operations.ts";
export type * from "./generated/graphql.ts";
export { betFinality, type BetFinality } from "./finality.ts";
export { formatAmount, parseAmount, type AmountToken, type FormatAmountOptions } from "./amount.ts";
export { openBetsFeed, type BetsFeed, type BetsFeedOptions, type FeedStats, type FeedStatus, type FeedSubscription, type UpdateMeta } from "./realtime.ts";
export type { BetRef, BetUpdatePayload, SubscribedPayload } from "./realtime.ts";
export { expectedPublicSignals, toSnarkjsProof, verifyBetProof, type Groth16Verify, type ProofCheck, type VerifiableBet } from "./proof.ts";
export { checkServedKey, sha256Hex, VERIFIER_SELECTOR, type KeyTrust, type KeyTrustAnchor } from "./key-trust.ts";
export {
  applyBetUpdate,
  followBet,
  followBetFeed,
  followPlayerBets,
  type BetFeedState,
  type BetState,
  type BetsSource,
  type FeedConnection,
  type LiveView,
  type PlayerBetsState,
} from "./live.ts";
export { waitForBet, type WaitedBet } from "./wait-for-bet.ts";
