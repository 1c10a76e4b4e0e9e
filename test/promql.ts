// The metric names a PromQL expression reads, for checking alert rules and dashboards against a
// service's live /metrics. Enough PromQL for our own files: strings, label matchers, ranges and
// grouping clauses are removed, then every identifier that is not a function call or a keyword
// is a metric name.

const KEYWORDS = new Set(["and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring", "group_left", "group_right", "inf", "nan"]);

export function promqlMetricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, " ")
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, " ")
    .replace(/\[[^\]]*\]/g, " ");
  const names = new Set<string>();
  for (const [, name, call] of stripped.matchAll(/(?<![\w.])([A-Za-z_:][A-Za-z0-9_:]*)\s*(\()?/g)) {
    if (!call && !KEYWORDS.has(name!.toLowerCase())) names.add(name!);
  }
  return [...names];
}

const SERIES_OF_TYPE: Record<string, string[]> = { histogram: ["_bucket", "_sum", "_count"], summary: ["", "_sum", "_count"] };

/**
 * The series names a Prometheus text exposition offers: its samples (`name{labels} value`) and
 * the metrics it declares (`# TYPE name type`, a labelled counter before its first increment).
 */
export function exposedMetricNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const line of text.split("\n")) {
    const declared = /^# TYPE ([A-Za-z_:][A-Za-z0-9_:]*) (\w+)/.exec(line);
    if (declared) for (const suffix of SERIES_OF_TYPE[declared[2]!] ?? [""]) names.add(`${declared[1]}${suffix}`);
    const sample = /^([A-Za-z_:][A-Za-z0-9_:]*)[{ ]/.exec(line);
    if (sample) names.add(sample[1]!);
  }
  return names;
}
