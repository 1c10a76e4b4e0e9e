import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_VERIFICATION_KEY_PATH, DEFAULTS, defineNetwork, loadNetworksConfig, parseNetworksConfig } from "./config.ts";
import { IndexerConfigError } from "./errors.ts";

const dir = mkdtempSync(join(tmpdir(), "indexer-config-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const network = {
  chainId: 8453,
  name: "base",
  rpc: { http: "https://rpc.example.org", ws: "wss://rpc.example.org" },
  contracts: {
    BetVault: { address: "0x5FbDB2315678afecb367f032d93F642f64180aa3", deployBlock: "12345678" },
    Groth16Verifier: { address: "0xe7f1725e7734ce288f8367e1bb143e90bb3f0512", deployBlock: 12345670 },
  },
  confirmations: 10,
  verificationKeyPath: "keys/base.json",
};

describe("parseNetworksConfig", () => {
  it("resolves a network with defaults, lowercase addresses and bigint deploy blocks", () => {
    const [n] = parseNetworksConfig({ networks: [network] }, dir);
    expect(n).toEqual({
      chainId: 8453,
      name: "base",
      rpc: { http: "https://rpc.example.org", ws: "wss://rpc.example.org" },
      contracts: {
        BetVault: { address: "0x5fbdb2315678afecb367f032d93f642f64180aa3", deployBlock: 12345678n },
        Groth16Verifier: { address: "0xe7f1725e7734ce288f8367e1bb143e90bb3f0512", deployBlock: 12345670n },
      },
      confirmations: 10,
      verificationKeyPath: join(dir, "keys/base.json"),
      batchSize: DEFAULTS.batchSize,
      pollingIntervalMs: DEFAULTS.pollingIntervalMs,
      resetOnChainMismatch: false,
      nativeCurrency: { symbol: "ETH", decimals: 18 },
    });
  });

  it("applies file-level defaults and resolves a relative key path against the file's directory", () => {
    const [n] = parseNetworksConfig(
      { batchSize: 50, pollingIntervalMs: 200, networks: [{ ...network, verificationKeyPath: "keys/vk.json", rpc: { http: "http://127.0.0.1:8545" } }] },
      dir,
    );
    expect(n).toMatchObject({ batchSize: 50, pollingIntervalMs: 200, verificationKeyPath: join(dir, "keys/vk.json"), rpc: { http: "http://127.0.0.1:8545" } });
    expect(n?.rpc.ws).toBeUndefined();
  });

  it("lists every problem at once", () => {
    const bad = {
      networks: [
        { ...network, contracts: { ...network.contracts, BetVault: { address: "0x5FBDB2315678afecb367f032d93F642f64180aa3", deployBlock: "-1" } } },
        { ...network, name: "Base Mainnet", rpc: { http: "ws://x.org" }, extra: true },
      ],
    };
    try {
      parseNetworksConfig(bad);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(IndexerConfigError);
      const text = (error as Error).message;
      expect(text).toMatch(/networks\.0\.contracts\.BetVault\.address: .*EIP-55/);
      expect(text).toMatch(/networks\.0\.contracts\.BetVault\.deployBlock/);
      expect(text).toMatch(/networks\.1\.name/);
      expect(text).toMatch(/networks\.1\.rpc\.http/);
      expect(text).toMatch(/networks\.1.*extra|Unrecognized key/);
    }
  });

  it("refuses two networks with the same chain id or name", () => {
    expect(() => parseNetworksConfig({ networks: [network, { ...network, name: "base2" }] })).toThrow(/duplicate chainId 8453/);
    expect(() => parseNetworksConfig({ networks: [network, { ...network, chainId: 1 }] })).toThrow(/duplicate name base/);
  });

  it("defineNetwork validates one network built in code (bigint deploy blocks allowed)", () => {
    const n = defineNetwork({
      ...network,
      contracts: {
        BetVault: { address: network.contracts.Groth16Verifier.address, deployBlock: 7n },
        Groth16Verifier: { address: network.contracts.Groth16Verifier.address, deployBlock: 7n },
      },
    });
    expect(n.contracts.BetVault.deployBlock).toBe(7n);
    expect(() => defineNetwork({ ...network, confirmations: -1 })).toThrow(IndexerConfigError);
  });
});

describe("loadNetworksConfig", () => {
  it("reads a file, and names a missing or malformed one", () => {
    const file = join(dir, "networks.json");
    writeFileSync(file, JSON.stringify({ networks: [network] }));
    expect(loadNetworksConfig(file)).toHaveLength(1);
    expect(() => loadNetworksConfig(join(dir, "missing.json"))).toThrow(/cannot read/);
    writeFileSync(file, "{ nope");
    expect(() => loadNetworksConfig(file)).toThrow(/not JSON/);
  });
});

describe("verification keys (the DEV key is for local chains only)", () => {
  const { verificationKeyPath: _key, ...keyless } = network;

  it("refuses a network other than 31337/1337 without verificationKeyPath, naming it", () => {
    expect(() => parseNetworksConfig({ networks: [keyless] }, dir)).toThrow(IndexerConfigError);
    expect(() => parseNetworksConfig({ networks: [keyless] }, dir)).toThrow(/networks\.0\.verificationKeyPath: .*base.*8453/);
  });

  it("uses the committed DEV key for a local development chain without one", () => {
    for (const chainId of [31337, 1337]) {
      const [n] = parseNetworksConfig({ networks: [{ ...keyless, chainId }] }, dir);
      expect(n?.verificationKeyPath).toBe(DEFAULT_VERIFICATION_KEY_PATH);
    }
  });
});

describe("fallback RPC URLs", () => {
  it("accepts rpc.fallback: more http(s) URLs of the same chain, in order", () => {
    const [n] = parseNetworksConfig(
      { networks: [{ ...network, rpc: { http: "https://a.example", fallback: ["https://b.example", "http://127.0.0.1:8545"] } }] },
      dir,
    );
    expect(n?.rpc).toEqual({ http: "https://a.example", fallback: ["https://b.example", "http://127.0.0.1:8545"] });
    expect(() => parseNetworksConfig({ networks: [{ ...network, rpc: { http: "https://a.example", fallback: ["wss://b.example"] } }] }, dir)).toThrow(
      /networks\.0\.rpc\.fallback\.0/,
    );
  });
});

describe("nativeCurrency (Bet.tokenInfo of bets in the native coin)", () => {
  it("takes the network's symbol and decimals, and ETH / 18 when it names none", () => {
    const [custom, plain] = parseNetworksConfig(
      {
        networks: [
          { ...network, nativeCurrency: { symbol: "POL", decimals: 18 } },
          { ...network, chainId: 31337, name: "localnet" },
        ],
      },
      dir,
    );
    expect(custom?.nativeCurrency).toEqual({ symbol: "POL", decimals: 18 });
    expect(plain?.nativeCurrency).toEqual({ symbol: "ETH", decimals: 18 });
  });

  it("refuses an empty symbol, decimals outside a uint8 and unknown keys", () => {
    for (const nativeCurrency of [
      { symbol: "", decimals: 18 },
      { symbol: "X", decimals: 256 },
      { symbol: "X", decimals: 1.5 },
      { symbol: "X", decimals: 2, name: "x" },
    ]) {
      expect(() => parseNetworksConfig({ networks: [{ ...network, nativeCurrency }] }, dir)).toThrow(/networks\.0\.nativeCurrency/);
    }
  });
});
