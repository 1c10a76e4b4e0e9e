// The attackers of bench/abuse.ts (issue 21), run in child processes of it (`bench/abuse.ts --role
// attacker`) so their event loops are not the honest clients'. Nine kinds, each from its own loopback
// address (the spread one from 50), each at a fixed, evenly paced rate — at least 10× an honest
// client's, or as fast as its limits let it. A child takes its kinds from BENCH_ABUSE_ATTACKER
// (JSON), attacks on the "attack" command on stdin, and answers one JSON line per attack: per kind
// what it sent, how it was answered, and when and how it was first refused; and its own CPU.
import http from "node:http";
import { createInterface } from "node:readline";
import { ackError, closedLoop, exchange, type Exchange, outcomeOf, pace, RawSocketIo, type ReadMode } from "./abuse-clients.ts";

export const ATTACK_KINDS = ["aggregates", "replays", "sockets", "churn", "repeated-ids", "csv-flood", "slow-readers", "flood", "spread"] as const;
export type AttackKind = (typeof ATTACK_KINDS)[number];

/** Requests a closed-loop attacker keeps in flight: as fast as the server answers it. */
const CLOSED_LOOP_WORKERS = 32;

export interface AttackFixtures {
  whale: string;
  /** Settled bets (one chain), old enough to be final: cacheable answers. */
  settled: { chainId: number; betId: string }[];
  /** A seq deep in the outbox: a replay from it reads thousands of updates. */
  deepSinceSeq: string;
}

export interface AttackerConfig {
  gateway: string;
  realtime: string;
  realtimePath: string;
  kinds: AttackKind[];
  fixtures: AttackFixtures;
}

/** Who attacks from where, how fast, and what refusal ends it. */
export const ATTACKS: Record<AttackKind, { address: string; rate: string; what: string }> = {
  aggregates: {
    address: "127.0.0.11",
    rate: "40 req/s",
    what: "aliased totalCounts under game/time filters (bets ×2 aliases, playerBets(whale) ×9), in rotation",
  },
  replays: {
    address: "127.0.0.12",
    rate: "10 sockets/s, ≤ 20 open",
    what: "subscribe {wallets: [whale], sinceSeq: deep} (~5 000 of its updates), stop reading, reconnect after 3 s with the same sinceSeq",
  },
  sockets: { address: "127.0.0.13", rate: "50 handshakes/s", what: "firehose sockets, every admitted one held open (reading)" },
  churn: {
    address: "127.0.0.14",
    rate: "200 req/s",
    what: "betResult of a new final bet each time, plus an unused variable and a comment that change every time",
  },
  "repeated-ids": {
    address: "127.0.0.15",
    rate: `closed loop, ${CLOSED_LOOP_WORKERS} at once`,
    what: "betResults with one id repeated 100 times, proofs selected; as fast as its limits allow (each loop waits the Retry-After it is given)",
  },
  "csv-flood": { address: "127.0.0.16", rate: "20 req/s", what: "GET the whale's CSV export (~550 000 rows), never read, held 30 s" },
  "slow-readers": { address: "127.0.0.17", rate: "20 req/s", what: "playerBets(whale, first: 100) with proofs (~150 KB), read 64 B/s, held 30 s" },
  flood: { address: "127.0.0.18", rate: "400 req/s", what: "a cheap cacheable betResult, keep-alive" },
  spread: {
    address: "127.0.0.100–149",
    rate: "per address: aggregates 0.15/s + betResult 5/s + 10 firehose sockets",
    what: "the aggregate, flood and socket attacks over 50 addresses, each within its own budget",
  },
};

export const SPREAD_ADDRESSES = Array.from({ length: 50 }, (_, i) => `127.0.0.${100 + i}`);

export interface KindReport {
  kind: AttackKind;
  sent: number;
  /** Not sent: its in-flight cap was reached. */
  skipped: number;
  outcomes: Record<string, number>;
  served: number;
  refused: number;
  /** Answers the server ended early (write deadline) or sockets it closed. */
  cut: number;
  /** Sent but never answered: no HTTP response (timeout, socket error), a handshake or acknowledgement that never came. */
  noAnswer: number;
  /** The lowest `RateLimit-Remaining` an answer carried (HTTP attacks): how far into its budget it got. */
  minRemaining?: number;
  /** ms from the attack's start to its first refusal, and that refusal's code. */
  firstRefusalMs?: number;
  firstRefusalCode?: string;
  /** Sockets admitted (socket attacks). */
  admitted?: number;
}

