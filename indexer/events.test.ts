// The fast BetVault log decoder agrees with viem's generic decoder on random events (canonical
// encodings take the fast path, anything else falls back to viem), and bad logs are refused.
import fc from "fast-check";
import { encodeAbiParameters, encodeEventTopics, getAbiItem, toHex, type AbiParameter, type Hex } from "viem";
import { describe, expect, it } from "vitest";
import { betVaultAbi } from "../chain/generated/artifacts.ts";
import { decodeBetLog, decodeBetLogs, decodeBetLogWithViem } from "./events.ts";
import type { ChainLog } from "./rpc.ts";

const uint256 = fc.bigInt({ min: 0n, max: (1n << 256n) - 1n });
const bytes32 = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => toHex(b));
const address = fc.uint8Array({ minLength: 20, maxLength: 20 }).map((b) => toHex(b));

function log(topics: Hex[], data: Hex, logIndex = 0): ChainLog {
  return {
    address: "0x00000000000000000000000000000000000000aa",
    topics,
    data,
    blockNumber: 7n,
    blockHash: `0x${"11".repeat(32)}`,
    blockTimestamp: 1_700_000_000n,
    transactionHash: `0x${"22".repeat(32)}`,
    logIndex,
    removed: false,
  };
}

const nonIndexed = (inputs: readonly AbiParameter[]): AbiParameter[] => inputs.filter((i) => !("indexed" in i && i.indexed));
const INPUTS = {
  BetPlaced: nonIndexed(getAbiItem({ abi: betVaultAbi, name: "BetPlaced" }).inputs),
  BetSettled: nonIndexed(getAbiItem({ abi: betVaultAbi, name: "BetSettled" }).inputs),
  BetRefunded: nonIndexed(getAbiItem({ abi: betVaultAbi, name: "BetRefunded" }).inputs),
};
const inputsOf = (name: keyof typeof INPUTS) => INPUTS[name];

const placed = fc
  .record({
    betId: uint256,
    player: address,
    token: address,
    stake: uint256,
    game: fc.string({ unit: "grapheme", maxLength: 70 }),
    clientSeed: bytes32,
    serverSeedHash: bytes32,
    deadline: fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }),
  })
  .map((a) =>
    log(
      encodeEventTopics({ abi: betVaultAbi, eventName: "BetPlaced", args: { betId: a.betId, player: a.player } }) as Hex[],
      encodeAbiParameters(inputsOf("BetPlaced"), [a.token, a.stake, a.game, a.clientSeed, a.serverSeedHash, a.deadline]),
    ),
  );
const settled = fc
  .record({ betId: uint256, player: address, outcome: uint256, won: fc.boolean(), payout: uint256, p: fc.array(uint256, { minLength: 8, maxLength: 8 }) })
  .map((a) => {
    const [a0, a1, b00, b01, b10, b11, c0, c1] = a.p as [bigint, bigint, bigint, bigint, bigint, bigint, bigint, bigint];
    return log(
      encodeEventTopics({ abi: betVaultAbi, eventName: "BetSettled", args: { betId: a.betId, player: a.player } }) as Hex[],
      encodeAbiParameters(inputsOf("BetSettled"), [
        a.outcome,
        a.won,
        a.payout,
        [a0, a1],
        [
          [b00, b01],
          [b10, b11],
        ],
        [c0, c1],
      ]),
    );
  });
const refunded = fc
  .record({ betId: uint256, player: address, amount: uint256 })
  .map((a) =>
    log(
      encodeEventTopics({ abi: betVaultAbi, eventName: "BetRefunded", args: { betId: a.betId, player: a.player } }) as Hex[],
      encodeAbiParameters(inputsOf("BetRefunded"), [a.amount]),
    ),
  );

describe("decodeBetLog", () => {
  it("agrees with viem on random BetPlaced / BetSettled / BetRefunded logs", () => {
    fc.assert(
      fc.property(fc.oneof(placed, settled, refunded), (l) => {
        expect(decodeBetLog(l)).toEqual(decodeBetLogWithViem(l));
      }),
      { numRuns: 500 },
    );
  });

  it("falls back to viem for a non-canonical (but valid) encoding", () => {
    // BetPlaced whose string lives one word further than usual (offset 0xe0 with a padding word).
    const topics = encodeEventTopics({ abi: betVaultAbi, eventName: "BetPlaced", args: { betId: 5n, player: `0x${"33".repeat(20)}` } }) as Hex[];
    const canonical = encodeAbiParameters(inputsOf("BetPlaced"), [`0x${"00".repeat(20)}`, 9n, "dice", `0x${"44".repeat(32)}`, `0x${"55".repeat(32)}`, 99n]);
    const words = canonical.slice(2).match(/.{64}/g) ?? [];
    words[2] = (0xe0).toString(16).padStart(64, "0");
    const shifted = `0x${[...words.slice(0, 6), "0".repeat(64), ...words.slice(6)].join("")}` as Hex;
    const event = decodeBetLog(log(topics, shifted));
    expect(event).toMatchObject({ kind: "BetPlaced", betId: 5n, game: "dice", stake: 9n, deadline: 99n });
  });

  it("refuses logs that do not decode and logs of removed blocks, and orders by block and log index", () => {
    const [good] = fc.sample(refunded, 1) as [ChainLog];
    expect(() => decodeBetLog({ ...good, data: "0x1234" })).toThrow(/does not decode/);
    expect(() => decodeBetLogs([{ ...good, removed: true }])).toThrow(/removed/);
    const a = { ...good, blockNumber: 9n, logIndex: 0 };
    const b = { ...good, blockNumber: 8n, logIndex: 5 };
    const c = { ...good, blockNumber: 8n, logIndex: 1 };
    expect(decodeBetLogs([a, b, c]).map((e) => [e.blockNumber, e.logIndex])).toEqual([
      [8n, 1],
      [8n, 5],
      [9n, 0],
    ]);
  });
});
