// bench/capacity.ts, realtime part: two bin/realtime.ts nodes and a bin/publisher.ts on Redis
// (test/realtime.ts startCluster), measured from /proc: resident memory per idle subscribed socket,
// and node CPU per delivery while this process writes outbox rows (core/outbox.ts) that every
// firehose socket receives.
import { readFileSync } from "node:fs";
import type { Database } from "../core/db.ts";
import { Outbox } from "../core/outbox.ts";
import { isErrorResponse, REALTIME_PATH, type SubscribeRequest } from "../realtime/events.ts";
import { DEFAULT_FIREHOSE_LIMITS } from "../realtime/firehose.ts";
import { testUpdateRow, wallet } from "../test/outbox.ts";
import { connectClient, type Cluster, type TestClient } from "../test/realtime.ts";
import { log, processCpuMs } from "./common.ts";

export interface RealtimeFigures {
  idleSockets: number;
  addresses: number;
  rssBeforeMb: number;
  rssAfterMb: number;
  bytesPerSocket: number;
  firehoseSocketsPerNode: number;
  updatesWritten: number;
  deliveries: number;
  deliveriesPerNode: number[];
  cpuMsPerDeliveryPerNode: number[];
  /** Deliveries per second per node over the window from the first write to the last receipt (wall clock: load-sensitive). */
  wallDeliveriesPerSecondPerNode: number;
  lost: number;
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? Number.NaN) / 1024;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Opens `count` subscribed sockets to `url`, `perAddress` from each loopback address from 127.0.0.`firstAddress` on, in parallel batches. */
async function openSockets(
  url: string,
  count: number,
  perAddress: number,
  firstAddress: number,
  subscribe: (i: number) => SubscribeRequest,
): Promise<TestClient[]> {
  const clients: TestClient[] = [];
  const batch = 50;
  for (let first = 0; first < count; first += batch) {
    const opened = await Promise.all(
      Array.from({ length: Math.min(batch, count - first) }, async (_, k) => {
        const i = first + k;
        const client = await connectClient(url, REALTIME_PATH.dedicated, { localAddress: `127.0.0.${firstAddress + Math.floor(i / perAddress)}` });
        const state = await client.subscribe(subscribe(i));
        if (isErrorResponse(state)) throw new Error(`subscribe refused: ${JSON.stringify(state.error)}`);
        return client;
      }),
    );
    clients.push(...opened);
  }
  return clients;
}

export async function measureRealtime(
  cluster: Cluster,
  db: Database,
  options: { idleSockets: number; perAddress: number; firehosePerNode: number; rate: number; seconds: number; chainId: number },
): Promise<RealtimeFigures> {
  const [nodeA, nodeB] = cluster.nodes as [Cluster["nodes"][number], Cluster["nodes"][number]];
  const clients: TestClient[] = [];
  try {
    // 1. Bytes per idle subscribed socket on node A: RSS before and after, each after a quiet pause.
    await sleep(3_000);
    const rssBeforeMb = rssMb(nodeA.pid);
    clients.push(...(await openSockets(nodeA.url, options.idleSockets, options.perAddress, 2, (i) => ({ wallets: [wallet(100_000 + i)] }))));
    await sleep(5_000);
    const rssAfterMb = rssMb(nodeA.pid);
    const bytesPerSocket = ((rssAfterMb - rssBeforeMb) * 1024 * 1024) / options.idleSockets;
    log(`  realtime: ${options.idleSockets} idle sockets on node A: RSS ${rssBeforeMb.toFixed(1)} → ${rssAfterMb.toFixed(1)} MiB`);

    // 2. Deliveries: firehose sockets on both nodes, from addresses after the idle ones' (admission
    // counts sockets per address on each node and across the cluster, and firehose subscriptions
    // per address on a node: realtime/firehose.ts), updates written at a fixed rate.
    const firehose: TestClient[][] = [];
    const firehosePerAddress = Math.min(options.perAddress, DEFAULT_FIREHOSE_LIMITS.maxPerAddress);
    let nextAddress = 2 + Math.ceil(options.idleSockets / options.perAddress);
    for (const node of [nodeA, nodeB]) {
      const opened = await openSockets(node.url, options.firehosePerNode, firehosePerAddress, nextAddress, () => ({ all: true }));
      nextAddress += Math.ceil(options.firehosePerNode / firehosePerAddress);
      firehose.push(opened);
      clients.push(...opened);
    }
    if (nextAddress > 254) throw new Error("more sockets than 127.0.0.2–254 admit at this many per address");
    const outbox = new Outbox(db);
    const total = Math.round(options.rate * options.seconds);
    const cpu0 = [processCpuMs(nodeA.pid) ?? Number.NaN, processCpuMs(nodeB.pid) ?? Number.NaN];
    const t0 = performance.now();
    for (let i = 0; i < total; i++) {
      const due = t0 + (i * 1000) / options.rate;
      await sleep(Math.max(0, due - performance.now()));
      await outbox.append([testUpdateRow({ chainId: options.chainId, betId: String(3_000_000_000 + i), player: wallet(7), type: "PLACED" })]);
    }
    const expected = total * options.firehosePerNode;
    const received = () => firehose.map((group) => group.reduce((sum, c) => sum + c.updates.length, 0));
    const deadline = performance.now() + 60_000;
    while (received().some((r) => r < expected) && performance.now() < deadline) await sleep(100);
    const elapsedS = (performance.now() - t0) / 1000;
    const cpu1 = [processCpuMs(nodeA.pid) ?? Number.NaN, processCpuMs(nodeB.pid) ?? Number.NaN];
    const perNode = received();
    const deliveries = perNode.reduce((a, b) => a + b, 0);
    return {
      idleSockets: options.idleSockets,
      addresses: Math.ceil(options.idleSockets / options.perAddress),
      rssBeforeMb,
      rssAfterMb,
      bytesPerSocket,
      firehoseSocketsPerNode: options.firehosePerNode,
      updatesWritten: total,
      deliveries,
      deliveriesPerNode: perNode,
      cpuMsPerDeliveryPerNode: perNode.map((d, n) => (cpu1[n]! - cpu0[n]!) / Math.max(1, d)),
      wallDeliveriesPerSecondPerNode: deliveries / 2 / elapsedS,
      lost: 2 * expected - deliveries,
    };
  } finally {
    for (const client of clients) client.close();
  }
}
