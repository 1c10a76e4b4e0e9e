// A socket's subscription: the requests that change it (validated with zod through the shared
// scalar parsers), the predicate an update must satisfy, and the Socket.IO rooms that implement
// that predicate.
//
// Rooms (one update is emitted once, to the union of the rooms it belongs to):
//
//   all                  the firehose
//   c:<chainId>          every bet of a chain
//   w:<address>          a wallet's bets on every chain
//   w:<chainId>:<addr>   a wallet's bets on one chain
//   b:<chainId>:<betId>  one bet
//
// An update (chainId C, bet B, player P) belongs to exactly {all, c:C, w:P, w:C:P, b:C:B}. A socket
// joins the rooms of its state (roomsForState), chosen so that
//
//   matches(state, update)  ⇔  roomsForState(state) ∩ roomsForUpdate(update) ≠ ∅
//
// (checked by a property test). Socket.IO's adapter computes the union of the target rooms per node
// and writes to each socket in it once, so a socket in several matching rooms (a wallet and one of
// its bets) still gets the update once; each node emits each update once (realtime/stream.ts), and
// a socket lives on one node.
import { z } from "zod";
import { InputError } from "../core/errors.ts";
import { parseAddress, parseChainId, parseUInt256 } from "../core/scalars.ts";
import type { BetRef, FeedUpdate, SubscribedPayload } from "./events.ts";

export interface SubscriptionState {
  wallets: Set<string>;
  /** Keyed by `${chainId}:${betId}`. */
  bets: Map<string, BetRef>;
  chainIds: Set<number>;
  all: boolean;
}

export interface SubscriptionLimits {
  /** wallets + bets per socket. */
  maxSubscriptions: number;
  /** chainIds per socket. */
  maxChainIds: number;
}

export const DEFAULT_SUBSCRIPTION_LIMITS: SubscriptionLimits = { maxSubscriptions: 200, maxChainIds: 32 };

export function emptyState(): SubscriptionState {
  return { wallets: new Set(), bets: new Map(), chainIds: new Set(), all: false };
}

export function isEmptyState(state: SubscriptionState): boolean {
  return !state.all && state.wallets.size === 0 && state.bets.size === 0 && state.chainIds.size === 0;
}

/**
 * Whether the state follows every update (of some chains): the `all` room or chain rooms
 * (roomsForState), so one delivery per update of them, however few the client wants (firehose.ts).
 */
export function isFirehose(state: SubscriptionState): boolean {
  return state.all || (state.chainIds.size > 0 && state.wallets.size === 0 && state.bets.size === 0);
}

export function stateToPayload(state: SubscriptionState, seq: bigint): SubscribedPayload {
  return {
    wallets: [...state.wallets],
    bets: [...state.bets.values()].map((b) => ({ chainId: b.chainId, betId: b.betId })),
    chainIds: [...state.chainIds],
    all: state.all,
    seq: seq.toString(),
  };
}

// ---------------------------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------------------------

/** A zod type that runs one of core/scalars.ts's parsers (its InputError message becomes the issue). */
function scalar<T>(parse: (value: unknown, what?: string) => T, what: string) {
  return z.unknown().transform((value, ctx): T => {
    try {
      return parse(value, what);
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      ctx.addIssue({ code: "custom", message: error.message });
      return z.NEVER;
    }
  });
}

const betRef = z.strictObject({
  chainId: scalar(parseChainId, "chainId"),
  betId: scalar(parseUInt256, "betId"),
});

const changeShape = {
  wallets: z.array(scalar(parseAddress, "wallet")).optional(),
  bets: z.array(betRef).optional(),
  chainIds: z.array(scalar(parseChainId, "chainId")).optional(),
  all: z.boolean().optional(),
};

const subscribeSchema = z.strictObject({
  ...changeShape,
  sinceSeq: scalar((value, what) => BigInt(parseUInt256(value, what)), "sinceSeq").optional(),
});
const unsubscribeSchema = z.strictObject(changeShape);

export interface SubscriptionChange {
  wallets: string[];
  bets: BetRef[];
  chainIds: number[];
  all: boolean;
}

