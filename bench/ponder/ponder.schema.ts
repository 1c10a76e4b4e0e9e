// The wallet page's data as a Ponder app would model it: one row per bet, one per result.
import { index, onchainTable, relations } from "ponder";

export const bet = onchainTable(
  "bet",
  (t) => ({
    betId: t.bigint().primaryKey(),
    player: t.hex().notNull(),
    token: t.hex().notNull(),
    stake: t.bigint().notNull(),
    game: t.text().notNull(),
    clientSeed: t.hex().notNull(),
    serverSeedHash: t.hex().notNull(),
    status: t.text().notNull(),
    placedBlock: t.bigint().notNull(),
    placedTx: t.hex().notNull(),
    placedAt: t.bigint().notNull(),
    settledBlock: t.bigint(),
    settledTx: t.hex(),
    settledAt: t.bigint(),
    refundedBlock: t.bigint(),
    refundedTx: t.hex(),
    refundedAt: t.bigint(),
  }),
  // A player's page, newest first (one chain: bet id order is placement order).
  (table) => ({ playerPage: index().on(table.player, table.betId) }),
);

export const betResult = onchainTable("bet_result", (t) => ({
  betId: t.bigint().primaryKey(),
  outcome: t.bigint().notNull(),
  won: t.boolean().notNull(),
  payout: t.bigint().notNull(),
  /** The proof as the BetSettled event carries it (Solidity layout, decimal strings). */
  proof: t.json().notNull(),
}));

export const betRelations = relations(bet, ({ one }) => ({
  result: one(betResult, { fields: [bet.betId], references: [betResult.betId] }),
}));
