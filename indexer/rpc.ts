/**
 * The indexer's view of one chain through viem: block headers, BetVault logs by range or by block
 * hash, the chain id, and a new-head signal (a WebSocket `newHeads` subscription when a ws URL is
 * configured). Every call is retried with backoff on retryable failures (indexer/errors.ts); what
 * still fails is thrown as a classified IndexerError.
 */
import {
  BaseError,
  BlockNotFoundError,
  ExecutionRevertedError,
  RpcRequestError,
  createPublicClient,
  fallback,
  http,
  numberToHex,
  webSocket,
  type Hex,
  type HttpTransportConfig,
  type PublicClient,
  type Transport,
  type WebSocketTransport,
} from "viem";
import type { Logger } from "../core/logger.ts";
import { EVENT_TOPICS } from "../chain/betvault.ts";
import { ChainInconsistentError, IndexerError, withRetry, type RetryOptions } from "./errors.ts";

const VERIFIER_GETTER_ABI = [{ type: "function", name: "verifier", stateMutability: "view", inputs: [], outputs: [{ name: "", type: "address" }] }] as const;

export interface BlockHeader {
  number: bigint;
  hash: Hex;
  parentHash: Hex;
  timestamp: bigint;
}

/** An eth_getLogs entry, numbers parsed. */
export interface ChainLog {
  address: Hex;
  topics: Hex[];
  data: Hex;
  blockNumber: bigint;
  blockHash: Hex;
  /** Some nodes (anvil, recent geth/reth) include it; otherwise the header is fetched. */
  blockTimestamp: bigint | undefined;
  transactionHash: Hex;
  logIndex: number;
  removed: boolean;
}

export interface ChainRpc {
  chainId(): Promise<number>;
  latestBlock(): Promise<BlockHeader>;
  /** The block at `number`, or null when the chain has no such block (yet). */
  block(number: bigint): Promise<BlockHeader | null>;
  /** BetVault's BetPlaced/BetSettled/BetRefunded logs in [fromBlock, toBlock], in chain order. */
  logs(fromBlock: bigint, toBlock: bigint): Promise<ChainLog[]>;
  /** The same logs of exactly one block, by hash (never those of a competing block at that height). */
  logsOfBlock(blockHash: Hex): Promise<ChainLog[]>;
  /** The runtime bytecode at `address` ("0x" when there is no contract). */
  code(address: Hex): Promise<Hex>;
  /** The verifier BetVault calls to judge settlements (its immutable `verifier()`). */
  betVaultVerifier(): Promise<Hex>;
  /** eth_call of `data` on `to` at the latest block: the return data, or null when the call reverts. */
  call(to: Hex, data: Hex): Promise<Hex | null>;
  /**
   * Calls `onHead` on every new head a WebSocket subscription reports and `onError` when the
   * subscription fails (viem reconnects); false when no ws URL is configured.
   */
  watchHeads(onHead: () => void, onError?: (error: Error) => void): boolean;
  close(): Promise<void>;
}

export interface ChainRpcOptions {
  http: string;
  /** More HTTP URLs of the same chain: viem's fallback transport tries them in order when one fails. */
  fallback?: readonly string[];
  ws?: string;
  address: Hex;
  chainId: number;
  logger: Logger;
  signal?: AbortSignal;
  /** Per request. Default 15 s. */
  timeoutMs?: number;
  /** Attempts per call before the failure reaches the sync loop. Default 4. */
  attempts?: number;
}

/** Largest eth_getLogs answer accepted (~110 000 BetVault events); a larger one splits its range. */
const MAX_LOGS_RESPONSE_BYTES = 128 * 1024 * 1024;

const BET_TOPICS: Hex[] = [EVENT_TOPICS.BetPlaced, EVENT_TOPICS.BetSettled, EVENT_TOPICS.BetRefunded];

interface RpcLog {
  address: Hex;
  topics: Hex[];
  data: Hex;
  blockNumber: Hex | null;
  blockHash: Hex | null;
  blockTimestamp?: Hex | null;
  transactionHash: Hex | null;
  logIndex: Hex | null;
  removed?: boolean;
}

function parseLog(log: RpcLog): ChainLog {
  if (log.blockNumber === null || log.blockHash === null || log.transactionHash === null || log.logIndex === null) {
    throw new ChainInconsistentError("the node returned a pending log");
  }
  return {
    address: log.address.toLowerCase() as Hex,
    topics: log.topics,
    data: log.data,
    blockNumber: BigInt(log.blockNumber),
    blockHash: log.blockHash.toLowerCase() as Hex,
    blockTimestamp: log.blockTimestamp ? BigInt(log.blockTimestamp) : undefined,
    transactionHash: log.transactionHash.toLowerCase() as Hex,
    logIndex: Number(BigInt(log.logIndex)),
    removed: log.removed === true,
  };
}

/** Error texts providers use when a getLogs range or result is too large. */
const RANGE_TOO_LARGE =
  /more than \d+ results|query returned more than|block range|range (is )?too (large|wide)|too many (logs|results|blocks)|limit exceeded|exceed(s|ed)? .*(limit|max)|response size/i;

/** The node ran the call and it reverted (an answer, not a failure: retrying cannot change it). */
function isRevert(error: unknown): boolean {
  return error instanceof BaseError && error.walk((e) => e instanceof ExecutionRevertedError || (e instanceof RpcRequestError && e.code === 3)) !== null;
}

