// The backfill's commit groups and proofs verified ahead (indexer/backfill-pipeline.ts): whole
// blocks within both caps, one verification per group in group order, the seeds of a bet placed
// in an earlier group, and a never-placed bet failing its own group only.
import type { Hex } from "viem";
import { describe, expect, it } from "vitest";
import type { SolidityProof } from "../chain/betvault.ts";
import { IndexerInvariantError } from "./errors.ts";
import { commitGroups, verifyGroupsAhead } from "./backfill-pipeline.ts";
import type { BetEvent } from "./events.ts";
import type { SettlementProof } from "./proofs.ts";

const hex = (n: number | bigint, bytes = 32) => `0x${n.toString(16).padStart(bytes * 2, "0")}` as Hex;
const base = (betId: bigint, block: number, logIndex: number) => ({
  betId,
  player: hex(1, 20),
  blockNumber: BigInt(block),
  blockHash: hex(block),
  transactionHash: hex(1000 + logIndex),
  logIndex,
});
const placed = (betId: bigint, block: number, logIndex: number): BetEvent => ({
  ...base(betId, block, logIndex),
  kind: "BetPlaced",
  token: hex(0, 20),
  stake: 1n,
  game: "dice",
  clientSeed: hex(500n + betId),
  serverSeedHash: hex(900n + betId),
  deadline: 0n,
});
const proof = {
  pA: [1n, 2n],
  pB: [
    [1n, 2n],
    [3n, 4n],
  ],
  pC: [1n, 2n],
} as unknown as SolidityProof;
const settled = (betId: bigint, block: number, logIndex: number): BetEvent => ({
  ...base(betId, block, logIndex),
  kind: "BetSettled",
  outcome: 7n,
  won: false,
  payout: 0n,
  proof,
});

describe("commitGroups", () => {
  // Blocks 1..4: 4 placements in block 1, then 2, 3 and 1 settlements in blocks 2, 3, 4.
  const events = [
    ...[1n, 2n, 3n, 4n].map((id, i) => placed(id, 1, i)),
    settled(1n, 2, 0),
    settled(2n, 2, 1),
    settled(3n, 3, 0),
    settled(4n, 3, 1),
    placed(5n, 3, 2),
    settled(5n, 4, 0),
  ];

  it("cuts at whole blocks once either cap is reached", () => {
    expect(commitGroups(events, { maxEvents: 100, maxSettlements: 100 })).toEqual([[0, 10]]);
    // 2 settlements: block 1 + block 2 reach the cap; then block 3 (2 settlements); then block 4.
    expect(commitGroups(events, { maxEvents: 100, maxSettlements: 2 })).toEqual([
      [0, 6],
      [6, 9],
      [9, 10],
    ]);
    // 3 events: block 1 alone is larger than the cap and still goes whole; the third event of the
    // next group opens block 3, which goes whole too.
    expect(commitGroups(events, { maxEvents: 3, maxSettlements: 100 })).toEqual([
      [0, 4],
      [4, 9],
      [9, 10],
    ]);
    expect(commitGroups([], { maxEvents: 3, maxSettlements: 3 })).toEqual([]);
  });
});

describe("verifyGroupsAhead", () => {
  it("starts every group's verification at once, in order, with the seeds of bets placed earlier or stored", async () => {
    const groups = [[placed(1n, 1, 0), placed(2n, 1, 1)], [settled(1n, 2, 0), settled(3n, 2, 1)], [settled(2n, 3, 0)]];
    const stored = new Map([["3", { serverSeedHash: hex(33), clientSeed: hex(44) }]]);
    const calls: { betId: bigint; serverSeedHash: Hex; clientSeed: Hex }[][] = [];
    const promises = verifyGroupsAhead(groups, stored, async (inputs) => {
      calls.push(inputs.map(({ event, bet }) => ({ betId: event.betId, ...bet })));
      return new Map<string, SettlementProof>();
    });
    // All three were started before any was awaited.
    expect(calls.map((c) => c.map((i) => i.betId))).toEqual([[], [1n, 3n], [2n]]);
    expect(calls[1]).toEqual([
      { betId: 1n, serverSeedHash: hex(901n), clientSeed: hex(501n) },
      { betId: 3n, serverSeedHash: hex(33), clientSeed: hex(44) },
    ]);
    expect(calls[2]).toEqual([{ betId: 2n, serverSeedHash: hex(902n), clientSeed: hex(502n) }]);
    await Promise.all(promises);
  });

  it("a settlement of a bet never placed rejects its own group's promise only", async () => {
    const groups = [[placed(1n, 1, 0), settled(1n, 1, 1)], [settled(9n, 2, 0)], [settled(1n, 3, 0)]];
    const promises = verifyGroupsAhead(groups, new Map(), async () => new Map<string, SettlementProof>());
    await expect(promises[0]).resolves.toBeInstanceOf(Map);
    await expect(promises[1]).rejects.toBeInstanceOf(IndexerInvariantError);
    await expect(promises[2]).resolves.toBeInstanceOf(Map);
  });
});
