// The honest clients of bench/abuse.ts: each operation from its own loopback address at a fixed,
// evenly paced rate (open loop: a slow answer never delays the next request), within its points
// budget — playerBets, betResults, bets, a CSV export — and two Socket.IO clients (socket.io-client,
// as an application uses it: on a reconnect it subscribes again from the last seq it saw), one on
// the firehose and one on a wallet, counting every update by seq to compare with the outbox; and a
// newcomer who opens the firehose in the middle of B (a refusal is an honest error).
import http from "node:http";
import { io as ioClient } from "socket.io-client";
import type { TypedClientSocket } from "../test/realtime.ts";
import { wallet } from "../test/outbox.ts";
import { exchange, type Exchange, outcomeOf, pace, parseAnswer, percentile } from "./abuse-clients.ts";

export type Phase = "A" | "B";

export const HONEST = {
  /** The wallet the wallet socket follows; the outbox writer gives it every other update. */
  wallet: wallet(4242),
  firehoseAddress: "127.0.0.6",
  walletSocketAddress: "127.0.0.7",
  /** A visitor who opens the live page in the middle of B, while the crowd holds its firehoses. */
  newcomerAddress: "127.0.0.8",
};

export interface HonestOptions {
  gateway: string;
  realtime: string;
  realtimePath: string;
  wallets: string[];
  settled: { chainId: number; betId: string }[];
  csvWallet: string;
}

interface Op {
  name: string;
  address: string;
  rate: number;
  request: (i: number) => Parameters<typeof exchange>[0];
}

interface Done {
  op: string;
  /** The X-Request-Id it was sent with (nginx logs it: bench/abuse-breakdown.ts). */
  requestId: string;
  sentAt: number;
  ms: number;
  ok: boolean;
  key: string;
}

export interface OpStats {
  n: number;
  p50: number;
  p99: number;
  errors: number;
  errorKinds: Record<string, number>;
  /** The slowest good answers: when each was sent (seconds into the phase) and how long it took. */
  slowest: { atS: number; ms: number }[];
}

export interface HonestResult {
  op: string;
  address: string;
  rate: number;
  A: OpStats;
  B: OpStats;
}

export interface SocketCheck {
  name: string;
  address: string;
  expected: Record<Phase | "other", number>;
  missed: Record<Phase | "other", number>;
  duplicated: number;
  reconnects: number;
  errors: number;
  /** The node refused this socket's subscription (the newcomer's firehose): why. */
  refused?: string;
}

const body = (query: string, variables: Record<string, unknown>) => Buffer.from(JSON.stringify({ query, variables }));

const PLAYER_BETS = `query HonestPlayerBets($wallet: Address!) {
  playerBets(wallet: $wallet, first: 20) {
    totalCount
    nodes { chainId betId status stake game placedBlock confirmations result { won payout } }
    pageInfo { hasNextPage endCursor }
  }
}`;
const BET_RESULTS = `query HonestBetResults($chainId: ChainId!, $betIds: [UInt256!]!) {
  betResults(chainId: $chainId, betIds: $betIds) { chainId betId status finalized result { outcome won payout } }
}`;
const BETS = `query HonestBets { bets(first: 20) { nodes { chainId betId player status stake game placedAt } pageInfo { hasNextPage endCursor } } }`;

interface LiveSocket {
  name: string;
  address: string;
  socket: TypedClientSocket;
  since: bigint;
  last: bigint;
  seen: Map<string, number>;
  reconnects: number;
  errors: number;
}

/** A newcomer whose firehose the node refused: reported beside the sockets, with the refusal. */
const NEWCOMER = "newcomer firehose (B)";

export class HonestClients {
  private newcomerRefusal: string | undefined;
  private readonly ops: Op[];
  private readonly done: Done[] = [];
  private readonly windows: { phase: Phase; start: number; end: number }[] = [];
  private readonly pending = new Set<Promise<void>>();
  private stopping = false;
  private loops: Promise<void>[] = [];
  private readonly sockets: LiveSocket[] = [];

