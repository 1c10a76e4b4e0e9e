// The client does not take the service's word for the verification key: a service serving a forged
// key (and that key's own sha256, as a liar would) is refused by both trust paths — the key hash the
// user pinned, and the chain's verifier read through the user's RPC node — while the honest key
// passes both. The chain is anvil with BetVault on the real (DEV-key) Groth16 verifier.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { toFunctionSelector } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_VERIFICATION_KEY_PATH } from "../indexer/config.ts";
import { startTestChain, type TestChain } from "../test/chain.ts";
import { startTestStack, type TestStack } from "../test/stack.ts";
import { createGraphQLClient } from "./graphql.ts";
import { checkServedKey, VERIFIER_SELECTOR } from "./key-trust.ts";
import { verificationKeyQuery } from "./operations.ts";

const honestJson = readFileSync(DEFAULT_VERIFICATION_KEY_PATH, "utf8");
/** The pin a user copies from the operator's published key: computed here with Node's own SHA-256. */
const pinnedSha256 = createHash("sha256").update(honestJson).digest("hex");

let chain: TestChain;
let t: TestStack;

beforeAll(async () => {
  chain = await startTestChain();
  t = await startTestStack({ bets: 10 });
}, 120_000);
afterAll(async () => {
  await t?.close();
  await chain?.stop();
});

/** Makes the service serve `json` as chain 31337's key (with its own sha256). */
async function serve(json: string): Promise<string> {
  const sha = createHash("sha256").update(json).digest("hex");
  await t.db.prisma.network.update({ where: { chainId: 31337n }, data: { verificationKeyJson: json, verificationKeySha256: `0x${sha}` } });
  const client = createGraphQLClient({ url: `${t.url}/graphql` });
  const { networkConfigs } = await client.request(verificationKeyQuery, { chainId: 31337 });
  return networkConfigs[0]!.verificationKey.json;
}

function forged(change: (key: { vk_alpha_1: string[]; vk_gamma_2: string[][]; vk_delta_2: string[][] }) => void): string {
  const key = JSON.parse(honestJson) as { vk_alpha_1: string[]; vk_gamma_2: string[][]; vk_delta_2: string[][] };
  change(key);
  return JSON.stringify(key, null, 1);
}

describe("checkServedKey", () => {
  it("calls BetVault.verifier() by its selector", () => {
    expect(VERIFIER_SELECTOR).toBe(toFunctionSelector("verifier()"));
  });

  it("trusts the honest served key on both paths, naming the path", async () => {
    const served = await serve(honestJson);
    expect(await checkServedKey(served, { pinnedSha256 })).toEqual({ trusted: true, path: "pinned", sha256: pinnedSha256 });
    const onChain = await checkServedKey(served, { rpcUrl: chain.anvil.rpcUrl, betVault: chain.sys.betVault });
    expect(onChain).toEqual({ trusted: true, path: "chain", rpcUrl: chain.anvil.rpcUrl, verifier: chain.sys.verifier.toLowerCase() });
  });

  it("refuses a forged key on both paths (one constant changed)", async () => {
    const served = await serve(forged((key) => (key.vk_alpha_1[0] = (BigInt(key.vk_alpha_1[0] as string) + 1n).toString())));
    expect(await checkServedKey(served, { pinnedSha256 })).toMatchObject({
      trusted: false,
      path: "pinned",
      reason: expect.stringContaining("is not the pinned"),
    });
    expect(await checkServedKey(served, { rpcUrl: chain.anvil.rpcUrl, betVault: chain.sys.betVault })).toMatchObject({
      trusted: false,
      path: "chain",
      reason: expect.stringMatching(/does not hold the served key \(1 of 24 constants differ\)/),
    });
  });

  it("refuses, on chain, a key holding the right numbers in the wrong places (γ and δ swapped)", async () => {
    const served = await serve(forged((key) => ([key.vk_gamma_2, key.vk_delta_2] = [key.vk_delta_2, key.vk_gamma_2])));
    expect(await checkServedKey(served, { rpcUrl: chain.anvil.rpcUrl, betVault: chain.sys.betVault })).toMatchObject({
      trusted: false,
      path: "chain",
      reason: expect.stringMatching(/in another order \(gamma\.x1, .*delta\.y2\)/),
    });
    expect((await checkServedKey(served, { pinnedSha256 })).trusted).toBe(false);
  });

  it("says why when the chain cannot be asked", async () => {
    expect(await checkServedKey(honestJson, { rpcUrl: "http://127.0.0.1:9", betVault: chain.sys.betVault })).toMatchObject({
      trusted: false,
      path: "chain",
      reason: expect.stringMatching(/^could not check the key on chain: /),
    });
  });
});
