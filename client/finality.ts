// How final a bet is, by the service's one rule (core/finality.ts; docs/reference/lifecycle.md#finality):
// final once its latest change has at least its network's `confirmations`. For views that show
// progress ("1 of 2 confirmations") and for clients that hold a bet while new blocks arrive.
import { isFinal } from "./wire/finality.ts";

export interface BetFinality {
  confirmations: bigint;
  /** The network's finality depth (`NetworkConfig.confirmations`). */
  required: number;
  finalized: boolean;
  /** "final (2 confirmations)" or "1 of 2 confirmations, not final yet". */
  label: string;
}

const plural = (n: bigint) => `${n} confirmation${n === 1n ? "" : "s"}`;

/** A bet's finality from its `confirmations` (a GraphQL or `bets:update` bet) and its network's `confirmations`. */
export function betFinality(bet: { confirmations: string }, network: { confirmations: number }): BetFinality {
  const confirmations = BigInt(bet.confirmations);
  const finalized = isFinal(confirmations, network.confirmations);
  const label = finalized ? `final (${plural(confirmations)})` : `${confirmations} of ${plural(BigInt(network.confirmations))}, not final yet`;
  return { confirmations, required: network.confirmations, finalized, label };
}
