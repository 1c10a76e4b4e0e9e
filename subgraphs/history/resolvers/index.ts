import { scalarResolvers } from "../../../core/scalars.ts";
import type { Resolvers } from "../generated/resolvers-types.ts";
import { Bet } from "./Bet.ts";
import { BetConnection } from "./BetConnection.ts";
import { NetworkConfig } from "./NetworkConfig.ts";
import { bets } from "./Query/bets.ts";
import { betsByTransaction } from "./Query/betsByTransaction.ts";
import { pendingBetCount } from "./Query/pendingBetCount.ts";
import { playerBets } from "./Query/playerBets.ts";

export const resolvers: Resolvers = {
  ...scalarResolvers,
  Query: { playerBets, pendingBetCount, bets, betsByTransaction },
  Bet,
  BetConnection,
  NetworkConfig,
};
