// Where an honest request's time goes in bench/abuse.ts (issue 21's honest tail): each honest answer
// joined by its X-Request-Id with nginx's access-log line (time in nginx, the upstream's connect,
// headers and last byte), and the servers' own latency histograms and event-loop delay per phase
// (Prometheus text scraped at each phase's start and end).
import type { AccessLogLine } from "../test/nginx.ts";
import { percentile } from "./abuse-clients.ts";

/** The sum of an upstream timing nginx logs ("0.004", "0.001, 0.003" when retried, "-" when none), in ms. */
const upstreamMs = (value: string): number =>
  value
    .split(/,\s*|\s*:\s*/)
    .map((v) => Number(v))
    .filter((v) => Number.isFinite(v))
    .reduce((sum, v) => sum + v * 1000, 0);

const f = (ms: number) => (Number.isFinite(ms) ? ms.toFixed(ms < 10 ? 1 : 0) : "—");

/**
 * Per honest operation: p50/p99 of each leg, then the mean split of its slowest 5 % (client −
 * nginx: before nginx read the request or after it wrote the answer; nginx before the upstream;
 * connecting to the gateway; the gateway to its headers; the body).
 */
export function honestBreakdown(phase: string, answers: { op: string; requestId: string; ms: number }[], access: AccessLogLine[]): string[] {
  const byId = new Map(access.map((line) => [line.requestId, line]));
  const lines = [`phase ${phase}: honest answers joined with nginx's log (ms; p50 / p99; then the mean split of the slowest 5 %)`];
  for (const op of [...new Set(answers.map((a) => a.op))]) {
    const rows = answers
      .filter((a) => a.op === op)
      .flatMap((a) => {
        const l = byId.get(a.requestId);
        if (!l) return [];
        const nginx = l.seconds * 1000;
        const connect = upstreamMs(l.upstreamConnect);
        const header = upstreamMs(l.upstreamHeader);
        const upstream = upstreamMs(l.upstreamSeconds);
        return [
          { client: a.ms, outside: a.ms - nginx, before: nginx - upstream, connect, gateway: header - connect, body: upstream - header, fresh: connect > 0 },
        ];
      });
    if (rows.length === 0) continue;
    const legs = ["client", "outside", "before", "connect", "gateway", "body"] as const;
    const pct = (leg: (typeof legs)[number], p: number) =>
      percentile(
        rows.map((r) => r[leg]).sort((a, b) => a - b),
        p,
      );
    const slow = [...rows].sort((a, b) => b.client - a.client).slice(0, Math.max(1, Math.ceil(rows.length * 0.05)));
    const mean = (leg: (typeof legs)[number]) => slow.reduce((s, r) => s + r[leg], 0) / slow.length;
    lines.push(
      `  ${op.padEnd(11)} n ${String(rows.length).padStart(3)}, new upstream connections ${rows.filter((r) => r.fresh).length}: ` +
        legs.map((leg) => `${leg} ${f(pct(leg, 50))}/${f(pct(leg, 99))}`).join(", "),
    );
    lines.push(
      `  ${"".padEnd(11)} slowest ${slow.length} (client ${f(mean("client"))}): outside nginx ${f(mean("outside"))}, nginx before upstream ${f(mean("before"))}, ` +
        `connect ${f(mean("connect"))}, gateway to headers ${f(mean("gateway"))}, body ${f(mean("body"))}; new connections ${slow.filter((r) => r.fresh).length}`,
    );
  }
  return lines;
}

/** A histogram's buckets (le → cumulative count) for the series whose labels contain `labels`, summed. */
function buckets(text: string, metric: string, labels: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const m of text.matchAll(new RegExp(`^${metric}_bucket\\{([^}]*)\\} ([0-9.e+-]+)$`, "gm"))) {
    const labelText = m[1]!;
    if (!labelText.includes(labels)) continue;
    const le = /le="([^"]+)"/.exec(labelText)?.[1];
    const bound = le === "+Inf" ? Number.POSITIVE_INFINITY : Number(le);
    out.set(bound, (out.get(bound) ?? 0) + Number(m[2]));
  }
  return out;
}

