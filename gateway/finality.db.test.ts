// The finality rule through GraphQL (docs/reference/lifecycle.md#finality): at the boundary block —
// the head at which a bet's latest change reaches exactly the network's `confirmations` — the bet
// is `finalized`, and `indexing.finalizedBlock` is that change's block. One block earlier it is not.
import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestStack, type TestStack } from "../test/stack.ts";

let t: TestStack;
beforeAll(async () => {
  t = await startTestStack({ bets: 12 }, { networkTtlMs: 0 });
});
afterAll(async () => {
  await t?.close();
});

interface Answer {
  betResult: { confirmations: string; finalized: boolean; network: { confirmations: number } };
  networkConfigs: { indexing: { headBlock: string; finalizedBlock: string } }[];
}

async function atHead(chainId: number, betId: string, head: bigint): Promise<Answer> {
  await t.db.prisma.indexingCursor.update({ where: { chainId: BigInt(chainId) }, data: { headBlock: head, indexedBlock: head } });
  const { data, errors } = await t.gql<Answer>(
    `query ($chainId: ChainId!, $betId: UInt256!) {
      betResult(chainId: $chainId, betId: $betId) { confirmations finalized network { confirmations } }
      networkConfigs(chainId: $chainId) { indexing { headBlock finalizedBlock } } }`,
    { chainId, betId },
  );
  expect(errors).toBeUndefined();
  expect(data!.networkConfigs[0]!.indexing.headBlock).toBe(head.toString());
  return data!;
}

it("turns finalized exactly when confirmations reach the network's confirmations, and finalizedBlock agrees", async () => {
  const sample = t.fixtures.sampleSettled!;
  const bet = await t.db.prisma.bet.findUniqueOrThrow({ where: { chainId_betId: { chainId: BigInt(sample.chainId), betId: sample.betId } } });
  const network = await t.db.prisma.network.findUniqueOrThrow({ where: { chainId: BigInt(sample.chainId) } });
  const required = BigInt(network.confirmations);
  const boundary = bet.lastChangeBlock + required - 1n;

  const before = await atHead(sample.chainId, sample.betId, boundary - 1n);
  expect(before.betResult).toEqual({ confirmations: (required - 1n).toString(), finalized: false, network: { confirmations: network.confirmations } });
  expect(BigInt(before.networkConfigs[0]!.indexing.finalizedBlock)).toBe(bet.lastChangeBlock - 1n);

  const at = await atHead(sample.chainId, sample.betId, boundary);
  expect(at.betResult).toEqual({ confirmations: required.toString(), finalized: true, network: { confirmations: network.confirmations } });
  expect(BigInt(at.networkConfigs[0]!.indexing.finalizedBlock)).toBe(bet.lastChangeBlock);
});
