/**
 * The networks file (JSON, path from NETWORKS_CONFIG), parsed and validated once: the networks the
 * indexer follows. Every default is written here and in indexer/README.md. (The environment is
 * core/config.ts's.)
 */
import { readFileSync } from "node:fs";
import { dirname, isAbsolute, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { isAddress, type Address } from "viem";
import { z } from "zod";
import type { BetSystem } from "../chain/deploy.ts";
import { IndexerConfigError } from "./errors.ts";

/**
 * The committed DEV verification key (zk/artifacts/verification_key.json). Its setup secret is
 * public, so it is the default only for local development chains (DEV_CHAIN_IDS); every other
 * network must name its own key.
 */
export const DEFAULT_VERIFICATION_KEY_PATH = fileURLToPath(new URL("../zk/artifacts/verification_key.json", import.meta.url));

/** Local development chains (anvil/hardhat 31337, ganache/geth --dev 1337): the only ones that may use the DEV key. */
export const DEV_CHAIN_IDS: ReadonlySet<number> = new Set([31337, 1337]);

export const DEFAULTS = {
  /** Blocks per eth_getLogs request while backfilling (halved automatically when a node refuses a range). */
  batchSize: 2_000,
  /** How often to ask for a new head when there is no WebSocket subscription (and as a safety net when there is). */
  pollingIntervalMs: 1_000,
  /** Wipe and re-index a network whose chain no longer contains the indexed history (a restarted dev chain). */
  resetOnChainMismatch: false,
  /** The native coin of a network that does not name its own (the coin of anvil, hardhat and geth --dev): set it on any chain whose coin is not ETH. */
  nativeCurrency: { symbol: "ETH", decimals: 18 },
} as const;

/** What the native coin (token address 0x0…0) is called and how many decimals its amounts have. */
export interface NativeCurrency {
  symbol: string;
  decimals: number;
}

export interface ContractConfig {
  address: Address;
  deployBlock: bigint;
}

/** One network, resolved: what createIndexer takes. */
export interface NetworkConfig {
  chainId: number;
  name: string;
  /** `http` first; `fallback`: more URLs of the same chain, tried in order when the one before fails. */
  rpc: { http: string; ws?: string; fallback?: string[] };
  contracts: { BetVault: ContractConfig; Groth16Verifier: ContractConfig };
  /** Depth at which a block is final: confirmations (head − block + 1) at least this (core/finality.ts); reorgs below it are fatal. */
  confirmations: number;
  /** Absolute path of the snarkjs verification key JSON of the network's verifier. */
  verificationKeyPath: string;
  batchSize: number;
  pollingIntervalMs: number;
  resetOnChainMismatch: boolean;
  /** The native coin, served as `Bet.tokenInfo` of bets in it; default ETH / 18. */
  nativeCurrency: NativeCurrency;
}

const blockNumber = z.union([
  z
    .number()
    .int()
    .min(0)
    .max(Number.MAX_SAFE_INTEGER)
    .transform((n) => BigInt(n)),
  z
    .string()
    .regex(/^(0|[1-9][0-9]*)$/, "a decimal string")
    .transform((s) => BigInt(s)),
  z.bigint().nonnegative(),
]);

const address = z
  .string()
  .refine((a) => isAddress(a, { strict: true }), "an address (mixed case must be a valid EIP-55 checksum)")
  .transform((a) => a.toLowerCase() as Address);

const rpcUrl = (protocols: RegExp, what: string) =>
  z
    .string()
    .url()
    .refine((u) => protocols.test(u), `a ${what} URL`);

const contract = z.object({ address, deployBlock: blockNumber }).strict();

const networkInput = z
  .object({
    chainId: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
    name: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, "lowercase letters, digits, - and _ (at most 64)"),
    rpc: z
      .object({
        http: rpcUrl(/^https?:\/\//, "http(s)://"),
        ws: rpcUrl(/^wss?:\/\//, "ws(s)://").optional(),
        fallback: z
          .array(rpcUrl(/^https?:\/\//, "http(s)://"))
          .max(10)
          .optional(),
      })
      .strict(),
    contracts: z.object({ BetVault: contract, Groth16Verifier: contract }).strict(),
    confirmations: z.number().int().min(0).max(100_000),
    verificationKeyPath: z.string().min(1).optional(),
    batchSize: z.number().int().min(1).max(1_000_000).optional(),
    pollingIntervalMs: z.number().int().min(10).max(600_000).optional(),
    resetOnChainMismatch: z.boolean().optional(),
    nativeCurrency: z
      .object({
        symbol: z.string().min(1).max(32),
        // ERC-20 decimals are a uint8; amounts are formatted exactly for any of them.
        decimals: z.number().int().min(0).max(255),
      })
      .strict()
      .optional(),
  })
  .strict();

const fileSchema = z
  .object({
    /** Defaults for every network of the file. */
    batchSize: z.number().int().min(1).max(1_000_000).optional(),
    pollingIntervalMs: z.number().int().min(10).max(600_000).optional(),
    networks: z.array(networkInput).min(1),
  })
  .strict()
  .superRefine((file, ctx) => {
    const seen = { chainId: new Set<number>(), name: new Set<string>() };
    file.networks.forEach((n, i) => {
      if (seen.chainId.has(n.chainId)) ctx.addIssue({ code: "custom", path: ["networks", i, "chainId"], message: `duplicate chainId ${n.chainId}` });
      if (seen.name.has(n.name)) ctx.addIssue({ code: "custom", path: ["networks", i, "name"], message: `duplicate name ${n.name}` });
      if (n.verificationKeyPath === undefined && !DEV_CHAIN_IDS.has(n.chainId)) {
        ctx.addIssue({
          code: "custom",
          path: ["networks", i, "verificationKeyPath"],
          message: `network ${n.name} (chain ${n.chainId}) needs the verification key of its Groth16Verifier: set verificationKeyPath (the committed DEV key, whose setup secret is public, serves only chains ${[...DEV_CHAIN_IDS].join(" and ")})`,
        });
      }
      seen.chainId.add(n.chainId);
      seen.name.add(n.name);
    });
  });

/** One network as written in the file (deployBlock may also be a bigint when built in code). */
export type NetworkInput = z.input<typeof networkInput>;
export type NetworksFileInput = z.input<typeof fileSchema>;

function problems(error: z.ZodError): string {
  return error.issues.map((issue) => `  ${issue.path.join(".") || "(root)"}: ${issue.message}`).join("\n");
}

function resolveNetwork(n: z.output<typeof networkInput>, defaults: { batchSize?: number; pollingIntervalMs?: number }, baseDir: string): NetworkConfig {
  const keyPath = n.verificationKeyPath;
  return {
    chainId: n.chainId,
    name: n.name,
    rpc: { http: n.rpc.http, ...(n.rpc.ws ? { ws: n.rpc.ws } : {}), ...(n.rpc.fallback?.length ? { fallback: n.rpc.fallback } : {}) },
    contracts: n.contracts,
    confirmations: n.confirmations,
    verificationKeyPath: keyPath ? (isAbsolute(keyPath) ? keyPath : resolve(baseDir, keyPath)) : DEFAULT_VERIFICATION_KEY_PATH,
    batchSize: n.batchSize ?? defaults.batchSize ?? DEFAULTS.batchSize,
    pollingIntervalMs: n.pollingIntervalMs ?? defaults.pollingIntervalMs ?? DEFAULTS.pollingIntervalMs,
    resetOnChainMismatch: n.resetOnChainMismatch ?? DEFAULTS.resetOnChainMismatch,
    nativeCurrency: n.nativeCurrency ?? { ...DEFAULTS.nativeCurrency },
  };
}

/**
 * Validates a parsed networks file. Relative `verificationKeyPath`s resolve against `baseDir`
 * (the file's directory); omitted, the committed DEV key is used on a local development chain and
 * any other network is refused.
 */
export function parseNetworksConfig(json: unknown, baseDir: string = process.cwd()): NetworkConfig[] {
  const parsed = fileSchema.safeParse(json);
  if (!parsed.success) throw new IndexerConfigError(`invalid networks configuration:\n${problems(parsed.error)}`);
  const { networks, ...defaults } = parsed.data;
  return networks.map((n) => resolveNetwork(n, defaults, baseDir));
}

/** Reads and validates the networks file at `path`. */
export function loadNetworksConfig(path: string): NetworkConfig[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new IndexerConfigError(`cannot read the networks configuration ${path}`, { cause: error });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new IndexerConfigError(`the networks configuration ${path} is not JSON`, { cause: error, details: String(error) });
  }
  return parseNetworksConfig(json, dirname(resolve(path)));
}

/** One network built in code (tests, the start script), with the same validation and defaults as the file. */
export function defineNetwork(input: NetworkInput, baseDir: string = process.cwd()): NetworkConfig {
  const [network] = parseNetworksConfig({ networks: [input] }, baseDir);
  if (!network) throw new IndexerConfigError("no network");
  return network;
}

/**
 * The network of a BetVault deployment made by chain/deploy.ts (npm start, tests, benchmarks):
 * its chain id, RPC URL, contracts and deploy block, plus what the caller chooses.
 */
export function networkFromDeployment(
  deployment: Pick<BetSystem, "chainId" | "rpcUrl" | "betVault" | "verifier" | "deployBlock">,
  options: { name: string; wsUrl?: string } & Partial<Omit<NetworkInput, "chainId" | "name" | "rpc" | "contracts">>,
): NetworkConfig {
  const { name, wsUrl, ...rest } = options;
  return defineNetwork({
    chainId: deployment.chainId,
    name,
    rpc: wsUrl ? { http: deployment.rpcUrl, ws: wsUrl } : { http: deployment.rpcUrl },
    contracts: {
      BetVault: { address: deployment.betVault, deployBlock: deployment.deployBlock },
      Groth16Verifier: { address: deployment.verifier, deployBlock: deployment.deployBlock },
    },
    ...rest,
    confirmations: rest.confirmations ?? 2,
  });
}
