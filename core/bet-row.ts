// The lifecycle columns of a Bet row. A pending bet has neither settlement nor refund, and its
// latest change is its placement: the indexer's placements and reorg rollbacks, and the fixture
// set's PLACED updates, all build it here.
import type { Bet } from "../prisma/generated/client.ts";

type LifecycleColumn =
  | "status"
  | "settledBlock"
  | "settledBlockHash"
  | "settledTx"
  | "settledAt"
  | "refundedBlock"
  | "refundedBlockHash"
  | "refundedTx"
  | "refundedAt"
  | "lastChangeBlock"
  | "finalizedUpdateBlock";

/** The bet as PENDING: settlement and refund cleared, `lastChangeBlock` its placement block. */
export function pendingBet(bet: Omit<Bet, LifecycleColumn>): Bet {
  return {
    ...bet,
    status: "PENDING",
    settledBlock: null,
    settledBlockHash: null,
    settledTx: null,
    settledAt: null,
    refundedBlock: null,
    refundedBlockHash: null,
    refundedTx: null,
    refundedAt: null,
    lastChangeBlock: bet.placedBlock,
    // Not announced final (nothing pending is): a pending row's stored marker is null too.
    finalizedUpdateBlock: null,
  };
}
