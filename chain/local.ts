/**
 * A local chain with the BetVault system on it: anvil on 127.0.0.1, then Groth16Verifier (or the
 * verifier `verifier` deploys) and BetVault, with DEV keys. `npm start`'s demo chain, the tests'
 * chain harness (test/chain.ts) and the indexer benchmark all start their chain here; anvil is
 * stopped again when the deployment fails.
 */
import type { Address } from "viem";
import { startAnvil, type AnvilInstance, type AnvilOptions } from "./anvil.ts";
import { deployBetSystem, type BetSystem, type DeployOptions } from "./deploy.ts";

export interface LocalChainOptions {
  anvil?: AnvilOptions;
  deploy?: Omit<DeployOptions, "rpcUrl" | "chainId" | "verifier">;
  /** Deploys the verifier BetVault is built against (e.g. a permissive test verifier); default Groth16Verifier. */
  verifier?: (rpcUrl: string) => Promise<Address>;
}

export interface LocalChain {
  anvil: AnvilInstance;
  system: BetSystem;
  /** Stops anvil (idempotent). */
  stop(): Promise<void>;
}

export async function startLocalChain(options: LocalChainOptions = {}): Promise<LocalChain> {
  const anvil = await startAnvil(options.anvil);
  try {
    const verifier = options.verifier ? await options.verifier(anvil.rpcUrl) : undefined;
    const system = await deployBetSystem({ ...options.deploy, rpcUrl: anvil.rpcUrl, chainId: anvil.chainId, ...(verifier ? { verifier } : {}) });
    return { anvil, system, stop: () => anvil.stop() };
  } catch (error) {
    await anvil.stop();
    throw error;
  }
}