/** `metric`'s count and the bucket bounds holding its p50 and p99 between two scrapes (ms). */
export function histogramBetween(before: string, after: string, metric: string, labels: string): string {
  const a = buckets(before, metric, labels);
  const b = buckets(after, metric, labels);
  const bounds = [...b.keys()].sort((x, y) => x - y);
  const diff = bounds.map((le) => ({ le, n: (b.get(le) ?? 0) - (a.get(le) ?? 0) }));
  const count = diff.at(-1)?.n ?? 0;
  if (count <= 0) return "none";
  const at = (q: number) => diff.find((d) => d.n >= q * count)?.le ?? Number.POSITIVE_INFINITY;
  const ms = (le: number) => (Number.isFinite(le) ? `≤${le * 1000}` : `>${(bounds.at(-2) ?? 0) * 1000}`);
  return `n ${count}, p50 ${ms(at(0.5))}, p99 ${ms(at(0.99))}`;
}

/** A gauge's value in a scrape (the first series), or NaN. */
export function gauge(text: string, metric: string): number {
  const m = new RegExp(`^${metric}(?:\\{[^}]*\\})? ([0-9.e+-]+)$`, "m").exec(text);
  return m ? Number(m[1]) : Number.NaN;
}

/** Each server's event-loop delay over a phase (prom-client resets it at each scrape: the phase's end scrape holds it), in ms. */
export function loopDelay(text: string): string {
  const p = (name: string) => f(gauge(text, name) * 1000);
  return `p50 ${p("nodejs_eventloop_lag_p50_seconds")}, p99 ${p("nodejs_eventloop_lag_p99_seconds")}, max ${p("nodejs_eventloop_lag_max_seconds")}`;
}

/** Who a loopback client address is in bench/abuse.ts (abuse-honest.ts, abuse-attacks.ts). */
function clientClass(address: string): string {
  const last = Number(address.split(".").at(-1));
  if (last >= 2 && last <= 8) return "honest";
  if (last >= 100 && last <= 149) return "spread";
  const names: Record<number, string> = { 11: "aggregates", 12: "replays", 13: "sockets", 14: "churn", 15: "repeated", 16: "csv", 17: "slow", 18: "flood" };
  return names[last] ?? address;
}

/**
 * Requests that reached an upstream (gateway or realtime node), by client, per wall-clock second
 * from B's start: what arrives behind nginx in the attack's first seconds (nginx logs each request
 * when it ends, in whole seconds, so a held answer counts in the second it ended).
 */
export function arrivals(access: AccessLogLine[], start: Date, seconds: number): string[] {
  const from = Math.floor(start.getTime() / 1000);
  const counts = new Map<string, number[]>();
  for (const line of access) {
    if (!line.upstream || line.upstream === "-") continue;
    const at = Math.floor(Date.parse(line.time) / 1000) - from;
    if (at < 0 || at >= seconds) continue;
    const who = `${clientClass(line.client)} ${line.uri.startsWith("/socket.io") ? "socket" : "http"}`;
    const row = counts.get(who) ?? Array.from({ length: seconds }, () => 0);
    row[at]!++;
    counts.set(who, row);
  }
  const lines = [
    `requests that reached an upstream, ended per wall-clock second from B's start (second 0 is partial): ${Array.from({ length: seconds }, (_, i) => `+${i}`).join(" ")}`,
  ];
  for (const [who, row] of [...counts].sort((a, b) => b[1].reduce((s, n) => s + n, 0) - a[1].reduce((s, n) => s + n, 0)))
    lines.push(`  ${who.padEnd(18)} ${row.map((n) => String(n).padStart(5)).join(" ")}`);
  return lines;
}