  private readonly options: HonestOptions;
  constructor(options: HonestOptions) {
    this.options = options;
    const graphql = new URL(`${options.gateway}/graphql`);
    const agent = () => new http.Agent({ keepAlive: true, maxSockets: 32 });
    const post = (address: string, a: http.Agent, b: Buffer) => ({ url: graphql, method: "POST" as const, body: b, localAddress: address, agent: a });
    const [pa, ra, ba] = [agent(), agent(), agent()];
    const ids = (i: number) => Array.from({ length: 20 }, (_, k) => options.settled[(i * 20 + k) % options.settled.length]!);
    this.ops = [
      {
        name: "playerBets",
        address: "127.0.0.2",
        rate: 4,
        request: (i) => post("127.0.0.2", pa, body(PLAYER_BETS, { wallet: options.wallets[i % options.wallets.length] })),
      },
      {
        name: "betResults",
        address: "127.0.0.3",
        rate: 4,
        request: (i) => post("127.0.0.3", ra, body(BET_RESULTS, { chainId: ids(i)[0]!.chainId, betIds: ids(i).map((b) => b.betId) })),
      },
      { name: "bets", address: "127.0.0.4", rate: 4, request: () => post("127.0.0.4", ba, body(BETS, {})) },
      {
        name: "CSV export",
        address: "127.0.0.5",
        rate: 0.5,
        request: () => ({ url: new URL(`${options.gateway}/wallets/${options.csvWallet}/bets.csv`), method: "GET", localAddress: "127.0.0.5" }),
      },
    ];
  }

  private judge(op: Op, e: Exchange): { ok: boolean; key: string } {
    if (op.name === "CSV export") {
      const ok = e.status === 200 && !e.cut && e.text.startsWith("chainId");
      return { ok, key: ok ? "200 csv" : outcomeOf(e).key };
    }
    const o = outcomeOf(e);
    const answer = parseAnswer(e.text);
    const ok = e.status === 200 && !o.refused && !answer?.errors && answer?.data != null;
    return { ok, key: ok ? "200 data" : o.key };
  }

  /** Each operation once, from its address: answered with data, and what it costs against its budget. */
  async precheck(): Promise<{ ok: boolean; lines: string[] }> {
    const lines: string[] = [];
    let ok = true;
    for (const op of this.ops) {
      // The first request of each kind warms cold paths (query plans, pools, JIT): on a loaded
      // machine it may outlast the client's timeout, so it gets three tries.
      let e = await exchange(op.request(0));
      for (let tries = 1; tries < 3 && !this.judge(op, e).ok; tries++) e = await exchange(op.request(0));
      const verdict = this.judge(op, e);
      ok &&= verdict.ok;
      const cost = parseAnswer(e.text)?.extensions?.cost;
      lines.push(
        `honest ${op.name} from ${op.address} at ${op.rate}/s: ${verdict.key} in ${e.ms.toFixed(0)} ms, ${e.text.length} bytes` +
          (cost ? `, cost requested ${cost.requested} / actual ${cost.actual} → ${(cost.actual * op.rate).toFixed(0)} points/s of its 1 000/s` : ""),
      );
    }
    return { ok, lines };
  }

  private connect(name: string, address: string, request: { all?: boolean; wallets?: string[] }): Promise<LiveSocket> {
    const local = { localAddress: address };
    const socket: TypedClientSocket = ioClient(this.options.realtime, { path: this.options.realtimePath, transports: ["websocket"], forceNew: true, ...local });
    const live: LiveSocket = { name, address, socket, since: -1n, last: 0n, seen: new Map(), reconnects: 0, errors: 0 };
    socket.on("bets:update", (u) => {
      live.seen.set(u.seq, (live.seen.get(u.seq) ?? 0) + 1);
      if (BigInt(u.seq) > live.last) live.last = BigInt(u.seq);
    });
    socket.on("bets:error", () => live.errors++);
    return new Promise((resolve, reject) => {
      socket.on("connect", () => {
        const resume = live.since >= 0n;
        if (resume) live.reconnects++;
        const sinceSeq = resume ? String(live.last > live.since ? live.last : live.since) : undefined;
        socket
          .timeout(20_000)
          .emitWithAck("bets:subscribe", { ...request, ...(sinceSeq ? { sinceSeq } : {}) })
          .then((state) => {
            if ("error" in state) {
              live.errors++;
              return reject(new Error(`${name}: ${state.error.code}`));
            }
            if (!resume) live.since = BigInt(state.seq);
            resolve(live);
          }, reject);
      });
      socket.on("connect_error", (error) => {
        live.errors++;
        if (live.since < 0n) reject(error);
      });
    });
  }

  async connectSockets(): Promise<void> {
    this.sockets.push(await this.connect("firehose socket", HONEST.firehoseAddress, { all: true }));
    this.sockets.push(await this.connect("wallet socket", HONEST.walletSocketAddress, { wallets: [HONEST.wallet] }));
  }

