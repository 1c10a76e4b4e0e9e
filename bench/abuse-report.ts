// The report of bench/abuse.ts: honest operations A vs B side by side with the issue's targets, the
// honest sockets against the outbox, each attacker's refusal, the servers' bounds sampled during
// the run, and the CPU of the servers and of the load generators. Returns whether every target passed.
import { readFileSync } from "node:fs";
import { type AttackerReport, ATTACKS, type AttackKind, type KindReport } from "./abuse-attacks.ts";
import type { HonestResult, SocketCheck } from "./abuse-honest.ts";
import { initialPoints } from "../bin/wiring.ts";
import { loadConfig } from "../core/config.ts";
import { log, table } from "./common.ts";

export interface Sample {
  phase: string;
  /** Reads waiting for a connection of the history subgraph's pool (the cheap lane's: the expensive lane holds only its own few). */
  poolWaiting: number;
  /** The same for the results subgraph (betResult, betResults). */
  resultsPoolWaiting: number;
  laneWaiting: number;
  realtimeRssMb: number;
  cacheUsed: number;
  cacheMax: number;
  /** The kernel's TCP buffer memory in pages (/proc/net/sockstat): the host's, every process's sockets. */
  tcpMemPages: number;
  /** Connections completed for the gateway's listening sockets that it has not accepted yet (/proc/net/tcp). */
  gatewayAcceptQueue: number;
  /** The same for the history and results subgraphs' sockets (the gateway's fetches ride new connections in a burst too). */
  historyAcceptQueue: number;
  resultsAcceptQueue: number;
}

type Scraped = Record<
  "slowReaderCuts" | "laneRefused" | "admissionRefusals" | "replayRefusals" | "replayStalled" | "firehoseRefusals" | "inFlightRefusals",
  number
>;

export interface ReportInput {
  bets: number;
  duration: number;
  honest: HonestResult[];
  sockets: SocketCheck[];
  samples: Sample[];
  attacks: AttackerReport[];
  attackGroups: AttackKind[][];
  attackStarted: number;
  metrics: { a: [Scraped, Scraped]; b: [Scraped, Scraped] };
  cpu: { a: [Record<string, number>, Record<string, number>]; b: [Record<string, number>, Record<string, number>]; seconds: number };
  selfCpuMs: { a: number; b: number };
  load: { a: number; b: number; now: number[] };
  /** Share of each phase during which some runnable task on the host waited for a CPU (/proc/pressure/cpu "some"). */
  cpuStall: { a: number; b: number };
  /** Connections the kernel dropped during each phase because a listening socket's accept queue was full (the host's; a client retries its SYN after 1 s, 3 s, 7 s …). */
  listenOverflows: { a: number; b: number };
  written: number;
  wallSeconds: number;
}

/** Within seconds: the issue's "refused with a clear error within seconds". */
const REFUSAL_WITHIN_MS = 10_000;
const CLEAR_CODES = ["RATE_LIMITED", "TOO_MANY_CONNECTIONS", "NODE_FULL", "SERVICE_BUSY", "SERVICE_UNAVAILABLE", "QUERY_TOO_COMPLEX"];
/** A refusal's code is clear when it names one of ours ("HTTP 429 TOO_MANY_CONNECTIONS" from the handshake backstop included). */
const isClear = (code: string | undefined) => CLEAR_CODES.some((clear) => code?.split(" ").includes(clear));
/**
 * What a new address's budget starts with in this run (RATE_LIMIT_POINTS_INITIAL, at most
 * RATE_LIMIT_POINTS; the servers inherit this process's environment): an attacker that never got
 * below half of it never pressed its limit.
 */
const BUDGET_POINTS = initialPoints(loadConfig(["shared"]));
const RSS_BOUND_MB = 1024;

/** A target's outcome: met, missed, or not measured (an attacker that got no answers was never tested by the limits). */
type Verdict = "PASS" | "FAIL" | "INCONCLUSIVE";
const verdict = (ok: boolean): Verdict => (ok ? "PASS" : "FAIL");

/**
 * A single-address attacker's verdict: refused in time with a clear code (PASS); refused late or
 * unclearly, or answered and never refused (FAIL: "not refused"); or never refused while most of
 * what it sent got no answer at all (INCONCLUSIVE: the limits were not reached, the machine or a
 * server was too slow to answer, which says nothing about the limits).
 */