export interface SubscribeChange extends SubscriptionChange {
  sinceSeq: bigint | undefined;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

function describeIssues(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return "Invalid payload";
  const path = issue.path.map((part, i) => (typeof part === "number" ? `[${part}]` : i === 0 ? String(part) : `.${String(part)}`)).join("");
  if (issue.path.length === 0 && issue.code === "invalid_type") return "The payload must be an object";
  return path ? `${path}: ${issue.message}` : issue.message;
}

function normalise(data: z.infer<typeof unsubscribeSchema>): SubscriptionChange {
  return { wallets: data.wallets ?? [], bets: data.bets ?? [], chainIds: data.chainIds ?? [], all: data.all ?? false };
}

export function parseSubscribe(payload: unknown): Parsed<SubscribeChange> {
  const parsed = subscribeSchema.safeParse(payload);
  if (!parsed.success) return { ok: false, message: describeIssues(parsed.error) };
  return { ok: true, value: { ...normalise(parsed.data), sinceSeq: parsed.data.sinceSeq } };
}

export function parseUnsubscribe(payload: unknown): Parsed<SubscriptionChange> {
  const parsed = unsubscribeSchema.safeParse(payload);
  if (!parsed.success) return { ok: false, message: describeIssues(parsed.error) };
  return { ok: true, value: normalise(parsed.data) };
}

export function betRefKey(chainId: number, betId: string): string {
  return `${chainId}:${betId}`;
}

export function cloneState(state: SubscriptionState): SubscriptionState {
  return { wallets: new Set(state.wallets), bets: new Map(state.bets), chainIds: new Set(state.chainIds), all: state.all };
}

/** The state after a subscribe: the union. */
export function addToState(state: SubscriptionState, change: SubscriptionChange): SubscriptionState {
  const next = cloneState(state);
  for (const wallet of change.wallets) next.wallets.add(wallet);
  for (const bet of change.bets) next.bets.set(betRefKey(bet.chainId, bet.betId), bet);
  for (const chainId of change.chainIds) next.chainIds.add(chainId);
  if (change.all) next.all = true;
  return next;
}

/** The state after an unsubscribe: the listed items removed; an empty request removes everything. */
export function removeFromState(state: SubscriptionState, change: SubscriptionChange): SubscriptionState {
  const everything = change.wallets.length === 0 && change.bets.length === 0 && change.chainIds.length === 0 && !change.all;
  if (everything) return emptyState();
  const next = cloneState(state);
  for (const wallet of change.wallets) next.wallets.delete(wallet);
  for (const bet of change.bets) next.bets.delete(betRefKey(bet.chainId, bet.betId));
  for (const chainId of change.chainIds) next.chainIds.delete(chainId);
  if (change.all) next.all = false;
  return next;
}

/** A limit the state breaks, as a message, or undefined. */
export function limitViolation(state: SubscriptionState, limits: SubscriptionLimits): string | undefined {
  const count = state.wallets.size + state.bets.size;
  if (count > limits.maxSubscriptions) {
    return `A socket may follow at most ${limits.maxSubscriptions} wallets + bets (this request would make ${count})`;
  }
  if (state.chainIds.size > limits.maxChainIds) {
    return `A socket may name at most ${limits.maxChainIds} chainIds (this request would make ${state.chainIds.size})`;
  }
  return undefined;
}

/** Every chain id a change names (to check that each is a known network). */
export function chainIdsOf(change: SubscriptionChange): number[] {
  return [...new Set([...change.chainIds, ...change.bets.map((b) => b.chainId)])];
}

// ---------------------------------------------------------------------------------------------
// Matching and rooms
// ---------------------------------------------------------------------------------------------

type UpdateKey = Pick<FeedUpdate, "chainId" | "betId" | "player">;

/** The contract's rule: chainIds narrow the rest; alone they mean every bet of those chains. */
export function matches(state: SubscriptionState, update: UpdateKey): boolean {
  if (state.chainIds.size > 0 && !state.chainIds.has(update.chainId)) return false;
  if (state.all) return true;
  if (state.wallets.has(update.player)) return true;
  if (state.bets.has(betRefKey(update.chainId, update.betId))) return true;
  return state.chainIds.size > 0 && state.wallets.size === 0 && state.bets.size === 0;
}

export const ALL_ROOM = "all";
const chainRoom = (chainId: number) => `c:${chainId}`;
const walletRoom = (address: string) => `w:${address}`;
const chainWalletRoom = (chainId: number, address: string) => `w:${chainId}:${address}`;
const betRoom = (chainId: number, betId: string) => `b:${chainId}:${betId}`;

export function roomsForUpdate(update: UpdateKey): string[] {
  return [
    ALL_ROOM,
    chainRoom(update.chainId),
    walletRoom(update.player),
    chainWalletRoom(update.chainId, update.player),
    betRoom(update.chainId, update.betId),
  ];
}

/** The fewest rooms that implement `matches` for this state. */
export function roomsForState(state: SubscriptionState): Set<string> {
  const rooms = new Set<string>();
  const chains = [...state.chainIds];
  if (chains.length === 0) {
    if (state.all) rooms.add(ALL_ROOM);
    else {
      for (const wallet of state.wallets) rooms.add(walletRoom(wallet));
      for (const bet of state.bets.values()) rooms.add(betRoom(bet.chainId, bet.betId));
    }
    return rooms;
  }
  if (state.all || (state.wallets.size === 0 && state.bets.size === 0)) {
    for (const chainId of chains) rooms.add(chainRoom(chainId));
    return rooms;
  }
  for (const wallet of state.wallets) for (const chainId of chains) rooms.add(chainWalletRoom(chainId, wallet));
  for (const bet of state.bets.values()) if (state.chainIds.has(bet.chainId)) rooms.add(betRoom(bet.chainId, bet.betId));
  return rooms;
}