export interface AttackerReport {
  kinds: KindReport[];
  cpuMs: number;
  wallMs: number;
}

const MAX_IN_FLIGHT = 512;
/** Seconds after the attack's end when a child reports, whatever is still out. */
export const REPORT_GRACE_S = 45;

const body = (query: string, variables: Record<string, unknown> = {}) => Buffer.from(JSON.stringify({ query, variables }));

function aggregateBodies(f: AttackFixtures): Buffer[] {
  const nine = Array.from({ length: 9 }, (_, i) => `p${i}: playerBets(wallet: $w, filter: { game: "dice" }) { totalCount }`).join(" ");
  return [
    body(`{ bets(first: 1, filter: { game: "dice" }) { a: totalCount b: totalCount } }`),
    body(`query ($w: Address!) { ${nine} }`, { w: f.whale }),
    body(`{ bets(first: 1, filter: { placedFrom: "1700000000", placedTo: "1800000000" }) { a: totalCount b: totalCount } }`),
  ];
}

const BET_FIELDS = "chainId betId player stake game status placedBlock placedTx confirmations finalized";
const PROOF = "result { outcome won payout proof { piA piB piC publicSignals } }";

export const FLOOD_QUERY = `query Flood($chainId: ChainId!, $betId: UInt256!) { betResult(chainId: $chainId, betId: $betId) { betId status result { won payout } } }`;
export const AGGREGATE_BODIES = aggregateBodies;

interface Ctx {
  config: AttackerConfig;
  t0: number;
  stop: () => boolean;
  report: KindReport;
  pending: Set<Promise<unknown>>;
}

function note(ctx: Ctx, key: string, refusedCode: string | undefined, served: boolean, cut = false, noAnswer = false): void {
  const r = ctx.report;
  r.outcomes[key] = (r.outcomes[key] ?? 0) + 1;
  if (served) r.served++;
  if (cut) r.cut++;
  if (noAnswer) r.noAnswer++;
  if (refusedCode !== undefined) {
    r.refused++;
    if (r.firstRefusalMs === undefined) {
      r.firstRefusalMs = performance.now() - ctx.t0;
      r.firstRefusalCode = refusedCode;
    }
  }
}

function track(ctx: Ctx, promise: Promise<unknown>): void {
  ctx.pending.add(promise);
  void promise.finally(() => ctx.pending.delete(promise));
}

/** Records one HTTP answer (or its absence). */
function noteExchange(ctx: Ctx, e: Exchange): void {
  const o = outcomeOf(e);
  if (e.rateLimitRemaining !== undefined && Number.isFinite(e.rateLimitRemaining))
    ctx.report.minRemaining = Math.min(ctx.report.minRemaining ?? Number.POSITIVE_INFINITY, e.rateLimitRemaining);
  note(ctx, o.key, o.refused ? o.code : undefined, !o.refused && e.status !== 0 && !e.cut, e.cut, e.status === 0);
}

/** An HTTP attack: `request(i)` at `rate`, each answer recorded. */
async function httpAttack(ctx: Ctx, rate: number, request: (i: number) => Parameters<typeof exchange>[0]): Promise<void> {
  let inFlight = 0;
  await pace(
    rate,
    (i) => {
      if (inFlight >= MAX_IN_FLIGHT) return void ctx.report.skipped++;
      inFlight++;
      ctx.report.sent++;
      track(
        ctx,
        exchange(request(i)).then((e: Exchange) => {
          inFlight--;
          noteExchange(ctx, e);
        }),
      );
    },
    ctx.stop,
  );
}

/** An HTTP attack as fast as its limits allow: CLOSED_LOOP_WORKERS loops, each honouring the Retry-After it is given. */
function closedLoopAttack(ctx: Ctx, request: (i: number) => Parameters<typeof exchange>[0]): Promise<void> {
  return closedLoop(
    CLOSED_LOOP_WORKERS,
    async (i) => {
      ctx.report.sent++;
      const e = await exchange(request(i));
      noteExchange(ctx, e);
      return e;
    },
    ctx.stop,
  );
}

/** A socket's refusal or silence: "closed", "socket error (…)" and "ack timeout" are no answer, not a refusal. */
const NO_ANSWER = /^(closed|socket error|ack timeout)/;

