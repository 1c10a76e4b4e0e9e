/**
 * Honest traffic through the public port while a fault happens (deploy/containers.test.ts): a
 * GraphQL loop below the gateways' per-address budget, alternating a player's bets and the
 * indexer's progress (whose indexed block must never go backwards), and Socket.IO firehose clients
 * that resume from their last seq (`sinceSeq`) whenever their socket ends.
 */
import { io as ioClient } from "socket.io-client";
import type { BetUpdatePayload, ClientToServerEvents, ServerToClientEvents, SubscribedPayload } from "../realtime/events.ts";
import type { Socket } from "socket.io-client";

export interface GraphqlTally {
  sent: number;
  failed: number;
  failures: string[];
  /** The indexer's indexed block went down between two answers. */
  headWentBack: string[];
}

export interface SocketTally {
  /** Every seq each client received, in order of arrival. */
  received: bigint[][];
  /** Each client's seq at its first subscription: it is owed every update after it. */
  from: bigint[];
  resumes: number;
}

const PLAYER_BETS = "query($w: Address!) { playerBets(wallet: $w, first: 5) { totalCount } }";
const INDEXING = "{ networkConfigs { chainId indexing { indexedBlock } } }";

/** Runs the GraphQL loop until `stop()`; every non-200, GraphQL error or network error is a failure. */
export function graphqlLoop(url: string, wallets: string[], pauseMs = 150): { tally: GraphqlTally; stop: () => Promise<void> } {
  const tally: GraphqlTally = { sent: 0, failed: 0, failures: [], headWentBack: [] };
  let running = true;
  let indexed = -1n;
  const loop = (async () => {
    for (let i = 0; running; i++) {
      const body = i % 2 === 0 ? { query: PLAYER_BETS, variables: { w: wallets[i % wallets.length] } } : { query: INDEXING };
      tally.sent++;
      try {
        const response = await fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(30_000),
        });
        const text = await response.text();
        const json = JSON.parse(text) as { data?: { networkConfigs?: { indexing: { indexedBlock: string } }[] }; errors?: unknown[] };
        if (response.status !== 200 || json.errors) throw new Error(`${response.status} ${text.slice(0, 200)}`);
        const block = json.data?.networkConfigs?.[0]?.indexing.indexedBlock;
        if (block !== undefined) {
          if (BigInt(block) < indexed) tally.headWentBack.push(`${indexed} -> ${block}`);
          indexed = BigInt(block) > indexed ? BigInt(block) : indexed;
        }
      } catch (error) {
        tally.failed++;
        if (tally.failures.length < 5) tally.failures.push(error instanceof Error ? error.message : String(error));
      }
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  })();
  return {
    tally,
    stop: async () => {
      running = false;
      await loop;
    },
  };
}

/** Firehose clients through the proxy; each reconnects with `sinceSeq` (its last seq) after any disconnect. */
export function socketClients(url: string, path: string, count: number): { tally: SocketTally; ready: Promise<void>; stop: () => void } {
  const tally: SocketTally = { received: Array.from({ length: count }, () => []), from: [], resumes: 0 };
  const sockets: Socket<ServerToClientEvents, ClientToServerEvents>[] = [];
  let stopped = false;
  const readies: Promise<void>[] = [];
  for (let index = 0; index < count; index++) {
    const seqs = tally.received[index]!;
    let lastSeq: string | undefined;
    readies.push(
      new Promise<void>((resolveReady) => {
        const open = () => {
          if (stopped) return;
          const socket: Socket<ServerToClientEvents, ClientToServerEvents> = ioClient(url, {
            path,
            transports: ["websocket"],
            reconnection: false,
            forceNew: true,
          });
          sockets[index] = socket;
          socket.on("bets:update", (update: BetUpdatePayload) => {
            seqs.push(BigInt(update.seq));
            lastSeq = update.seq;
          });
          socket.on("connect", () => {
            socket
              .timeout(20_000)
              .emitWithAck("bets:subscribe", { all: true, ...(lastSeq ? { sinceSeq: lastSeq } : {}) })
              .then((answer) => {
                const state = answer as SubscribedPayload;
                if (lastSeq === undefined && state.seq) {
                  lastSeq = state.seq;
                  tally.from[index] = BigInt(state.seq);
                }
                resolveReady();
              })
              .catch(() => socket.disconnect());
          });
          const retry = () => {
            socket.removeAllListeners();
            socket.close();
            if (stopped) return;
            tally.resumes++;
            setTimeout(open, 500);
          };
          socket.on("disconnect", retry);
          socket.on("connect_error", retry);
        };
        open();
      }),
    );
  }
  return {
    tally,
    ready: Promise.all(readies).then(() => undefined),
    stop: () => {
      stopped = true;
      for (const socket of sockets) {
        socket?.removeAllListeners();
        socket?.close();
      }
    },
  };
}

/** Duplicates in one client's seqs, and the seqs of `expected` (every firehose update in its window) it never got. */
export function deliveryOf(received: bigint[], expected: bigint[]): { duplicated: number; lost: bigint[] } {
  const seen = new Set<bigint>();
  let duplicated = 0;
  for (const seq of received) {
    if (seen.has(seq)) duplicated++;
    seen.add(seq);
  }
  return { duplicated, lost: expected.filter((seq) => !seen.has(seq)) };
}
