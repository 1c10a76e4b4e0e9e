// Firehose subscriptions on a node (docs/reference/limits.md#socketio). A socket that follows every
// update, `{ all: true }` or `chainIds` alone (subscription.ts isFirehose), costs the node one
// delivery per update, where a wallet or bet subscriber costs one per update of its own; the
// per-address socket bounds (admission.ts) do not bound them when a crowd spreads over many
// addresses. So a node holds at most `maxPerNode` firehose subscriptions, a CPU budget the operator
// sizes (sockets × updates per second × CPU per delivery), and one client address at most
// `maxPerAddress` of them, so that a crowd of few addresses cannot take every slot. An address's
// first firehose on the node is not counted against the node's bound (only the node-wide socket
// cap of admission.ts bounds those): otherwise a crowd of 32 addresses holding their 8 each would
// keep every newcomer's live page and waitForBet out for as long as it liked. A slot is taken
// when a socket's subscription becomes a firehose and given back when it stops being one or the
// socket leaves. Counting, not pricing: a firehose costs for as long as it is open, which a
// one-off charge of points would not cover, and a charge per delivery would cost the points store
// more than the delivery itself.
import { RealtimeErrorCode, type ErrorBody } from "./events.ts";

export interface FirehoseLimits {
  /** Firehose subscriptions a node holds at most beyond each client address's first (0: no bound). */
  maxPerNode: number;
  /** Firehose subscriptions one client address holds at most on a node (0: no bound). */
  maxPerAddress: number;
}

/** The library's defaults, and REALTIME_MAX_FIREHOSE_SUBSCRIPTIONS / REALTIME_MAX_FIREHOSE_PER_ADDRESS's. */
export const DEFAULT_FIREHOSE_LIMITS: FirehoseLimits = { maxPerNode: 256, maxPerAddress: 8 };

/** Why a firehose subscription was refused: the label of `realtime_firehose_refusals_total`. */
export type FirehoseRefusalReason = "node" | "address";

export interface FirehoseStats {
  /** Firehose subscriptions this node holds now. */
  subscriptions: number;
  /** Refused since start, by reason. */
  refusals: Record<FirehoseRefusalReason, number>;
}

/** Retry hints: a node's slot frees when any firehose client leaves, an address's when one of its own does. */
const RETRY_AFTER_SECONDS: Record<FirehoseRefusalReason, number> = { node: 10, address: 30 };

/** The node's firehose slots, per node and per client address. */
export class FirehoseSlots {
  private readonly byAddress = new Map<string, number>();
  private held = 0;
  /** Held beyond each address's first: what `maxPerNode` bounds. */
  private extra = 0;
  private readonly refusals: Record<FirehoseRefusalReason, number> = { node: 0, address: 0 };

  private readonly limits: FirehoseLimits;
  constructor(limits: FirehoseLimits) {
    this.limits = limits;
  }

  /** Takes a slot for `address`; else the refusal to answer (the client's own share first, then the node's). */
  take(address: string): ErrorBody | undefined {
    const { maxPerNode, maxPerAddress } = this.limits;
    const mine = this.byAddress.get(address) ?? 0;
    if (maxPerAddress > 0 && mine >= maxPerAddress) {
      this.refusals.address++;
      return {
        code: RealtimeErrorCode.RateLimited,
        message: `At most ${maxPerAddress} firehose subscriptions per client address on a node ({ all } or chainIds alone): unsubscribe one, or retry after ${RETRY_AFTER_SECONDS.address} s; wallets and bets can still be followed`,
        retryAfterSeconds: RETRY_AFTER_SECONDS.address,
      };
    }
    if (maxPerNode > 0 && mine > 0 && this.extra >= maxPerNode) {
      this.refusals.node++;
      return {
        code: RealtimeErrorCode.ServiceUnavailable,
        message: `This node serves its most firehose subscriptions (${maxPerNode} beyond one per client address, and this address has one): retry after ${RETRY_AFTER_SECONDS.node} s (another node may have room); wallets and bets can still be followed`,
        retryAfterSeconds: RETRY_AFTER_SECONDS.node,
      };
    }
    this.held++;
    if (mine > 0) this.extra++;
    this.byAddress.set(address, mine + 1);
    return undefined;
  }

  release(address: string): void {
    const left = (this.byAddress.get(address) ?? 1) - 1;
    if (left > 0) this.extra--;
    if (left > 0) this.byAddress.set(address, left);
    else this.byAddress.delete(address); // no entry per idle address
    this.held--;
  }

  stats(): FirehoseStats {
    return { subscriptions: this.held, refusals: { ...this.refusals } };
  }
}

/** One socket's hold on a slot: at most one, whatever its subscription; given back once. */
export class FirehoseHold {
  private held = false;
  private left = false;

  private readonly slots: FirehoseSlots;
  private readonly address: string;
  constructor(slots: FirehoseSlots, address: string) {
    this.slots = slots;
    this.address = address;
  }

  /** Before a firehose state is applied: takes a slot unless one is held (or the socket left); else the refusal. */
  claim(): ErrorBody | undefined {
    if (this.held || this.left) return undefined;
    const refusal = this.slots.take(this.address);
    if (!refusal) this.held = true;
    return refusal;
  }

  /** After a state is applied: gives the slot back unless the state is still a firehose. */
  keep(firehose: boolean): void {
    if (!firehose) this.release();
  }

  /** The socket left: its slot goes back, and it takes none again. */
  leave(): void {
    this.left = true;
    this.release();
  }

  private release(): void {
    if (!this.held) return;
    this.held = false;
    this.slots.release(this.address);
  }
}
