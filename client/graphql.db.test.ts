// The typed GraphQL client against the real gateway (fixture set with real Groth16 proofs), and the
// client-side proof check with snarkjs, as a wallet or explorer would run them.
import * as snarkjs from "snarkjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestStack, type TestStack } from "../test/stack.ts";
import { releaseProverResources } from "../zk/groth16.ts";
import { createGraphQLClient, GraphQLRequestError, type GraphQLClient } from "./graphql.ts";
import { betsQuery, betWithProofQuery, networksQuery, playerBetsQuery, verificationKeyQuery } from "./operations.ts";
import { verifyBetProof, type VerifiableBet } from "./proof.ts";

let t: TestStack;
let client: GraphQLClient;

beforeAll(async () => {
  t = await startTestStack({ bets: 40 });
  client = createGraphQLClient({ url: `${t.url}/graphql` });
});
afterAll(async () => {
  await t?.close();
  await releaseProverResources();
});

async function settledBet(): Promise<{ bet: VerifiableBet & { chainId: number }; keyJson: string }> {
  const sample = t.fixtures.sampleSettled!;
  const { betResult } = await client.request(betWithProofQuery, { chainId: sample.chainId, betId: sample.betId });
  const { networkConfigs } = await client.request(verificationKeyQuery, { chainId: sample.chainId });
  return { bet: betResult!, keyJson: networkConfigs[0]!.verificationKey.json };
}

describe("typed GraphQL client", () => {
  it("runs the generated operations, typed, over POST and GET", async () => {
    const { networkConfigs } = await client.request(networksQuery);
    expect(networkConfigs.map((n) => n.chainId).sort()).toEqual(t.fixtures.networks.map((n) => n.chainId).sort());

    const page = await client.request(playerBetsQuery, { wallet: t.fixtures.whale, first: 3 });
    expect(page.playerBets.nodes).toHaveLength(3);
    expect(page.playerBets.nodes.every((bet) => bet.player === t.fixtures.whale.toLowerCase())).toBe(true);
    const next = await client.request(playerBetsQuery, { wallet: t.fixtures.whale, first: 3, after: page.playerBets.pageInfo.endCursor });
    expect(next.playerBets.nodes[0]!.betId).not.toBe(page.playerBets.nodes[0]!.betId);

    const sample = t.fixtures.sampleSettled!;
    const viaGet = createGraphQLClient({ url: `${t.url}/graphql`, method: "GET" });
    const { betResults } = await viaGet.request(betsQuery, { chainId: sample.chainId, betIds: [sample.betId, "999999999"] });
    expect(betResults.map((bet) => bet?.betId ?? null)).toEqual([sample.betId, null]);
    expect(betResults[0]!.status).toBe("SETTLED");
  });

  it("raises GraphQLRequestError with the API's code, and on transport failures", async () => {
    const error = await client.request(playerBetsQuery, { wallet: "0xnot-an-address" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GraphQLRequestError);
    expect((error as GraphQLRequestError).code).toBe("BAD_USER_INPUT");
    expect((error as GraphQLRequestError).status).toBe(200);

    const nowhere = createGraphQLClient({ url: "http://127.0.0.1:9/graphql", timeoutMs: 2_000 });
    const failed = await nowhere.request(networksQuery).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(GraphQLRequestError);
    expect((failed as GraphQLRequestError).status).toBe(0);
  });
});

describe("verifyBetProof (client side, snarkjs)", () => {
  it("accepts the served proof of a settled bet against the served verification key", async () => {
    const { bet, keyJson } = await settledBet();
    expect(await verifyBetProof(bet, keyJson, snarkjs.groth16)).toEqual({ verified: true });
  });

  it("rejects a tampered proof, whatever the service's `verified` flag says", async () => {
    const { bet, keyJson } = await settledBet();
    const result = bet.result!;
    // The outcome changed in the bet and in the signals alike: only the pairing check can catch it.
    const outcome = String(BigInt(result.outcome) + 1n);
    const tampered = { ...bet, result: { ...result, outcome, proof: { ...result.proof, publicSignals: [outcome, ...result.proof.publicSignals.slice(1)] } } };
    expect(await verifyBetProof(tampered, keyJson, snarkjs.groth16)).toEqual({ verified: false, reason: "rejected by groth16.verify" });
  });

  it("rejects a valid proof that belongs to another bet (signals bound to the bet's own fields)", async () => {
    const { bet, keyJson } = await settledBet();
    const other = { ...bet, betId: String(BigInt(bet.betId) + 1n) };
    expect(await verifyBetProof(other, keyJson, snarkjs.groth16)).toEqual({ verified: false, reason: "signals do not match the bet" });
    const otherSeed = { ...bet, clientSeed: `0x${"11".repeat(32)}` };
    expect(await verifyBetProof(otherSeed, keyJson, snarkjs.groth16)).toEqual({ verified: false, reason: "signals do not match the bet" });
  });

  it("refuses malformed input and unsettled bets without calling snarkjs", async () => {
    const { bet, keyJson } = await settledBet();
    const never = { verify: () => Promise.reject(new Error("must not be called")) };
    const short = { ...bet, result: { ...bet.result!, proof: { ...bet.result!.proof, publicSignals: bet.result!.proof.publicSignals.slice(0, 3) } } };
    expect(await verifyBetProof(short, keyJson, never)).toEqual({ verified: false, reason: "malformed" });
    expect(await verifyBetProof(bet, "{not json", never)).toEqual({ verified: false, reason: "malformed" });
    expect(await verifyBetProof({ ...bet, result: null }, keyJson, never)).toEqual({ verified: false, reason: "not settled" });
  });
});