/** A socket attack: `rate` handshakes a second while fewer than `maxOpen` are open; `onAdmitted` decides each admitted socket's life. */
async function socketAttack(
  ctx: Ctx,
  rate: number,
  addressOf: (i: number) => string,
  maxOpen: (address: string) => number,
  onAdmitted: (socket: RawSocketIo, i: number) => Promise<void>,
): Promise<RawSocketIo[]> {
  const open = new Map<string, Set<RawSocketIo>>();
  const all: RawSocketIo[] = [];
  ctx.report.admitted = 0;
  await pace(
    rate,
    (i) => {
      const address = addressOf(i);
      const mine = open.get(address) ?? new Set();
      open.set(address, mine);
      if (mine.size >= maxOpen(address)) return void ctx.report.skipped++;
      ctx.report.sent++;
      const socket = new RawSocketIo(ctx.config.realtime, ctx.config.realtimePath, address);
      mine.add(socket);
      all.push(socket);
      track(
        ctx,
        socket.ready.then(async (outcome) => {
          if (!outcome.admitted) {
            mine.delete(socket);
            socket.close();
            if (NO_ANSWER.test(outcome.code)) return note(ctx, `no answer (${outcome.code})`, undefined, false, false, true);
            return note(ctx, `refused ${outcome.code}`, outcome.code, false);
          }
          ctx.report.admitted!++;
          await onAdmitted(socket, i);
          if (socket.closed) mine.delete(socket);
        }),
      );
    },
    ctx.stop,
  );
  return all;
}

/** Records a `bets:subscribe` acknowledgement: subscribed, refused with a code, or never answered. */
function noteSubscribe(ctx: Ctx, code: string | undefined, subscribed: string): void {
  if (code === undefined) note(ctx, subscribed, undefined, true);
  else if (NO_ANSWER.test(code)) note(ctx, `subscribe: no answer (${code})`, undefined, false, false, true);
  else note(ctx, `subscribe refused ${code}`, code, false);
}

async function runKind(kind: AttackKind, ctx: Ctx): Promise<void> {
  const { config } = ctx;
  const f = config.fixtures;
  const graphql = new URL(`${config.gateway}/graphql`);
  const post = (address: string, b: Buffer, agent?: http.Agent, read?: ReadMode) => ({
    url: graphql,
    method: "POST" as const,
    body: b,
    localAddress: address,
    agent,
    read,
  });
  const address = ATTACKS[kind].address;
  switch (kind) {
    case "aggregates": {
      const bodies = aggregateBodies(f);
      const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
      return httpAttack(ctx, 40, (i) => post(address, bodies[i % bodies.length]!, agent));
    }
    case "churn": {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
      return httpAttack(ctx, 200, (i) => {
        const bet = f.settled[(i * 7919) % f.settled.length]!;
        const query = `# churn ${i}\nquery Churn($chainId: ChainId!, $betId: UInt256!) {  betResult(chainId: $chainId, betId: $betId) { ${BET_FIELDS} ${PROOF} } }`;
        return post(address, Buffer.from(JSON.stringify({ query, variables: { chainId: bet.chainId, betId: bet.betId, unused: i } })), agent);
      });
    }
    case "repeated-ids": {
      const agent = new http.Agent({ keepAlive: true, maxSockets: CLOSED_LOOP_WORKERS });
      return closedLoopAttack(ctx, (i) => {
        const bet = f.settled[i % f.settled.length]!;
        const ids = Array.from({ length: 100 }, () => bet.betId);
        const query = `query Repeated($chainId: ChainId!, $ids: [UInt256!]!) { betResults(chainId: $chainId, betIds: $ids) { ${BET_FIELDS} ${PROOF} } }`;
        return post(address, body(query, { chainId: bet.chainId, ids }), agent);
      });
    }
    case "csv-flood":
      return httpAttack(ctx, 20, () => ({
        url: new URL(`${config.gateway}/wallets/${f.whale}/bets.csv`),
        method: "GET",
        localAddress: address,
        read: { kind: "never", holdMs: 30_000 },
      }));
    case "slow-readers": {
      const query = `query Slow($w: Address!) { playerBets(wallet: $w, first: 100) { nodes { ${BET_FIELDS} ${PROOF} } } }`;
      return httpAttack(ctx, 20, () => post(address, body(query, { w: f.whale }), undefined, { kind: "slow", holdMs: 30_000 }));
    }
    case "flood": {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
      const bet = f.settled[0]!;
      const b = body(FLOOD_QUERY, { chainId: bet.chainId, betId: bet.betId });
      return httpAttack(ctx, 400, () => post(address, b, agent));
    }
    case "replays": {
      const sockets = await socketAttack(
        ctx,
        10,
        () => address,
        () => 20,
        async (socket) => {
          // The acknowledgement comes after the whole replay: the attacker stops reading as soon as the
          // replay has begun (its first update), as a client that stalls does. A refusal is the ack
          // itself, before any update; an ack with no update first is a replay that had nothing to send.
          const ack = socket.emitWithAck("bets:subscribe", { wallets: [f.whale], sinceSeq: f.deepSinceSeq });
          const answered = await Promise.race([ack.then((value) => ({ value })), socket.firstUpdate.then(() => undefined)]);
          const code = answered && ackError(answered.value);
          if (code && NO_ANSWER.test(code)) {
            socket.close();
            return note(ctx, `subscribe: no answer (${code})`, undefined, false, false, true);
          }
          if (code) {
            socket.close();
            return note(ctx, `subscribe refused ${code}`, code, false);
          }
          note(ctx, "replaying, then not read", undefined, true);
          socket.stopReading();
          // The reconnect loop: drop it and come back with the same deep sinceSeq.
          await new Promise((resolve) => setTimeout(resolve, 3_000));
          if (socket.closed) ctx.report.cut++;
          socket.close();
        },
      );
      for (const s of sockets) s.close();
      return;
    }
    case "sockets": {
      const sockets = await socketAttack(
        ctx,
        50,
        () => address,
        () => Number.POSITIVE_INFINITY,
        async (socket) => {
          noteSubscribe(ctx, ackError(await socket.emitWithAck("bets:subscribe", { all: true })), "admitted, subscribed");
        },
      );
      for (const s of sockets) s.close();
      return;
    }
    case "spread": {
      const bodies = aggregateBodies(f);
      const bet = f.settled[1] ?? f.settled[0]!;
      const flood = body(FLOOD_QUERY, { chainId: bet.chainId, betId: bet.betId });
      const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
      const n = SPREAD_ADDRESSES.length;
      const spreadAddress = (i: number) => SPREAD_ADDRESSES[i % n]!;
      const sockets: RawSocketIo[] = [];
      await Promise.all([
        httpAttack(ctx, 0.15 * n, (i) => post(spreadAddress(i), bodies[i % bodies.length]!, agent)),
        httpAttack(ctx, 5 * n, (i) => post(spreadAddress(i), flood, agent)),
        socketAttack(
          ctx,
          50,
          spreadAddress,
          () => 10,
          async (socket) => {
            noteSubscribe(ctx, ackError(await socket.emitWithAck("bets:subscribe", { all: true })), "socket admitted, subscribed");
          },
        ).then((s) => sockets.push(...s)),
      ]);
      for (const s of sockets) s.close();
      return;
    }
  }
}

