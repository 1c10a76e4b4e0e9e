import { readFileSync } from "node:fs";
import * as snarkjs from "snarkjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { conventionViolations, startTestStack, type TestStack } from "../test/stack.ts";

// Every query of the contract, through the gateway, on the fixture set: answers, conventions on
// every field, proofs that verify with the served key, and not-found as null.

const BET_FIELDS = `chainId betId player token stake game clientSeed serverSeedHash status
  placedBlock placedTx placedAt settledBlock settledTx settledAt refundedBlock refundedTx refundedAt
  confirmations finalized network { chainId name confirmations }
  result { outcome won payout proof { protocol curve piA piB piC publicSignals solidityCalldata verified } }`;

let t: TestStack;
beforeAll(async () => {
  t = await startTestStack({ bets: 120 });
});
afterAll(async () => {
  await t?.close();
});

describe("networkConfigs", () => {
  it("lists every network with contracts, verification key and indexing status", async () => {
    const { data, errors } = await t.gql<{ networkConfigs: Record<string, unknown>[] }>(`{
      networkConfigs { chainId name confirmations contracts { name address deployBlock }
        verificationKey { protocol curve nPublic json sha256 }
        indexing { indexedBlock headBlock finalizedBlock lagBlocks isReady updatedAt } } }`);
    expect(errors).toBeUndefined();
    expect(data!.networkConfigs.map((n) => n.chainId)).toEqual([1337, 31337]);
    expect(conventionViolations(data)).toEqual([]);
    const localnet = data!.networkConfigs[1] as {
      contracts: { name: string }[];
      verificationKey: { protocol: string; curve: string; nPublic: number; json: string; sha256: string };
      indexing: { isReady: boolean; lagBlocks: number; updatedAt: string };
    };
    expect(localnet.contracts.map((c) => c.name)).toEqual(["BetVault", "Groth16Verifier"]);
    expect(localnet.verificationKey).toMatchObject({ protocol: "groth16", curve: "bn128", nPublic: 4 });
    expect(localnet.verificationKey.json).toBe(readFileSync("zk/artifacts/verification_key.json", "utf8"));
    const { createHash } = await import("node:crypto");
    expect(localnet.verificationKey.sha256).toBe(`0x${createHash("sha256").update(localnet.verificationKey.json).digest("hex")}`);
    expect(localnet.indexing.isReady).toBe(true);
    expect(new Date(localnet.indexing.updatedAt).toISOString()).toBe(localnet.indexing.updatedAt);
  });

  it("filters by chainId and rejects an unknown one", async () => {
    const one = await t.gql<{ networkConfigs: { name: string }[] }>(`{ networkConfigs(chainId: 31337) { name } }`);
    expect(one.data!.networkConfigs).toEqual([{ name: "localnet" }]);
    const unknown = await t.gql(`{ networkConfigs(chainId: 5) { name } }`);
    expect(unknown.errors![0]!.extensions!.code).toBe("BAD_USER_INPUT");
    expect(unknown.errors![0]!.message).toMatch(/Unknown chainId 5/);
  });
});

describe("betResult / betResults", () => {
  it("returns a settled bet with a proof snarkjs accepts under the served key, and snarkjs's own calldata", async () => {
    const sample = t.fixtures.sampleSettled!;
    const { data, errors } = await t.gql<{
      betResult: { status: string; result: { proof: Record<string, unknown> } };
      networkConfigs: { verificationKey: { json: string } }[];
    }>(
      `query ($chainId: ChainId!, $betId: UInt256!) {
        betResult(chainId: $chainId, betId: $betId) { ${BET_FIELDS} }
        networkConfigs(chainId: $chainId) { verificationKey { json } } }`,
      { chainId: sample.chainId, betId: sample.betId },
    );
    expect(errors).toBeUndefined();
    expect(conventionViolations(data)).toEqual([]);
    expect(data!.betResult.status).toBe("SETTLED");
    const proof = data!.betResult.result.proof as {
      piA: string[];
      piB: string[][];
      piC: string[];
      publicSignals: string[];
      solidityCalldata: string;
      verified: boolean;
      protocol: string;
      curve: string;
    };
    expect(proof.verified).toBe(true);
    const vk = JSON.parse(data!.networkConfigs[0]!.verificationKey.json) as object;
    const snarkProof = { pi_a: proof.piA, pi_b: proof.piB, pi_c: proof.piC, protocol: proof.protocol, curve: proof.curve };
    expect(await snarkjs.groth16.verify(vk, proof.publicSignals, snarkProof)).toBe(true);
    expect(proof.solidityCalldata).toBe(await snarkjs.groth16.exportSolidityCallData(snarkProof, proof.publicSignals));
    expect(proof.publicSignals[2]).toBe(sample.betId);
    // The outcome served is exactly the proven public signal, all 254 bits of it.
    expect((data!.betResult.result as unknown as { outcome: string }).outcome).toBe(proof.publicSignals[0]);
  });

  it("serves 256-bit integers exactly, from every subgraph", async () => {
    const max = ((1n << 256n) - 1n).toString();
    const betId = (1n << 255n).toString();
    const existing = await t.db.prisma.bet.findFirstOrThrow({ where: { status: "SETTLED", chainId: 31337n }, include: { result: true } });
    const { result, ...bet } = existing;
    await t.db.prisma.bet.create({ data: { ...bet, betId, stake: max, placedLogIndex: 999 } });
    await t.db.prisma.betResult.create({
      data: { ...result!, betId, outcome: max, payout: max, proof: result!.proof as object },
    });
    const { data, errors } = await t.gql<{ betResult: { betId: string; stake: string; result: { outcome: string; payout: string } } }>(
      `{ betResult(chainId: 31337, betId: "${betId}") { betId stake result { outcome payout } } }`,
    );
    expect(errors).toBeUndefined();
    expect(data!.betResult).toEqual({ betId, stake: max, result: { outcome: max, payout: max } });
  });

  it("returns null for an unknown bet, and result null unless settled", async () => {
    const { data } = await t.gql<{ unknown: null; pending: { items: { status: string; result: unknown }[] } }>(`{
      unknown: betResult(chainId: 31337, betId: "99999999") { betId }
      pending: playerBets(wallet: "${t.fixtures.whale}", filter: { status: [PENDING, REFUNDED] }, first: 20) { items: nodes { status result { won } } } }`);
    expect(data!.unknown).toBeNull();
    expect(data!.pending.items.length).toBeGreaterThan(0);
    for (const bet of data!.pending.items) expect(bet.result).toBeNull();
  });

  it("keeps the order of betIds with null where unknown", async () => {
    const ids = ["3", "999999", "1", "2", "0", "1"];
    const { data, errors } = await t.gql<{ betResults: ({ betId: string; player: string } | null)[] }>(
      `query ($ids: [UInt256!]!) { betResults(chainId: 31337, betIds: $ids) { betId player } }`,
      { ids },
    );
    expect(errors).toBeUndefined();
    expect(data!.betResults.map((b) => b?.betId ?? null)).toEqual(["3", null, "1", "2", null, "1"]);
    expect(conventionViolations(data)).toEqual([]);
  });

  it("answers 100 ids and refuses 101", async () => {
    const hundred = Array.from({ length: 100 }, (_, i) => String(i + 1));
    const ok = await t.gql<{ betResults: unknown[] }>(`query ($ids: [UInt256!]!) { betResults(chainId: 31337, betIds: $ids) { betId result { won } } }`, {
      ids: hundred,
    });
    expect(ok.errors).toBeUndefined();
    expect(ok.data!.betResults).toHaveLength(100);
    const tooMany = await t.gql(`query ($ids: [UInt256!]!) { betResults(chainId: 31337, betIds: $ids) { betId } }`, { ids: [...hundred, "101"] });
    expect(tooMany.errors![0]!.extensions).toMatchObject({ code: "BAD_USER_INPUT", argumentName: "betIds" });
  });
});

