import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Address } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../core/logger.ts";
import { startTestChain, type TestChain } from "../test/chain.ts";
import { deployBetSystem } from "../chain/deploy.ts";
import { deployPermissiveVerifier } from "../test/contracts.ts";
import { DEFAULT_VERIFICATION_KEY_PATH, type NetworkConfig } from "./config.ts";
import { IndexerConfigError } from "./errors.ts";
import { loadVerificationKey } from "./proofs.ts";
import { createChainRpc } from "./rpc.ts";
import { checkVerifierKey, verificationKeyWords } from "./verifier-key.ts";

// The configured verification key must be the one the deployed Groth16Verifier holds: the
// snarkjs verifier template compiles every key coordinate into its bytecode as a 32-byte constant.

let chain: TestChain;
let permissive: Address;
const dir = mkdtempSync(join(tmpdir(), "verifier-key-"));
const warnings: Record<string, unknown>[] = [];
const logger = createLogger({ level: "warn", destination: { write: (line: string) => void warnings.push(JSON.parse(line) as Record<string, unknown>) } });

beforeAll(async () => {
  chain = await startTestChain({ chainId: 8453 });
  await chain.test.setAutomine(true);
  permissive = await deployPermissiveVerifier({ rpcUrl: chain.anvil.rpcUrl });
}, 120_000);
afterAll(async () => {
  await chain?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function check(network: NetworkConfig, keyPath = DEFAULT_VERIFICATION_KEY_PATH) {
  const rpc = createChainRpc({ http: network.rpc.http, address: network.contracts.BetVault.address, chainId: network.chainId, logger, attempts: 1 });
  return checkVerifierKey({ network, rpc, key: loadVerificationKey(keyPath), logger });
}

function withVerifier(network: NetworkConfig, address: Address): NetworkConfig {
  return { ...network, contracts: { ...network.contracts, Groth16Verifier: { ...network.contracts.Groth16Verifier, address } } };
}

describe("checkVerifierKey", () => {
  it("accepts the key the deployed verifier was generated from", async () => {
    await expect(check(chain.network({ verificationKeyPath: DEFAULT_VERIFICATION_KEY_PATH }))).resolves.toBeUndefined();
  });

  it("refuses, naming the verifier and the key, a verifier that holds another key (chain 8453)", async () => {
    const network = withVerifier(chain.network({ verificationKeyPath: DEFAULT_VERIFICATION_KEY_PATH }), permissive);
    await expect(check(network)).rejects.toThrow(IndexerConfigError);
    await expect(check(network)).rejects.toThrow(new RegExp(`Groth16Verifier ${permissive}.*verificationKeyPath`));
  });

  it("refuses a key that differs from the verifier's in one coordinate", async () => {
    const key = JSON.parse(readFileSync(DEFAULT_VERIFICATION_KEY_PATH, "utf8")) as { IC: string[][] };
    const ic = key.IC[key.IC.length - 1] as string[];
    ic[1] = (BigInt(ic[1] as string) + 1n).toString();
    const other = join(dir, "other.json");
    writeFileSync(other, JSON.stringify(key));
    await expect(check(chain.network({ verificationKeyPath: other }), other)).rejects.toThrow(/1 of 24 constants/);
  });

  // The same 24 numbers in other places: an order-blind check (each constant somewhere in the
  // bytecode) passes these, yet snarkjs and the served key would judge every proof differently.
  const reordered = (name: string, change: (key: { vk_gamma_2: string[][]; vk_delta_2: string[][]; IC: string[][] }) => void) => {
    const key = JSON.parse(readFileSync(DEFAULT_VERIFICATION_KEY_PATH, "utf8")) as { vk_gamma_2: string[][]; vk_delta_2: string[][]; IC: string[][] };
    change(key);
    const path = join(dir, `${name}.json`);
    writeFileSync(path, JSON.stringify(key));
    return path;
  };

  it("refuses a key with γ and δ swapped, naming the constants out of place", async () => {
    const path = reordered("gamma-delta", (key) => ([key.vk_gamma_2, key.vk_delta_2] = [key.vk_delta_2, key.vk_gamma_2]));
    await expect(check(chain.network({ verificationKeyPath: path }), path)).rejects.toThrow(IndexerConfigError);
    await expect(check(chain.network({ verificationKeyPath: path }), path)).rejects.toThrow(
      /in another order \(8 of 24 constants out of place: gamma\.x1, gamma\.x2, gamma\.y1, gamma\.y2, delta\.x1, delta\.x2, delta\.y1, delta\.y2\)/,
    );
  });

  it("refuses a key with two IC points permuted", async () => {
    const path = reordered("ic", (key) => ([key.IC[1], key.IC[3]] = [key.IC[3] as string[], key.IC[1] as string[]]));
    await expect(check(chain.network({ verificationKeyPath: path }), path)).rejects.toThrow(/4 of 24 constants out of place: IC1\.x, IC1\.y, IC3\.x, IC3\.y/);
  });

  it("refuses a key with one IC point's x and y swapped", async () => {
    const path = reordered("ic-xy", (key) => {
      const ic = key.IC[2] as string[];
      [ic[0], ic[1]] = [ic[1] as string, ic[0] as string];
    });
    await expect(check(chain.network({ verificationKeyPath: path }), path)).rejects.toThrow(/2 of 24 constants out of place: IC2\.x, IC2\.y/);
  });

  it("refuses a key with a G2 point's coordinates in the other convention (c0 and c1 of x swapped)", async () => {
    const path = reordered("g2-convention", (key) => {
      const x = key.vk_delta_2[0] as string[];
      [x[0], x[1]] = [x[1] as string, x[0] as string];
    });
    await expect(check(chain.network({ verificationKeyPath: path }), path)).rejects.toThrow(/2 of 24 constants out of place: delta\.x1, delta\.x2/);
  });

  it("refuses a verifier that holds the key but is not the one BetVault calls (chain 8453)", async () => {
    // A second, genuine verifier with the same key: its bytecode passes, yet BetVault judges
    // settlements with its own verifier, so the configured address proves nothing about the chain.
    const other = await deployBetSystem({ rpcUrl: chain.anvil.rpcUrl });
    const network = withVerifier(chain.network({ verificationKeyPath: DEFAULT_VERIFICATION_KEY_PATH }), other.verifier);
    await expect(check(network)).rejects.toThrow(IndexerConfigError);
    await expect(check(network)).rejects.toThrow(
      new RegExp(`BetVault .* calls the verifier 0x[0-9a-fA-F]{40}, not the configured Groth16Verifier ${other.verifier}`),
    );
  });

  it("counts a key constant only as a whole PUSH32 operand, not as hex that happens to contain it", async () => {
    const { key } = loadVerificationKey(DEFAULT_VERIFICATION_KEY_PATH);
    const network = chain.network({ verificationKeyPath: DEFAULT_VERIFICATION_KEY_PATH });
    const verifier = network.contracts.Groth16Verifier.address;
    const rpc = (code: string) => ({ code: async () => code as `0x${string}`, betVaultVerifier: async () => verifier });
    const run = (code: string) => checkVerifierKey({ network, rpc: rpc(code), key: loadVerificationKey(DEFAULT_VERIFICATION_KEY_PATH), logger });
    const words = verificationKeyWords(key).map((c) => c.word);
    // Every word as a PUSH32 (0x7f) operand: the template's shape.
    await expect(run(`0x${words.map((w) => `7f${w}`).join("50")}`)).resolves.toBeUndefined();
    // The same digits half a byte off (inside other operands): not a constant of this contract.
    await expect(run(`0x0${words.map((w) => `7f${w}`).join("50")}0`)).rejects.toThrow(/24 of 24 constants/);
    // The words without their PUSH32 opcode.
    await expect(run(`0x${words.join("00")}`)).rejects.toThrow(/24 of 24 constants/);
    // Inside another PUSH's data (a PUSH1 0x7f's operand is not an opcode): not pushed by this code.
    await expect(run(`0x${words.map((w) => `607f${w}`).join("50")}`)).rejects.toThrow(/24 of 24 constants/);
  });

  it("refuses an address without code", async () => {
    const network = withVerifier(chain.network({ verificationKeyPath: DEFAULT_VERIFICATION_KEY_PATH }), "0x000000000000000000000000000000000000dead");
    await expect(check(network)).rejects.toThrow(/no contract code/);
  });

  it("on a local development chain only warns (test verifiers accept any proof)", async () => {
    warnings.length = 0;
    const network = { ...withVerifier(chain.network({ verificationKeyPath: DEFAULT_VERIFICATION_KEY_PATH }), permissive), chainId: 31337 };
    await expect(check(network)).resolves.toBeUndefined();
    expect(warnings.some((line) => line.level === 40 && String(line.msg).includes("verification key"))).toBe(true);
  });

  it("lists every coordinate of the key once: alpha, beta, gamma, delta, IC", () => {
    const { key } = loadVerificationKey(DEFAULT_VERIFICATION_KEY_PATH);
    const words = verificationKeyWords(key);
    expect(words).toHaveLength(2 + 3 * 4 + 2 * key.IC.length);
    expect(new Set(words.map((c) => c.word)).size).toBe(words.length);
    expect(words.every((c) => /^[0-9a-f]{64}$/.test(c.word))).toBe(true);
  });
});