function emptyReport(kind: AttackKind): KindReport {
  return { kind, sent: 0, skipped: 0, outcomes: {}, served: 0, refused: 0, cut: 0, noAnswer: 0 };
}

/** The attacker child's main: attacks on command, reports, exits when told or when its parent goes. */
export async function attackerMain(config: AttackerConfig): Promise<void> {
  const lines = createInterface({ input: process.stdin });
  lines.on("close", () => process.exit(0));
  process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
  for await (const line of lines) {
    const command = JSON.parse(line) as { cmd: "attack"; seconds: number } | { cmd: "exit" };
    if (command.cmd === "exit") break;
    const cpuBefore = process.cpuUsage();
    const t0 = performance.now();
    const until = t0 + command.seconds * 1000;
    const contexts = config.kinds.map((kind): Ctx => ({ config, t0, stop: () => performance.now() >= until, report: emptyReport(kind), pending: new Set() }));
    // Answers still out are waited for (each has its own deadline: 15 s, or its hold time), but the
    // report goes out REPORT_GRACE_S after the attack whatever is still out: on a loaded machine a
    // late report must not lose the run. What is still out then is counted as no answer.
    const attacks = Promise.all(contexts.map((ctx) => runKind(ctx.report.kind, ctx))).then(() => Promise.all(contexts.flatMap((ctx) => [...ctx.pending])));
    await Promise.race([attacks, new Promise((resolve) => setTimeout(resolve, (command.seconds + REPORT_GRACE_S) * 1000))]);
    for (const ctx of contexts) {
      if (ctx.pending.size === 0) continue;
      ctx.report.noAnswer += ctx.pending.size;
      ctx.report.outcomes["still out at the report"] = ctx.pending.size;
    }
    const cpu = process.cpuUsage(cpuBefore);
    const report: AttackerReport = { kinds: contexts.map((c) => c.report), cpuMs: (cpu.user + cpu.system) / 1000, wallMs: performance.now() - t0 };
    process.stdout.write(`${JSON.stringify(report)}\n`);
  }
  process.exit(0);
}
