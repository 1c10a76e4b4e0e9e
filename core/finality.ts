// The finality rule, owned here and nowhere else (docs/reference/lifecycle.md#finality). Every
// surface calls these functions: the history subgraph (Bet.confirmations / Bet.finalized), the
// networks subgraph (IndexingStatus.finalizedBlock), the indexer (its published finalized block,
// below which a reorg is fatal), the realtime tier (payloads at delivery) and the fixture set.
//
//   confirmations = head − block of the bet's latest state change + 1   (a change in the head block has 1)
//   finalized     ⇔ confirmations ≥ the network's `confirmations`
//   finalizedBlock = the newest block for which that holds = head − confirmations + 1
//
// `head` is the chain head as the indexer last recorded it (IndexingStatus.headBlock). Pure: no
// database, no Prisma, so the browser bundle (web/) and the client package may import it too.

/** Blocks from `changeBlock` to `head`, counting its own; 0 when the head is unknown or below it. */
export function confirmationsAt(changeBlock: bigint, head: bigint | null): bigint {
  if (head === null || head < changeBlock) return 0n;
  return head - changeBlock + 1n;
}

/** Whether `confirmations` blocks (as confirmationsAt counts them) are final on a network requiring `required`. */
export function isFinal(confirmations: bigint, required: number | bigint): boolean {
  // A change the head does not cover yet (0 confirmations) is never final, whatever the setting.
  return confirmations > 0n && confirmations >= BigInt(required);
}

/** The newest final block at `head` (0 when none is yet: the API has no "no block"). */
export function finalizedBlockAt(head: bigint, required: number | bigint): bigint {
  const depth = BigInt(required) > 1n ? BigInt(required) : 1n;
  const block = head - depth + 1n;
  return block > 0n ? block : 0n;
}

export interface Depth {
  confirmations: bigint;
  finalized: boolean;
}

/** Confirmations and finality of a state change in `changeBlock`, at `head`, on a network requiring `required`. */
export function depthAt(changeBlock: bigint, head: bigint | null, required: number | bigint): Depth {
  const confirmations = confirmationsAt(changeBlock, head);
  return { confirmations, finalized: isFinal(confirmations, required) };
}

/**
 * The newest block whose changes are final at `head`: a change in block b is final ⇔ b ≤ this
 * bound (the rule above, as one comparison a query can use on an index). Unlike finalizedBlockAt
 * it is not clamped, so it is negative while nothing is final yet; −1 when the head is unknown.
 */
export function finalityBound(head: bigint | null, required: number | bigint): bigint {
  if (head === null) return -1n;
  const depth = BigInt(required) > 1n ? BigInt(required) : 1n;
  return head - depth + 1n;
}
