import { InputError } from "../../core/errors.ts";
import type { BetStatus } from "../../prisma/generated/client.ts";

// Checks shared by the filters of playerBets and bets: the same rule gives the same message.

const MAX_GAME_LENGTH = 64;

/** The statuses distinct and sorted (equal filters make equal cursors); an empty list is BAD_USER_INPUT. */
export function checkedStatuses(status: readonly BetStatus[] | null | undefined): BetStatus[] | undefined {
  if (status == null) return undefined;
  if (status.length === 0) {
    throw new InputError("filter.status must list at least one status; omit it to match every status", { argumentName: "filter.status" });
  }
  return [...new Set(status)].sort();
}

export function checkGame(game: string | null | undefined): void {
  if (game == null) return;
  if (game.length > MAX_GAME_LENGTH) {
    throw new InputError(`filter.game is at most ${MAX_GAME_LENGTH} characters`, { argumentName: "filter.game" });
  }
  // PostgreSQL text cannot hold U+0000, so no game id contains it (and the database would refuse the query).
  if (game.includes("\u0000")) {
    throw new InputError("filter.game must not contain the NUL character (U+0000)", { argumentName: "filter.game" });
  }
}
