// `confirmations` and `finalized` of a bet in a `bets:update`, as of delivery (docs/reference/
// realtime.md): the outbox stores each update's bet as it was committed, and a replay hours later
// must not say "1 confirmation, not final". Every send (live, buffered or replayed) goes through
// `payload`, which applies the one finality rule (core/finality.ts) at the network's current head.
//
// Delivery is synchronous (seq order must hold), so the heads come from the last snapshot read: the
// node reads them before it handles each feed message (the publisher's heartbeat comes every second)
// and each local poll, a replay before each page (NetworkDirectory reads at most once per its ttl). A snapshot older than the update itself is never used as is: the head a
// commit recorded is where its stored confirmations were counted from, and heads only move forward.
import type { BetJson } from "../core/bet-json.ts";
import { depthAt } from "../core/finality.ts";
import type { Logger } from "../core/logger.ts";
import type { NetworkDirectory, NetworkEntry } from "../core/networks.ts";
import type { BetUpdatePayload, FeedUpdate } from "./events.ts";

/** Block of the bet's latest state change, as its payload states it. */
export function lastChangeBlock(bet: BetJson): bigint {
  if (bet.status === "REFUNDED" && bet.refundedBlock !== null) return BigInt(bet.refundedBlock);
  if (bet.status === "SETTLED" && bet.settledBlock !== null) return BigInt(bet.settledBlock);
  return BigInt(bet.placedBlock);
}

/** The head a stored payload's confirmations were counted from (null when it counted none). */
function committedHead(bet: BetJson, changeBlock: bigint): bigint | null {
  const confirmations = BigInt(bet.confirmations);
  return confirmations > 0n ? changeBlock + confirmations - 1n : null;
}

export class DeliveryDepth {
  private heads: ReadonlyMap<number, NetworkEntry> = new Map();
  private refreshing: Promise<void> | undefined;
  private lastFailureLog = -Infinity;

  private readonly networks: NetworkDirectory;
  private readonly logger: Logger;
  constructor(networks: NetworkDirectory, logger: Logger) {
    this.networks = networks;
    this.logger = logger;
  }

  /** Reads the networks' current heads (one small query at most every directory ttl). */
  refresh(): Promise<void> {
    this.refreshing ??= this.networks
      .all()
      .then((heads) => {
        this.heads = heads;
      })
      .catch((error: unknown) => {
        // Delivery goes on with the heads last read (never behind the commits themselves).
        if (performance.now() - this.lastFailureLog < 60_000) return;
        this.lastFailureLog = performance.now();
        const code = (error as { code?: unknown }).code;
        this.logger.warn({ code: typeof code === "string" ? code : "error" }, "reading the networks' heads for delivery failed");
      })
      .finally(() => {
        this.refreshing = undefined;
      });
    return this.refreshing;
  }

  /** refresh(), waited for at most `ms` (a stalled database must not hold delivery up). */
  refreshWithin(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    return Promise.race([this.refresh(), new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]).finally(() => clearTimeout(timer));
  }

  /** The public payload of `update`, its bet's depth counted now. */
  payload(update: FeedUpdate): BetUpdatePayload {
    void this.refresh();
    return { seq: update.seq, type: update.type, chainId: update.chainId, betId: update.betId, bet: this.current(update) };
  }

  private current(update: FeedUpdate): BetJson {
    // A removed bet's change is no longer on the chain: nothing confirms it.
    if (update.type === "REMOVED") return { ...update.bet, confirmations: "0", finalized: false };
    const network = this.heads.get(update.chainId);
    const changeBlock = lastChangeBlock(update.bet);
    const known = network?.headBlock ?? null;
    const committed = committedHead(update.bet, changeBlock);
    const head = known === null || (committed !== null && committed > known) ? committed : known;
    if (!network) return update.bet;
    const depth = depthAt(changeBlock, head, network.confirmations);
    return { ...update.bet, confirmations: depth.confirmations.toString(), finalized: depth.finalized };
  }
}
