// Indexing functions: BetPlaced inserts the bet, BetSettled marks it and writes its result,
// BetRefunded marks it.
import { ponder } from "ponder:registry";
import { bet, betResult } from "ponder:schema";

ponder.on("BetVault:BetPlaced", async ({ event, context }) => {
  await context.db.insert(bet).values({
    betId: event.args.betId,
    player: event.args.player,
    token: event.args.token,
    stake: event.args.stake,
    game: event.args.game,
    clientSeed: event.args.clientSeed,
    serverSeedHash: event.args.serverSeedHash,
    status: "PENDING",
    placedBlock: event.block.number,
    placedTx: event.transaction.hash,
    placedAt: event.block.timestamp,
  });
});

ponder.on("BetVault:BetSettled", async ({ event, context }) => {
  const { betId, outcome, won, payout, pA, pB, pC } = event.args;
  await context.db
    .update(bet, { betId })
    .set({ status: "SETTLED", settledBlock: event.block.number, settledTx: event.transaction.hash, settledAt: event.block.timestamp });
  const decimal = (xs: readonly bigint[]) => xs.map((x) => x.toString());
  await context.db.insert(betResult).values({ betId, outcome, won, payout, proof: { pA: decimal(pA), pB: pB.map(decimal), pC: decimal(pC) } });
});

ponder.on("BetVault:BetRefunded", async ({ event, context }) => {
  await context.db
    .update(bet, { betId: event.args.betId })
    .set({ status: "REFUNDED", refundedBlock: event.block.number, refundedTx: event.transaction.hash, refundedAt: event.block.timestamp });
});
