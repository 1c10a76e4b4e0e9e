import type { AnvilInstance } from "../chain/anvil.ts";
import { DEV_PLAYER_KEYS } from "../chain/devAccounts.ts";
import { startLocalChain } from "../chain/local.ts";
import { createSimulator, type Simulator } from "../chain/simulator.ts";
import type { Logger } from "../core/logger.ts";
import { defineNetwork, type NetworkConfig } from "../indexer/config.ts";

// The embedded default's chain: a local anvil (127.0.0.1, one block a second), the BetVault
// system deployed with the DEV Groth16 verifier, and the operator simulator placing, proving,
// settling and refunding bets. The server seeds live only inside the simulator.

export interface DemoChain {
  network: NetworkConfig;
  anvil: AnvilInstance;
  simulator: Simulator;
  stop(): Promise<void>;
}

export async function startDemoChain(options: { logger: Logger; blockTimeSeconds?: number; settleTimeoutSeconds?: number }): Promise<DemoChain> {
  // Short deadlines so a new user sees refunds within a minute.
  const { anvil, system } = await startLocalChain({
    // Out of the terminal's process group: Ctrl-C must not end the chain before the simulator and
    // the indexer using it have stopped (a receipt awaited from a dead chain waits minutes).
    anvil: { blockTime: options.blockTimeSeconds ?? 1, ownProcessGroup: true },
    deploy: { settleTimeoutSeconds: options.settleTimeoutSeconds ?? 20 },
  });
  try {
    const deployed = { address: system.betVault, deployBlock: system.deployBlock.toString() };
    const network = defineNetwork({
      chainId: system.chainId,
      name: "localnet",
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
      settleRatio: 0.75,
      betsPerStep: 3,
      intervalMs: 1000,
      logger: options.logger.child({ component: "simulator" }),
    });
    simulator.start();
    options.logger.info(
      { rpcUrl: anvil.rpcUrl, anvilPid: anvil.pid, chainId: system.chainId, betVault: system.betVault },
      "local chain deployed; simulator running (DEV keys)",
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
