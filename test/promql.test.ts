import { describe, expect, it } from "vitest";
import { exposedMetricNames, promqlMetricNames } from "./promql.ts";

describe("promqlMetricNames", () => {
  it("finds the metrics and nothing else", () => {
    expect(
      promqlMetricNames(
        'histogram_quantile(0.99, sum by (service, le) (rate(graphql_request_duration_seconds_bucket{outcome="error", x=~"a|b"}[5m]))) > 1 and on (service) up == 0',
      ).sort(),
    ).toEqual(["graphql_request_duration_seconds_bucket", "up"]);
    expect(promqlMetricNames("min(realtime_redis_connected) == 0 or min(publisher_redis_connected) == 0").sort()).toEqual([
      "publisher_redis_connected",
      "realtime_redis_connected",
    ]);
    expect(promqlMetricNames("changes(indexer_head_block[10m]) == 0")).toEqual(["indexer_head_block"]);
  });
});

describe("exposedMetricNames", () => {
  it("reads sample names and declared metrics, not help text", () => {
    const names = exposedMetricNames(
      '# HELP a_total A b_total\n# TYPE a_total counter\na_total{service="x"} 1\nb_bucket{le="1"} 2\nc 3\n# TYPE d_seconds histogram\n',
    );
    expect([...names].sort()).toEqual(["a_total", "b_bucket", "c", "d_seconds_bucket", "d_seconds_count", "d_seconds_sum"]);
  });
});