export function attackerVerdict(k: Pick<KindReport, "sent" | "refused" | "noAnswer" | "firstRefusalMs" | "firstRefusalCode" | "minRemaining">): {
  verdict: Verdict;
  why: string;
} {
  if (k.firstRefusalMs !== undefined) {
    if (!isClear(k.firstRefusalCode)) return { verdict: "FAIL", why: `refused without a clear code (${k.firstRefusalCode})` };
    if (k.firstRefusalMs > REFUSAL_WITHIN_MS) return { verdict: "FAIL", why: `refused late (${(k.firstRefusalMs / 1000).toFixed(1)} s)` };
    return { verdict: "PASS", why: "refused" };
  }
  if (k.sent === 0 || k.noAnswer * 2 >= k.sent) return { verdict: "INCONCLUSIVE", why: `no answer to ${k.noAnswer} of ${k.sent}` };
  // Served, but slower than its budget refills: the servers, not the limit, held it back (its
  // effect on the honest clients is their rows' verdict).
  if (k.minRemaining !== undefined && k.minRemaining > BUDGET_POINTS / 2)
    return {
      verdict: "INCONCLUSIVE",
      why: `not refused, budget never pressed (least left ${k.minRemaining} of the ${BUDGET_POINTS} it started with): answered slower than the budget refills`,
    };
  return { verdict: "FAIL", why: "not refused" };
}
const pct = (n: number) => (Number.isFinite(n) ? `${(n * 100).toFixed(1)}%` : "—");
const ms = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : "—");