describe("playerBets and pendingBetCount", () => {
  it("serves a wallet's bets newest first with every field in the contract's conventions", async () => {
    const { data, errors } = await t.gql<{
      playerBets: {
        totalCount: number;
        nodes: { placedBlock: string; player: string }[];
        edges: { cursor: string }[];
        pageInfo: { hasNextPage: boolean; endCursor: string };
      };
    }>(
      `query ($w: Address!) { playerBets(wallet: $w, first: 10) { totalCount pageInfo { hasNextPage endCursor } edges { cursor } nodes { ${BET_FIELDS} } } }`,
      { w: t.fixtures.whale.toUpperCase().replace("0X", "0x") },
    );
    expect(errors).toBeUndefined();
    expect(conventionViolations(data)).toEqual([]);
    const page = data!.playerBets;
    expect(page.nodes).toHaveLength(10);
    expect(page.nodes.every((b) => b.player === t.fixtures.whale)).toBe(true);
    const blocks = page.nodes.map((b) => BigInt(b.placedBlock));
    expect([...blocks].sort((a, b) => (a < b ? 1 : a > b ? -1 : 0))).toEqual(blocks);
    expect(page.pageInfo.endCursor).toBe(page.edges.at(-1)!.cursor);
    expect(page.totalCount).toBe(await t.db.prisma.bet.count({ where: { player: t.fixtures.whale } }));
  });

  it("counts pending bets per wallet and per chain", async () => {
    const wallet = t.fixtures.whale;
    const expectedAll = await t.db.prisma.bet.count({ where: { player: wallet, status: "PENDING" } });
    const expectedLocal = await t.db.prisma.bet.count({ where: { player: wallet, status: "PENDING", chainId: 31337n } });
    const { data } = await t.gql<{ all: number; local: number; nobody: number }>(`{
      all: pendingBetCount(wallet: "${wallet}")
      local: pendingBetCount(wallet: "${wallet}", chainId: 31337)
      nobody: pendingBetCount(wallet: "0x000000000000000000000000000000000000dead") }`);
    expect(expectedAll).toBeGreaterThan(0);
    expect(data).toEqual({ all: expectedAll, local: expectedLocal, nobody: 0 });
  });
});

describe("schema never offers the server seed", () => {
  it("has no seed-like field other than clientSeed and serverSeedHash", async () => {
    const { data } = await t.gql<{ __schema: { types: { name: string; fields: { name: string }[] | null }[] } }>(
      `{ __schema { types { name fields { name } } } }`,
    );
    const seedFields = data!.__schema.types.flatMap((type) => (type.fields ?? []).map((f) => `${type.name}.${f.name}`)).filter((f) => /seed/i.test(f));
    expect(seedFields.sort()).toEqual(["Bet.clientSeed", "Bet.serverSeedHash"]);
  });

  it("has no seed column in the database beyond the client seed and the commitment", async () => {
    const columns = await t.db.prisma.$queryRaw<{ table_name: string; column_name: string }[]>`
      SELECT table_name, column_name FROM information_schema.columns WHERE column_name ILIKE '%seed%' AND table_schema = current_schema()`;
    expect(columns.map((c) => c.column_name).sort()).toEqual(["clientSeed", "serverSeedHash"]);
  });
});
