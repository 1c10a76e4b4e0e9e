/** viem clients tuned for a local chain: fast polling, no cache. */
import {
  createPublicClient,
  createWalletClient,
  defineChain,
  http,
  type Account,
  type Chain,
  type PublicClient,
  type Transport,
  type WalletClient,
} from "viem";

export function localChain(chainId: number, rpcUrl: string): Chain {
  return defineChain({
    id: chainId,
    name: chainId === 31337 ? "localnet" : `local-${chainId}`,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
}

export interface ClientOptions {
  /** Receipt/block polling interval in ms (viem defaults to 4 s, far too slow for anvil). */
  pollingInterval?: number;
}

export function publicClientFor(chain: Chain, rpcUrl: string, options: ClientOptions = {}): PublicClient<Transport, Chain> {
  return createPublicClient({ chain, transport: http(rpcUrl), pollingInterval: options.pollingInterval ?? 100, cacheTime: 0 });
}

export function walletClientFor(chain: Chain, rpcUrl: string, account: Account, options: ClientOptions = {}): WalletClient<Transport, Chain, Account> {
  return createWalletClient({ chain, account, transport: http(rpcUrl), pollingInterval: options.pollingInterval ?? 100, cacheTime: 0 });
}

/** Ask the node for its chain id. */
export async function fetchChainId(rpcUrl: string): Promise<number> {
  const res = await fetch(rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
  });
  const body = (await res.json()) as { result?: string; error?: { message?: string } };
  if (!body.result) throw new Error(`eth_chainId failed: ${body.error?.message ?? res.status}`);
  return Number(BigInt(body.result));
}