  /** The newcomer: a fresh address's first firehose, opened while the attackers hold theirs. */
  async connectNewcomer(): Promise<void> {
    try {
      this.sockets.push(await this.connect(NEWCOMER, HONEST.newcomerAddress, { all: true }));
    } catch (error) {
      this.newcomerRefusal = error instanceof Error ? error.message : String(error);
    }
  }

  /** The lowest seq the sockets went live from: every stored update after it is expected by one of them. */
  socketsLiveFrom(): bigint {
    const sinces = this.sockets.map((s) => s.since).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return sinces[0] ?? 0n;
  }

  start(): void {
    this.loops = this.ops.map((op) =>
      pace(
        op.rate,
        (i) => {
          const requestId = `honest-${op.address}-${i + 1}`;
          const promise = exchange({ ...op.request(i + 1), headers: { "x-request-id": requestId } }).then((e) => {
            const verdict = this.judge(op, e);
            this.done.push({ op: op.name, requestId, sentAt: e.sentAt, ms: e.ms, ...verdict });
          });
          this.pending.add(promise);
          void promise.finally(() => this.pending.delete(promise));
        },
        () => this.stopping,
      ),
    );
  }

  window(phase: Phase): { end(): void } {
    const w = { phase, start: performance.now(), end: Number.POSITIVE_INFINITY };
    this.windows.push(w);
    return { end: () => (w.end = performance.now()) };
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.loops);
    await Promise.all([...this.pending]);
  }

  private stats(op: string, phase: Phase): OpStats {
    const w = this.windows.find((x) => x.phase === phase)!;
    const mine = this.done.filter((d) => d.op === op && d.sentAt >= w.start && d.sentAt < w.end);
    const ms = mine
      .filter((d) => d.ok)
      .map((d) => d.ms)
      .sort((a, b) => a - b);
    const errorKinds: Record<string, number> = {};
    for (const d of mine) if (!d.ok) errorKinds[d.key] = (errorKinds[d.key] ?? 0) + 1;
    const slowest = mine
      .filter((d) => d.ok)
      .sort((a, b) => b.ms - a.ms)
      .slice(0, 3)
      .map((d) => ({ atS: (d.sentAt - w.start) / 1000, ms: d.ms }));
    return { n: mine.length, p50: percentile(ms, 50), p99: percentile(ms, 99), errors: mine.length - ms.length, errorKinds, slowest };
  }

  /** Every good answer of `phase`: its operation, X-Request-Id and time (request written → last byte). */
  answers(phase: Phase): { op: string; requestId: string; ms: number }[] {
    const w = this.windows.find((x) => x.phase === phase)!;
    return this.done.filter((d) => d.ok && d.sentAt >= w.start && d.sentAt < w.end).map((d) => ({ op: d.op, requestId: d.requestId, ms: d.ms }));
  }

  results(): HonestResult[] {
    return this.ops.map((op) => ({ op: op.name, address: op.address, rate: op.rate, A: this.stats(op.name, "A"), B: this.stats(op.name, "B") }));
  }

  /** Each socket's deliveries against the outbox rows it should have had (`phaseOf`: the phase each was written in). */
  compareWithOutbox(stored: { seq: bigint; player: string }[], phaseOf: Map<string, string>): SocketCheck[] {
    for (const s of this.sockets) s.socket.close();
    const checks: SocketCheck[] = this.sockets.map((s) => {
      const wanted = stored.filter((u) => u.seq > s.since && (s.name !== "wallet socket" || u.player === HONEST.wallet));
      const expected = { A: 0, B: 0, other: 0 };
      const missed = { A: 0, B: 0, other: 0 };
      for (const u of wanted) {
        const p = phaseOf.get(String(u.seq));
        const key = p === "A" || p === "B" ? p : "other";
        expected[key]++;
        if (!s.seen.has(String(u.seq))) missed[key]++;
      }
      let duplicated = 0;
      for (const count of s.seen.values()) duplicated += count - 1;
      return { name: s.name, address: s.address, expected, missed, duplicated, reconnects: s.reconnects, errors: s.errors };
    });
    if (this.newcomerRefusal === undefined) return checks;
    const none = { A: 0, B: 0, other: 0 };
    return [
      ...checks,
      { name: NEWCOMER, address: HONEST.newcomerAddress, expected: none, missed: none, duplicated: 0, reconnects: 0, errors: 1, refused: this.newcomerRefusal },
    ];
  }
}
