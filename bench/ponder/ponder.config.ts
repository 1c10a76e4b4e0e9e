// The Ponder peer of issue 24 (bench/ponder.ts starts it): BetVault on the benchmark's local anvil,
// indexed over a fixed block range into PostgreSQL. Everything comes from the environment the
// benchmark sets for this child; nothing here is read by the project itself.
import { createConfig } from "ponder";
import { http } from "viem";
import { betVaultAbi } from "../../chain/generated/artifacts.ts";

const required = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`bench/ponder: ${name} is not set (bench/ponder.ts sets it)`);
  return value;
};

export default createConfig({
  database: { kind: "postgres", connectionString: required("DATABASE_URL") },
  networks: {
    anvil: {
      chainId: Number(required("PONDER_CHAIN_ID")),
      transport: http(required("PONDER_RPC_URL")),
      // A local node: no public-endpoint rate limit (Ponder's default is 50 requests/s) and no
      // RPC cache carried between runs (each run gets a fresh database anyway).
      maxRequestsPerSecond: 100_000,
      disableCache: true,
    },
  },
  contracts: {
    BetVault: {
      network: "anvil",
      abi: betVaultAbi,
      address: required("PONDER_BETVAULT") as `0x${string}`,
      startBlock: Number(required("PONDER_START_BLOCK")),
      endBlock: Number(required("PONDER_END_BLOCK")),
    },
  },
});
