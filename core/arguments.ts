import { InputError } from "./errors.ts";

// Argument ranges of the contract, checked in one place by the gateway (before the cost of an
// operation is measured) and by the subgraphs (which may be reached directly): the same rule
// gives the same message, naming the argument, wherever it is applied.

/** `first` of a connection: 1..100. */
export const MAX_PAGE_SIZE = 100;
/** Ids in one `betResults`. */
export const MAX_BET_IDS = 100;
/** Bets one `betsByTransaction` answers at most (the first ones in (placedAt, betId) order). */
export const MAX_BETS_PER_TRANSACTION = 100;

export function checkPageSize(first: number): void {
  if (!Number.isInteger(first) || first < 1 || first > MAX_PAGE_SIZE) {
    throw new InputError(`first must be from 1 to ${MAX_PAGE_SIZE}`, { argumentName: "first" });
  }
}

export function checkBetIdCount(count: number): void {
  if (count > MAX_BET_IDS) throw new InputError(`betIds takes at most ${MAX_BET_IDS} ids`, { argumentName: "betIds" });
}

/** Longest game id an argument may name (the contract's ids are a few letters). */
export const MAX_GAME_LENGTH = 64;

/** A game id argument (`filter.game`, `fairnessStats(game:)`): short, and free of U+0000, which PostgreSQL text cannot hold. */
export function checkGameArgument(game: string | null | undefined, argumentName: string): void {
  if (game == null) return;
  if (game.length > MAX_GAME_LENGTH) throw new InputError(`${argumentName} is at most ${MAX_GAME_LENGTH} characters`, { argumentName });
  if (game.includes("\u0000")) throw new InputError(`${argumentName} must not contain the NUL character (U+0000)`, { argumentName });
}
