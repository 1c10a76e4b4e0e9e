// The part of autocannon's API the benchmarks use (the package ships no types).
declare module "autocannon" {
  import type { EventEmitter } from "node:events";

  export interface Options {
    url: string;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    /** Request templates cycled per connection; `setupRequest` may rewrite each request before it is sent. */
    requests?: { setupRequest?: (request: RequestParams) => RequestParams }[];
    connections?: number;
    /** Seconds. */
    duration?: number;
    pipelining?: number;
    /** Seconds before a request counts as timed out. */
    timeout?: number;
    /** Responses for which this returns false are counted in `mismatches`. */
    verifyBody?: (body: string) => boolean;
  }

  export interface RequestParams {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
  }

  export interface Stats {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    total: number;
    p50: number;
    p99: number;
  }

  export interface Result {
    requests: Stats;
    latency: Stats;
    throughput: Stats;
    errors: number;
    timeouts: number;
    mismatches: number;
    non2xx: number;
    resets: number;
    /** Seconds. */
    duration: number;
    "2xx": number;
    statusCodeStats: Record<string, { count: number }>;
  }

  /** Emits "response" (client, statusCode, bytes, responseTimeMs) for every response. */
  export interface Instance extends EventEmitter {
    stop(): void;
  }

  function autocannon(options: Options, callback: (error: Error | null, result: Result) => void): Instance;
  export default autocannon;
}
