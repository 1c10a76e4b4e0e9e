import { checkGameArgument } from "../../core/arguments.ts";
import { InputError } from "../../core/errors.ts";
import type { BetStatus } from "../../prisma/generated/client.ts";

// Checks shared by the filters of playerBets and bets: the same rule gives the same message.

/** The statuses distinct and sorted (equal filters make equal cursors); an empty list is BAD_USER_INPUT. */
export function checkedStatuses(status: readonly BetStatus[] | null | undefined): BetStatus[] | undefined {
  if (status == null) return undefined;
  if (status.length === 0) {
    throw new InputError("filter.status must list at least one status; omit it to match every status", { argumentName: "filter.status" });
  }
  return [...new Set(status)].sort();
}

export function checkGame(game: string | null | undefined): void {
  checkGameArgument(game, "filter.game");
}
