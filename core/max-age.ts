// How long an answer may be kept (Cache-Control max-age, seconds): the tiers the subgraphs hint
// per field (subgraphs/kit/cache-hints.ts) and the gateway's response cache honours. Everything
// defaults to `live`; only data that cannot change any more is allowed to live long.
export const MAX_AGE = {
  /** A finalized bet, its result and proof: never change again. */
  final: 3600,
  /** Network settings, contracts and verification keys: change only on re-registration. */
  settings: 60,
  /** Anything that moves with the chain head: pending bets, lists, counts, confirmations. */
  live: 2,
} as const;
