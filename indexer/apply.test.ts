import type { Hex } from "viem";
import { describe, expect, it } from "vitest";
import { betResult } from "../chain/betvault.ts";
import type { NetworkEntry } from "../core/networks.ts";
import type { Bet } from "../prisma/generated/client.ts";
import { applyEvents, betIdKey, betsToLoad, settlementInputs, settlementKey } from "./apply.ts";
import { IndexerInvariantError } from "./errors.ts";
import type { BetEvent, BetPlacedEvent, BetRefundedEvent, BetSettledEvent } from "./events.ts";
import type { SettlementProof } from "./proofs.ts";

const network: NetworkEntry = { chainId: 31337, name: "localnet", confirmations: 2, headBlock: 20n, finalizedBlock: 18n };
const hash = (n: number) => `0x${n.toString(16).padStart(64, "0")}` as Hex;
const PLAYER = "0x00000000000000000000000000000000000000b1" as Hex;

const placed = (betId: bigint, block: bigint, logIndex = 0): BetPlacedEvent => ({
  kind: "BetPlaced",
  betId,
  player: PLAYER,
  blockNumber: block,
  blockHash: hash(Number(block)),
  transactionHash: hash(1000 + Number(betId)),
  logIndex,
  token: "0x0000000000000000000000000000000000000000",
  stake: 10n ** 18n,
  game: "coinflip",
  clientSeed: hash(77),
  serverSeedHash: hash(88),
  deadline: 2_000_000_000n,
});
const settled = (betId: bigint, block: bigint, outcome = 4n, logIndex = 1): BetSettledEvent => {
  const { won, payout } = betResult("coinflip", outcome, 10n ** 18n);
  return {
    kind: "BetSettled",
    betId,
    player: PLAYER,
    blockNumber: block,
    blockHash: hash(Number(block)),
    transactionHash: hash(2000 + Number(betId)),
    logIndex,
    outcome,
    won,
    payout,
    proof: {
      pA: [1n, 2n],
      pB: [
        [3n, 4n],
        [5n, 6n],
      ],
      pC: [7n, 8n],
    },
  };
};
const refunded = (betId: bigint, block: bigint, logIndex = 2): BetRefundedEvent => ({
  kind: "BetRefunded",
  betId,
  player: PLAYER,
  blockNumber: block,
  blockHash: hash(Number(block)),
  transactionHash: hash(3000 + Number(betId)),
  logIndex,
  amount: 10n ** 18n,
});
const proof: SettlementProof = {
  proof: {
    pi_a: ["1", "2", "1"],
    pi_b: [
      ["4", "3"],
      ["6", "5"],
      ["1", "0"],
    ],
    pi_c: ["7", "8", "1"],
    protocol: "groth16",
    curve: "bn128",
  },
  publicSignals: ["4", "88", "1", "77"],
  solidityCalldata: "calldata",
  verified: true,
};
const timestamps = new Map([5n, 6n, 7n, 8n].map((b) => [b, 1_700_000_000n + b]));

function first<T>(items: T[]): T {
  const [item] = items;
  if (item === undefined) throw new Error("empty");
  return item;
}

function apply(events: BetEvent[], existing: ReadonlyMap<string, Bet> = new Map()) {
  const proofs = new Map(events.filter((e) => e.kind === "BetSettled").map((e) => [settlementKey(e), proof]));
  return applyEvents({ chainId: 31337n, events, existing, timestamps, proofs, network });
}

describe("applyEvents", () => {
  it("places, settles and refunds, one outbox row per change carrying the state right after it", () => {
    const out = apply([placed(1n, 5n), placed(2n, 5n, 1), settled(1n, 6n), refunded(2n, 7n)]);
    expect(out.updates.map((u) => [u.type, betIdKey(BigInt(String(u.betId))), u.blockNumber])).toEqual([
      ["PLACED", "1", 5n],
      ["PLACED", "2", 5n],
      ["SETTLED", "1", 6n],
      ["REFUNDED", "2", 7n],
    ]);
    // The PLACED payload of bet 1 is the pending bet, although the batch also settles it.
    expect(out.updates[0]?.bet).toMatchObject({
      status: "PENDING",
      result: null,
      settledBlock: null,
      placedAt: "1700000005",
      confirmations: "16",
      finalized: true,
    });
    expect(out.updates[2]?.bet).toMatchObject({
      status: "SETTLED",
      settledBlock: "6",
      settledAt: "1700000006",
      result: { outcome: "4", won: true, proof: { verified: true, piA: ["1", "2", "1"] } },
    });
    expect(out.updates[3]?.bet).toMatchObject({ status: "REFUNDED", refundedBlock: "7", result: null });

    const bets = new Map(out.bets.map((b) => [betIdKey(b.betId), b]));
    expect(bets.get("1")).toMatchObject({ status: "SETTLED", lastChangeBlock: 6n, settledTx: hash(2001), placedLogIndex: 0 });
    expect(bets.get("2")).toMatchObject({ status: "REFUNDED", lastChangeBlock: 7n, refundedAt: 1_700_000_007n });
    expect(out.results).toHaveLength(1);
    expect(out.results[0]).toMatchObject({ won: true, verified: true, publicSignals: proof.publicSignals });
  });

  it("settles a stored bet", () => {
    const stored = first(apply([placed(9n, 5n)]).bets);
    const out = apply([settled(9n, 8n)], new Map([["9", stored]]));
    expect(out.bets[0]).toMatchObject({ status: "SETTLED", placedBlock: 5n, settledBlock: 8n });
  });

  it("refuses impossible histories", () => {
    expect(() => apply([settled(1n, 6n)])).toThrow(IndexerInvariantError);
    expect(() => apply([placed(1n, 5n), placed(1n, 6n)])).toThrow(/placed twice/);
    expect(() => apply([placed(1n, 5n), settled(1n, 6n), refunded(1n, 7n)])).toThrow(/already SETTLED/);
    expect(() => apply([placed(1n, 5n), { ...settled(1n, 6n), payout: 1n }])).toThrow(/game rules/);
    expect(() => applyEvents({ chainId: 31337n, events: [placed(1n, 9n)], existing: new Map(), timestamps, proofs: new Map(), network })).toThrow(
      /no timestamp/,
    );
  });
});

it("betsToLoad / settlementInputs find what a batch needs from the database", () => {
  const events = [placed(1n, 5n), settled(1n, 6n), settled(2n, 6n, 4n, 3), refunded(3n, 7n)];
  expect(betsToLoad(events)).toEqual([2n, 3n]);
  const stored = { ...first(apply([placed(2n, 5n)]).bets), serverSeedHash: hash(5), clientSeed: hash(6) };
  const inputs = settlementInputs(events, new Map([["2", stored]]));
  expect(inputs.map((i) => [i.event.betId, i.bet.serverSeedHash])).toEqual([
    [1n, hash(88)],
    [2n, hash(5)],
  ]);
  expect(() => settlementInputs([settled(4n, 6n)], new Map())).toThrow(IndexerInvariantError);
});
