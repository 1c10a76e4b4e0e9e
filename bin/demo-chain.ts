import type { AnvilInstance } from "../chain/anvil.ts";
import { DEV_PLAYER_KEYS } from "../chain/devAccounts.ts";
import { startLocalChain } from "../chain/local.ts";
import { deployPermissiveVerifier } from "../chain/permissive-verifier.ts";
import { createSimulator, type Simulator } from "../chain/simulator.ts";
import type { Logger } from "../core/logger.ts";
import { defineNetwork, type NetworkConfig } from "../indexer/config.ts";

// The embedded default's chains: a local anvil (127.0.0.1, one block a second), the BetVault
// system deployed with the DEV Groth16 verifier, and the operator simulator placing, proving,
// settling and refunding bets. The server seeds live only inside the simulator.
//
// `permissive`: the second demo chain (1337, "devnet"), whose BetVault is built against a verifier
// that accepts every proof (a buggy or compromised verifier contract) and whose simulator sends
// some settlements with a bad proof: they settle on chain, and the service, checking every proof
// itself, shows them as `verified: false` everywhere (GraphQL, Socket.IO, CSV, the live page).

export interface DemoChain {
  network: NetworkConfig;
  anvil: AnvilInstance;
  simulator: Simulator;
  stop(): Promise<void>;
}

export interface DemoChainOptions {
  logger: Logger;
  blockTimeSeconds?: number;
  settleTimeoutSeconds?: number;
  /** The permissive chain (1337) instead of the honest one (31337). */
  permissive?: boolean;
}

export async function startDemoChain(options: DemoChainOptions): Promise<DemoChain> {
  const { permissive = false } = options;
  // Short deadlines so a new user sees refunds within a minute.
  const { anvil, system } = await startLocalChain({
    // Out of the terminal's process group: Ctrl-C must not end the chain before the simulator and
    // the indexer using it have stopped (a receipt awaited from a dead chain waits minutes).
    anvil: { blockTime: options.blockTimeSeconds ?? 1, ownProcessGroup: true, ...(permissive ? { chainId: 1337 } : {}) },
    deploy: { settleTimeoutSeconds: options.settleTimeoutSeconds ?? 20 },
    ...(permissive ? { verifier: (rpcUrl: string) => deployPermissiveVerifier({ rpcUrl }) } : {}),
  });
  try {
    const deployed = { address: system.betVault, deployBlock: system.deployBlock.toString() };
    const network = defineNetwork({
      chainId: system.chainId,
      name: permissive ? "devnet" : "localnet",
      rpc: { http: anvil.rpcUrl, ws: anvil.wsUrl },
      contracts: { BetVault: deployed, Groth16Verifier: { address: system.verifier, deployBlock: system.deployBlock.toString() } },
      confirmations: 2,
      // Every start is a fresh anvil: the rows of the previous run's chain are replaced.
      resetOnChainMismatch: true,
    });
    const simulator = createSimulator({
      rpcUrl: anvil.rpcUrl,
      chainId: system.chainId,
      betVault: system.betVault,
      operator: system.operator.privateKey,
      players: DEV_PLAYER_KEYS,
      // The permissive chain at a third of the pace: its point is the bad proofs, one settlement in three.
      settleRatio: 0.75,
      betsPerStep: permissive ? 1 : 3,
      intervalMs: 1000,
      badProofRatio: permissive ? 1 / 3 : 0,
      logger: options.logger.child({ component: permissive ? "simulator-permissive" : "simulator" }),
    });
    simulator.start();
    options.logger.info(
      { rpcUrl: anvil.rpcUrl, anvilPid: anvil.pid, chainId: system.chainId, betVault: system.betVault, permissive },
      permissive
        ? "local chain deployed with a verifier that accepts every proof; simulator running (DEV keys), sending some bad proofs: shown as verified: false"
        : "local chain deployed; simulator running (DEV keys)",
    );
    return {
      network,
      anvil,
      simulator,
      async stop() {
        await simulator.stop();
        await anvil.stop();
      },
    };
  } catch (error) {
    await anvil.stop();
    throw error;
  }
}
