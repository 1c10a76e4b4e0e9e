// The capacity plan's model (docs/guides/operating.md, "Capacity plan"): the per-core figures it
// uses and the formulae that size a deployment from them. bench/capacity.ts measures the same
// figures through the real topology and prints them beside these; the doc's tables are this
// file's `sizeDeployment` at the request and socket rates it names.

/** The figures the model uses (docs/guides/operating.md). Change them together with the doc. */
export const MODEL = {
  /** Gateway CPU per request of the mix, every answer computed (response cache off or missing). */
  gatewayCpuMsMiss: 2.8,
  /** Gateway CPU per request of the mix answered from the response cache. */
  gatewayCpuMsHit: 0.45,
  /** All three subgraphs' CPU per gateway request of the mix that misses the cache (hits cost them nothing). */
  subgraphCpuMsMiss: 3.2,
  /** PostgreSQL CPU per gateway request that misses the cache. */
  postgresCpuMsMiss: 0.75,
  /** Realtime node CPU per delivered update (one socket, one update). */
  realtimeCpuMsPerDelivery: 0.025,
  /** Resident memory per idle subscribed socket on a realtime node. */
  bytesPerSocket: 32 * 1024,
  /** Redis memory per cached answer of the mix (key, value, overhead). */
  redisBytesPerCachedAnswer: 64 * 1024,
  /** Redis memory per client address with a points bucket. */
  redisBytesPerLimiterKey: 128,
  /** The most a streaming replica may trail the primary under the indexer's write load. */
  replicaReplayLagMsMax: 1_000,
} as const;

/** Relative tolerance within which a measured CPU or memory figure "matches" the model's. */
export const TOLERANCE = 0.35;

/** Planning assumptions (stated in the doc). */
export const ASSUMPTIONS = {
  /** Busy share of a core the plan allows a process: the rest is headroom for spikes and failover. */
  utilisation: 0.5,
  /** Share of requests answered from the response cache. */
  cacheHitRatio: 0.5,
  /** Updates each socket receives per second on average (wallet and bet subscribers get few; firehoses many). */
  deliveriesPerSocketPerSecond: 0.2,
  /** Sockets a realtime node is allowed (REALTIME_MAX_SOCKETS, default 10 000). */
  socketsPerNode: 10_000,
  /** Node's own resident memory before sockets, MiB. */
  realtimeBaseMb: 150,
  /** Cached answers worth keeping (the cache Redis's maxmemory is sized for these). */
  cachedAnswersPerThousandRps: 10_000,
  /** Distinct client addresses with a points bucket per request per second. */
  addressesPerRps: 10,
  /** Cores of one PostgreSQL server (primary or replica). */
  postgresCores: 16,
  /**
   * DATABASE_POOL_SIZE of a subgraph as the plan sets it (compose: 10; a subgraph at half a core
   * keeps under one statement in flight on average, so 3 leaves room for bursts), and the
   * connections each other process holds (operating.md's connection budget).
   */
  connections: { subgraph: 3, gateway: 4, realtime: 5, publisher: 4, indexer: 5 },
} as const;

export interface Figures {
  gatewayCpuMsMiss: number;
  gatewayCpuMsHit: number;
  subgraphCpuMsMiss: number;
  postgresCpuMsMiss: number;
  realtimeCpuMsPerDelivery: number;
  bytesPerSocket: number;
  redisBytesPerCachedAnswer: number;
  redisBytesPerLimiterKey: number;
}

export interface Sizing {
  rps: number;
  sockets: number;
  gateways: number;
  subgraphProcesses: number;
  realtimeNodes: number;
  postgresCores: number;
  replicas: number;
  redisCacheMb: number;
  redisLimiterMb: number;
  /** Connections to the primary: every process's pool and dedicated connections (the subgraphs' head check only, with replicas). */
  primaryConnections: number;
  /** Connections to each replica: every subgraph's pool and its check connection. */
  replicaConnections: number;
}

/**
 * Processes are single-threaded: one core each at `utilisation`. Gateways see every request;
 * subgraphs and PostgreSQL only the misses. Realtime nodes are bounded by sockets (the node's cap
 * and its memory bound) and by deliveries. At least two of each serving process (failover).
 */
export function sizeDeployment(f: Figures, rps: number, sockets: number): Sizing {
  const a = ASSUMPTIONS;
  const coresFor = (cpuMsPerSecond: number) => cpuMsPerSecond / 1000 / a.utilisation;
  const atLeastTwo = (n: number) => Math.max(2, Math.ceil(n));
  const hit = a.cacheHitRatio;
  const gateways = atLeastTwo(coresFor(rps * (hit * f.gatewayCpuMsHit + (1 - hit) * f.gatewayCpuMsMiss)));
  const subgraphProcesses = Math.max(3, Math.ceil(coresFor(rps * (1 - hit) * f.subgraphCpuMsMiss)));
  const postgresCores = coresFor(rps * (1 - hit) * f.postgresCpuMsMiss);
  // The primary keeps the writes; reads go to replicas once one server's cores are not enough.
  const replicas = postgresCores <= a.postgresCores / 2 ? 0 : Math.max(2, Math.ceil(postgresCores / a.postgresCores));
  const socketsByMemory = Math.floor(((768 - a.realtimeBaseMb) * 1024 * 1024) / f.bytesPerSocket);
  const perNode = Math.min(a.socketsPerNode, socketsByMemory);
  const byDeliveries = coresFor(sockets * a.deliveriesPerSocketPerSecond * f.realtimeCpuMsPerDelivery);
  const realtimeNodes = atLeastTwo(Math.max(sockets / perNode, byDeliveries));
  const redisCacheMb = ((rps / 1000) * a.cachedAnswersPerThousandRps * f.redisBytesPerCachedAnswer) / 1024 / 1024;
  const redisLimiterMb = (rps * a.addressesPerRps * f.redisBytesPerLimiterKey) / 1024 / 1024;
  const c = a.connections;
  const others = gateways * c.gateway + realtimeNodes * c.realtime + 2 * c.publisher + c.indexer;
  // With replicas a subgraph still keeps its pool on the primary (reads fall back to it when no
  // replica may serve, and a pool keeps what it opened), plus its head check.
  const primaryConnections = others + subgraphProcesses * (replicas > 0 ? c.subgraph + 1 : c.subgraph);
  const replicaConnections = replicas > 0 ? subgraphProcesses * (c.subgraph + 1) : 0;
  return {
    rps,
    sockets,
    gateways,
    subgraphProcesses,
    realtimeNodes,
    postgresCores,
    replicas,
    redisCacheMb,
    redisLimiterMb,
    primaryConnections,
    replicaConnections,
  };
}