export function createChainRpc(options: ChainRpcOptions): ChainRpc {
  const timeout = options.timeoutMs ?? 15_000;
  // Headers are fetched many at a time: batched JSON-RPC. Logs go alone, with a larger response
  // limit than viem's 10 MB default (a dense backfill range is tens of MB); beyond it the range is
  // split.
  // With fallback URLs, a failed request moves on to the next URL (in order, no ranking); the
  // nodes may then be at different heights, which the sync loop tolerates (a node behind is waited for).
  const urls = [options.http, ...(options.fallback ?? [])];
  const transport = (config: HttpTransportConfig): Transport =>
    urls.length === 1
      ? http(options.http, config)
      : fallback(
          urls.map((url) => http(url, config)),
          { retryCount: 0, rank: false },
        );
  const client: PublicClient = createPublicClient({
    transport: transport({ retryCount: 0, timeout, batch: { batchSize: 100, wait: 0 } }),
    cacheTime: 0,
  });
  const logsClient: PublicClient = createPublicClient({
    transport: transport({ retryCount: 0, timeout: timeout * 4, maxResponseBodySize: MAX_LOGS_RESPONSE_BYTES }),
    cacheTime: 0,
  });
  let wsClient: PublicClient<WebSocketTransport> | undefined;
  let unwatch: (() => void) | undefined;
  const retry: RetryOptions = {
    attempts: options.attempts ?? 4,
    baseDelayMs: 200,
    maxDelayMs: 5_000,
    signal: options.signal,
    chainId: options.chainId,
    onRetry: (error, attempt, delayMs) =>
      options.logger.warn({ chainId: options.chainId, code: error.code, err: error.details, attempt, delayMs }, "RPC call failed, retrying"),
  };

  const header = (block: { number: bigint | null; hash: Hex | null; parentHash: Hex; timestamp: bigint }): BlockHeader => {
    if (block.number === null || block.hash === null) throw new ChainInconsistentError("the node returned a pending block");
    return { number: block.number, hash: block.hash.toLowerCase() as Hex, parentHash: block.parentHash.toLowerCase() as Hex, timestamp: block.timestamp };
  };

  const getLogs = (filter: { fromBlock: Hex; toBlock: Hex } | { blockHash: Hex }) =>
    logsClient.request({ method: "eth_getLogs", params: [{ address: options.address, topics: [BET_TOPICS], ...filter }] }) as Promise<RpcLog[]>;

  async function logsInRange(fromBlock: bigint, toBlock: bigint): Promise<ChainLog[]> {
    try {
      const raw = await withRetry(() => getLogs({ fromBlock: numberToHex(fromBlock), toBlock: numberToHex(toBlock) }), retry);
      return raw.map(parseLog);
    } catch (error) {
      // A node that refuses the range (too many blocks or results), or an answer over the client's
      // size limit: split the range in two.
      const text = error instanceof IndexerError ? `${error.details ?? ""} ${String(error.cause)}` : String(error);
      const tooLarge = (error instanceof IndexerError && error.code === "RPC_RESPONSE_TOO_LARGE") || RANGE_TOO_LARGE.test(text);
      if (toBlock > fromBlock && tooLarge && !options.signal?.aborted) {
        const mid = fromBlock + (toBlock - fromBlock) / 2n;
        options.logger.debug({ chainId: options.chainId, fromBlock, toBlock }, "getLogs range refused, splitting");
        return [...(await logsInRange(fromBlock, mid)), ...(await logsInRange(mid + 1n, toBlock))];
      }
      throw error;
    }
  }

  return {
    chainId: () => withRetry(() => client.getChainId(), retry),
    latestBlock: () => withRetry(async () => header(await client.getBlock({ blockTag: "latest" })), retry),
    block: (number) =>
      withRetry(async () => {
        try {
          return header(await client.getBlock({ blockNumber: number }));
        } catch (error) {
          if (error instanceof BlockNotFoundError) return null;
          throw error;
        }
      }, retry),
    logs: (fromBlock, toBlock) => logsInRange(fromBlock, toBlock),
    code: (address) => withRetry(async () => (await client.getCode({ address })) ?? "0x", retry),
    betVaultVerifier: () => withRetry(() => client.readContract({ address: options.address, abi: VERIFIER_GETTER_ABI, functionName: "verifier" }), retry),
    call: (to, data) =>
      withRetry(async () => {
        try {
          return (await client.call({ to, data })).data ?? "0x";
        } catch (error) {
          if (isRevert(error)) return null;
          throw error;
        }
      }, retry),
    logsOfBlock: (blockHash) => withRetry(async () => (await getLogs({ blockHash })).map(parseLog), retry),
    watchHeads(onHead, onError) {
      if (!options.ws) return false;
      const ws = createPublicClient({ transport: webSocket(options.ws, { retryCount: 0, reconnect: { attempts: 1_000_000, delay: 1_000 } }), cacheTime: 0 });
      wsClient = ws;
      // No `poll` option: on a WebSocket transport viem then subscribes to newHeads (eth_subscribe).
      unwatch = ws.watchBlockNumber({
        onBlockNumber: () => onHead(),
        onError: (error) => {
          options.logger.warn({ chainId: options.chainId, err: error.message.split("\n")[0] }, "newHeads subscription error (polling continues)");
          onError?.(error);
        },
      });
      return true;
    },
    async close() {
      unwatch?.();
      unwatch = undefined;
      if (wsClient) {
        const rpc = await wsClient.transport.getRpcClient().catch(() => undefined);
        rpc?.close();
        wsClient = undefined;
      }
    },
  };
}
