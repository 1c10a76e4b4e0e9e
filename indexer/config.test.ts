import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_VERIFICATION_KEY_PATH, DEFAULTS, defineNetwork, loadIndexerEnv, loadNetworksConfig, parseNetworksConfig } from "./config.ts";
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
      verificationKeyPath: DEFAULT_VERIFICATION_KEY_PATH,
      batchSize: DEFAULTS.batchSize,
      pollingIntervalMs: DEFAULTS.pollingIntervalMs,
      resetOnChainMismatch: false,
    });
  });

  it("applies file-level defaults and resolves a relative key path against the file's directory", () => {
    const [n] = parseNetworksConfig({ batchSize: 50, pollingIntervalMs: 200, networks: [{ ...network, verificationKeyPath: "keys/vk.json", rpc: { http: "http://127.0.0.1:8545" } }] }, dir);
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
    const n = defineNetwork({ ...network, contracts: { BetVault: { address: network.contracts.Groth16Verifier.address, deployBlock: 7n }, Groth16Verifier: { address: network.contracts.Groth16Verifier.address, deployBlock: 7n } } });
    expect(n.contracts.BetVault.deployBlock).toBe(7n);
    expect(() => defineNetwork({ ...network, confirmations: -1 })).toThrow(IndexerConfigError);
  });
});

describe("loadNetworksConfig / loadIndexerEnv", () => {
  it("reads a file, and names a missing or malformed one", () => {
    const file = join(dir, "networks.json");
    writeFileSync(file, JSON.stringify({ networks: [network] }));
    expect(loadNetworksConfig(file)).toHaveLength(1);
    expect(() => loadNetworksConfig(join(dir, "missing.json"))).toThrow(/cannot read/);
    writeFileSync(file, "{ nope");
    expect(() => loadNetworksConfig(file)).toThrow(/not JSON/);
  });

  it("requires NETWORKS_CONFIG and a postgres DATABASE_URL when set", () => {
    expect(loadIndexerEnv({ NETWORKS_CONFIG: "n.json" })).toEqual({
      NETWORKS_CONFIG: "n.json",
      LOG_LEVEL: "info",
      DATA_DIR: "./.data",
      DATABASE_URL: undefined,
      HOST: "127.0.0.1",
      METRICS_PORT: undefined,
    });
    expect(loadIndexerEnv({ NETWORKS_CONFIG: "n.json", DATABASE_URL: "" }).DATABASE_URL).toBeUndefined();
    expect(() => loadIndexerEnv({})).toThrow(/NETWORKS_CONFIG/);
    expect(() => loadIndexerEnv({ NETWORKS_CONFIG: "n.json", DATABASE_URL: "mysql://x" })).toThrow(/postgres/);
    expect(() => loadIndexerEnv({ NETWORKS_CONFIG: "n.json", LOG_LEVEL: "loud" })).toThrow(/LOG_LEVEL/);
    expect(loadIndexerEnv({ NETWORKS_CONFIG: "n.json", METRICS_PORT: "" }).METRICS_PORT).toBeUndefined();
    expect(loadIndexerEnv({ NETWORKS_CONFIG: "n.json", METRICS_PORT: "9464" }).METRICS_PORT).toBe(9464);
    expect(() => loadIndexerEnv({ NETWORKS_CONFIG: "n.json", METRICS_PORT: "metrics" })).toThrow(/METRICS_PORT/);
    expect(() => loadIndexerEnv({ NETWORKS_CONFIG: "n.json", METRICS_PORT: "70000" })).toThrow(/METRICS_PORT/);
  });
});