export function printReport(r: ReportInput): boolean {
  const verdicts: [string, Verdict][] = [];

  log();
  log(`HONEST OPERATIONS — A alone vs B beside every attacker (${r.duration} s each; latency from the request written to the last byte)`);
  const rows = r.honest.map((h) => {
    const bound = 2 * h.A.p99 + 20;
    const ok = h.B.p99 <= bound && h.A.errors === 0 && h.B.errors === 0;
    // Phase A has no attacker: when it already went unanswered, and every error of both phases is
    // an unanswered request (no 5xx, no refusal), the machine could not run the baseline.
    const unanswered = (kinds: Record<string, number>) => Object.keys(kinds).every((key) => key.startsWith("no response"));
    const baselineLost = h.A.errors > 0 && unanswered(h.A.errorKinds) && unanswered(h.B.errorKinds);
    verdicts.push([
      `${h.op}: B p99 ≤ 2 × A p99 + 20 ms, 0 errors${baselineLost ? " (A alone went unanswered: the machine)" : ""}`,
      ok ? "PASS" : baselineLost ? "INCONCLUSIVE" : "FAIL",
    ]);
    return [
      h.op,
      h.address,
      `${h.rate}/s`,
      String(h.A.n),
      ms(h.A.p50),
      ms(h.A.p99),
      String(h.A.errors),
      String(h.B.n),
      ms(h.B.p50),
      ms(h.B.p99),
      String(h.B.errors),
      `${ms(h.B.p99)} ≤ ${ms(bound)}`,
      verdict(ok),
    ];
  });
  log(
    table(["operation", "address", "rate", "A n", "A p50", "A p99", "A err", "B n", "B p50", "B p99", "B err", "B p99 ≤ 2×A p99 + 20 ms", ""], rows, [
      false,
      false,
      ...Array<boolean>(10).fill(true),
      false,
    ]),
  );
  // When the tail happened: a burst at the attack's start reads differently from a steady queue.
  for (const h of r.honest) {
    log(`  ${h.op} slowest in B: ${h.B.slowest.map((s) => `${s.ms.toFixed(0)} ms sent at +${s.atS.toFixed(1)} s`).join(", ")}`);
  }
  for (const h of r.honest) {
    const kinds = { ...h.A.errorKinds, ...h.B.errorKinds };
    if (Object.keys(kinds).length) log(`  ${h.op} errors: A ${JSON.stringify(h.A.errorKinds)} B ${JSON.stringify(h.B.errorKinds)}`);
  }

  log();
  log(`HONEST SOCKETS — deliveries vs the outbox (${r.written} updates written at a fixed rate during the run)`);
  log(
    table(
      ["socket", "address", "expected A / B / other", "missed A / B / other", "duplicated", "reconnects", "errors", ""],
      r.sockets.map((s) => {
        const missed = s.missed.A + s.missed.B + s.missed.other;
        const ok = missed === 0 && s.duplicated === 0 && s.refused === undefined;
        verdicts.push([s.refused === undefined ? `${s.name}: 0 updates missed or duplicated` : `${s.name}: refused (${s.refused})`, verdict(ok)]);
        return [
          s.name,
          s.address,
          `${s.expected.A} / ${s.expected.B} / ${s.expected.other}`,
          `${s.missed.A} / ${s.missed.B} / ${s.missed.other}`,
          String(s.duplicated),
          String(s.reconnects),
          String(s.errors),
          verdict(ok),
        ];
      }),
      [false, false, true, true, true, true, true, false],
    ),
  );

  log();
  log("ATTACKERS (phase B, all at once; first refusal = time from the attack's start to its first refused request or handshake)");
  const kinds = r.attacks.flatMap((a) => a.kinds);
  log(
    table(
      ["attacker", "address", "rate", "sent", "served", "refused", "cut", "no answer", "least budget left", "first refusal", "code", "outcomes", ""],
      kinds.map((k: KindReport) => {
        const a = ATTACKS[k.kind];
        const single = k.kind !== "spread";
        const judged = attackerVerdict(k);
        if (single) verdicts.push([`${k.kind}: refused within ${REFUSAL_WITHIN_MS / 1000} s with a clear code (${judged.why})`, judged.verdict]);
        return [
          k.kind,
          a.address,
          a.rate,
          String(k.sent),
          String(k.served),
          String(k.refused),
          String(k.cut),
          String(k.noAnswer),
          k.minRemaining === undefined ? "—" : String(k.minRemaining),
          k.firstRefusalMs === undefined ? "never" : `${(k.firstRefusalMs / 1000).toFixed(2)} s`,
          k.firstRefusalCode ?? "—",
          Object.entries(k.outcomes)
            .sort((x, y) => y[1] - x[1])
            .map(([key, n]) => `${key} ×${n}`)
            .join(", "),
          single ? `${judged.verdict}: ${judged.why}` : "(within budget)",
        ];
      }),
      [false, false, false, true, true, true, true, true, true, true, false, false, false],
    ),
  );
  for (const k of kinds)
    log(
      `  ${k.kind}: ${ATTACKS[k.kind].what}${k.admitted !== undefined ? `; sockets admitted ${k.admitted}` : ""}; not sent at the in-flight cap ${k.skipped}`,
    );

  log();
  log("SERVER BOUNDS (sampled every 250 ms)");
  const inPhase = (p: string) => r.samples.filter((s) => s.phase === p);
  const max = (xs: number[]) => (xs.length ? Math.max(...xs.filter(Number.isFinite)) : Number.NaN);
  const b = inPhase("B");
  const all = r.samples;
  const poolB = max(b.map((s) => s.poolWaiting));
  const resultsPoolB = max(b.map((s) => s.resultsPoolWaiting));
  const rssMax = max(all.map((s) => s.realtimeRssMb));
  const cacheMax = max(all.map((s) => s.cacheUsed));
  const cacheBound = max(all.map((s) => s.cacheMax));
  const boundRows: [string, string, string, boolean][] = [
    [
      "history db_pool_waiting, max during B (cheap lane never waits for a connection)",
      `${poolB} (A: ${max(inPhase("A").map((s) => s.poolWaiting))}; ${b.length} samples)`,
      "0",
      poolB === 0,
    ],
    [
      "results db_pool_waiting, max during B (betResult/betResults never wait for a connection)",
      `${resultsPoolB} (A: ${max(inPhase("A").map((s) => s.resultsPoolWaiting))})`,
      "0",
      resultsPoolB === 0,
    ],
    ["realtime node RSS, max over the run", `${ms(rssMax)} MiB`, `${RSS_BOUND_MB} MiB`, rssMax < RSS_BOUND_MB],
    ["cache Redis used_memory, max over the run", `${ms(cacheMax / 2 ** 20)} MiB`, `maxmemory ${ms(cacheBound / 2 ** 20)} MiB`, cacheMax <= cacheBound],
  ];
  for (const [name, , , ok] of boundRows) verdicts.push([name, verdict(ok)]);
  log(
    table(
      ["bound", "measured", "limit", ""],
      boundRows.map(([a, m, l, ok]) => [a, m, l, verdict(ok)]),
      [false, true, true, false],
    ),
  );
  const tcpPressure = (() => {
    try {
      return Number(readFileSync("/proc/sys/net/ipv4/tcp_mem", "utf8").trim().split(/\s+/)[1]);
    } catch {
      return Number.NaN;
    }
  })();
  log(
    `  kernel TCP buffer memory (all sockets of the host), max: A ${ms(max(inPhase("A").map((s) => s.tcpMemPages)) / 256)} MiB, B ${ms(max(b.map((s) => s.tcpMemPages)) / 256)} MiB, ` +
      `drain ${ms(max(inPhase("drain").map((s) => s.tcpMemPages)) / 256)} MiB (tcp_mem pressure threshold ${ms(tcpPressure / 256)} MiB)`,
  );
  log(`  history expensive_lane_waiting max: A ${max(inPhase("A").map((s) => s.laneWaiting))}, B ${max(b.map((s) => s.laneWaiting))}`);
  log(
    `  gateway accept queue (connections completed, not yet accepted) max: A ${max(inPhase("A").map((s) => s.gatewayAcceptQueue))}, B ${max(b.map((s) => s.gatewayAcceptQueue))} — a request on a new connection waits there before the gateway reads it`,
  );
  log(
    `  subgraphs' accept queues max: history A ${max(inPhase("A").map((s) => s.historyAcceptQueue))}, B ${max(b.map((s) => s.historyAcceptQueue))}; ` +
      `results A ${max(inPhase("A").map((s) => s.resultsAcceptQueue))}, B ${max(b.map((s) => s.resultsAcceptQueue))} — a gateway fetch on a new connection waits there`,
  );
  const delta = (k: keyof Scraped, [x, y]: [Scraped, Scraped]) => y[k] - x[k];
  log(
    `  counters during A / B (+ drain): slow readers cut ${delta("slowReaderCuts", r.metrics.a)} / ${delta("slowReaderCuts", r.metrics.b)}, ` +
      `expensive lane refusals ${delta("laneRefused", r.metrics.a)} / ${delta("laneRefused", r.metrics.b)}, ` +
      `realtime admission refusals ${delta("admissionRefusals", r.metrics.a)} / ${delta("admissionRefusals", r.metrics.b)}, ` +
      `replay refusals ${delta("replayRefusals", r.metrics.a)} / ${delta("replayRefusals", r.metrics.b)}, ` +
      `stalled replays cut ${delta("replayStalled", r.metrics.a)} / ${delta("replayStalled", r.metrics.b)}, ` +
      `firehose subscribes refused ${delta("firehoseRefusals", r.metrics.a)} / ${delta("firehoseRefusals", r.metrics.b)}, ` +
      `gateway in-flight refusals ${delta("inFlightRefusals", r.metrics.a)} / ${delta("inFlightRefusals", r.metrics.b)}`,
  );

  log();
  log("CPU (share of one core over each phase; 2 cores shared with whatever else runs)");
  const share = (cpu: [Record<string, number>, Record<string, number>], name: string) => (cpu[1][name]! - cpu[0][name]!) / (r.cpu.seconds * 1000);
  const names = Object.keys(r.cpu.a[0]);
  log(
    table(
      ["process", "A", "B"],
      [
        ...names.map((name) => [name, pct(share(r.cpu.a, name)), pct(share(r.cpu.b, name))]),
        ["load generator: honest clients (this process)", pct(r.selfCpuMs.a / (r.cpu.seconds * 1000)), pct(r.selfCpuMs.b / (r.cpu.seconds * 1000))],
        ...r.attacks.map((a, i) => [
          `load generator: attackers ${r.attackGroups[i]!.join(", ")} (process.cpuUsage over ${(a.wallMs / 1000).toFixed(0)} s incl. held answers)`,
          "idle",
          pct(a.cpuMs / a.wallMs),
        ]),
      ],
      [false, true, true],
    ),
  );
  log(
    `CPU stall (PSI "some": share of the phase some runnable task of the host waited for a CPU): A ${pct(r.cpuStall.a)}, B ${pct(r.cpuStall.b)} — ` +
      "a server process then gets less than a core however much work it has queued",
  );
  log(
    `connections dropped at a full accept queue (TcpExt ListenOverflows, the host's): A ${r.listenOverflows.a}, B ${r.listenOverflows.b} — ` +
      "each one a client that waits a SYN retransmission (1 s, then 3 s, 7 s …) before it is even read",
  );
  log(`loadavg (1 min): end of A ${r.load.a.toFixed(1)}, end of B ${r.load.b.toFixed(1)}, now ${r.load.now.map((l) => l.toFixed(1)).join(" ")}`);

  log();
  log(`RESULTS — ${r.bets.toLocaleString("en-US")} bets; whole run ${r.wallSeconds.toFixed(0)} s`);
  for (const [name, v] of verdicts) log(`  ${v.padEnd(12)}  ${name}`);
  const count = (v: Verdict) => verdicts.filter(([, x]) => x === v).length;
  log(
    `${count("PASS")} of ${verdicts.length} targets passed, ${count("FAIL")} failed, ${count("INCONCLUSIVE")} inconclusive (no answers, even alone: not a verdict on the service; run again on a quieter machine)`,
  );
  return count("PASS") === verdicts.length;
}
