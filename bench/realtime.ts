// Realtime fan-out benchmark: latency from outbox commit to client receipt, and exactly-once.
//
//   npx tsx bench/realtime.ts [--clients 2000] [--rates 5,10,20] [--seconds 12] [--workers 2]
//                             [--client raw|socket.io]
//
// Loopback only. Creates a PostgreSQL database from the test template on BENCH_DATABASE_URL's
// server (default TEST_DATABASE_URL, else postgresql://postgres@127.0.0.1:5432/postgres; dropped at
// the end) and uses Redis at BENCH_REDIS_URL (default redis://127.0.0.1:6379) under a random prefix.
// Starts two realtime nodes and one publisher as separate processes, and `--workers` client
// processes that open `--clients` WebSocket connections split over both nodes; each subscribes to
// the firehose and to its own wallet (so every update reaches every client exactly once). This
// process then writes outbox rows at each rate in turn (one transaction per update, through the
// outbox's one write path, core/outbox.ts, as the indexer writes), noting the time just before each
// write; clients note the time of receipt. Per rate it prints
// deliveries/s, p50/p99/max latency, and lost / duplicated (or out-of-order) deliveries.
// Every update goes to every client, so deliveries/s = rate × clients.
//
// Clients: `raw` (default) speaks the Engine.IO 4 / Socket.IO 5 protocol over a bare `ws` WebSocket
// and reads only `seq` out of each frame; `socket.io` uses socket.io-client, which JSON-parses every
// payload. On a 2-core machine the client processes compete with the servers for CPU, so the raw
// client measures the realtime tier rather than the load generator; both are real WebSocket clients
// of the same server.
import { fork, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { cpus, loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { io as ioClient, type Socket } from "socket.io-client";
import WebSocket from "ws";
import { openDatabase, type Database } from "../core/db.ts";
import { Outbox } from "../core/outbox.ts";
import type { BetUpdatePayload, ClientToServerEvents, ServerToClientEvents } from "../realtime/events.ts";
import { TYPESCRIPT_FLAGS } from "../test/spawn.ts";
import { createNetworks, fakeBet, testUpdateRow, wallet } from "../test/outbox.ts";
import { startCluster, type Cluster } from "../test/realtime.ts";
import { createPostgresDatabaseFromTemplate, databaseUrl, dropPostgresDatabase } from "../test/db.ts";
import { benchConfig } from "./common.ts";

const TARGET = { deliveriesPerSecond: 20_000, p99Ms: 250 };
const HISTOGRAM_MS = 10_000; // 1 ms buckets; later is counted in the last bucket
const now = () => performance.timeOrigin + performance.now();
const UPDATE_EVENT = Buffer.from('["bets:update"');
const SEQ_KEY = Buffer.from('"seq":"');

// ---------------------------------------------------------------------------------------------
// IPC between this process and the client workers
// ---------------------------------------------------------------------------------------------

type ClientKind = "raw" | "socket.io";

type ToWorker =
  | { type: "connect"; urls: string[]; path: string; first: number; count: number; client: ClientKind }
  | { type: "collect"; commits: [number, number][] };

type FromWorker =
  | { type: "connected" }
  | { type: "result"; histogram: [number, number][]; deliveries: number; unique: number; duplicates: number; stray: number };

// ---------------------------------------------------------------------------------------------
// Client worker: opens connections, records (client, seq, time) of every delivery
// ---------------------------------------------------------------------------------------------

function runWorker(): void {
  const send = (message: FromWorker) => process.send!(message);
  const sockets: Socket<ServerToClientEvents, ClientToServerEvents>[] = [];
  const rawSockets: WebSocket[] = [];
  let lastSeq = new Float64Array(0);
  let duplicates = 0;
  let records = { client: new Uint32Array(1 << 20), seq: new Float64Array(1 << 20), time: new Float64Array(1 << 20), length: 0 };

  const record = (client: number, seqText: string) => {
    const time = now();
    const seq = Number(seqText);
    if (seq <= lastSeq[client]!) duplicates++;
    else lastSeq[client] = seq;
    if (records.length === records.seq.length) {
      const grow = <T extends Uint32Array | Float64Array>(a: T, make: (n: number) => T) => {
        const b = make(a.length * 2);
        b.set(a);
        return b;
      };
      records = {
        client: grow(records.client, (n) => new Uint32Array(n)),
        seq: grow(records.seq, (n) => new Float64Array(n)),
        time: grow(records.time, (n) => new Float64Array(n)),
        length: records.length,
      };
    }
    records.client[records.length] = client;
    records.seq[records.length] = seq;
    records.time[records.length] = time;
    records.length++;
  };

  const connect = async (message: Extract<ToWorker, { type: "connect" }>) => {
    lastSeq = new Float64Array(message.count);
    const openRaw = (i: number) => {
      const base = message.urls[(message.first + i) % message.urls.length]!.replace(/^http/, "ws");
      const ws = new WebSocket(`${base}${message.path}/?EIO=4&transport=websocket`, { perMessageDeflate: false });
      rawSockets[i] = ws;
      const request = JSON.stringify(["bets:subscribe", { all: true, wallets: [wallet(message.first + i)] }]);
      return new Promise<void>((resolve, reject) => {
        ws.on("error", reject);
        ws.on("message", (data: Buffer) => {
          // Engine.IO: 0 open, 2 ping, 4 message; Socket.IO inside: 0 connect, 2 event, 3 ack.
          if (data[0] === 0x34 && data[1] === 0x32) {
            if (data.indexOf(UPDATE_EVENT) !== 2) return;
            const at = data.indexOf(SEQ_KEY) + SEQ_KEY.length;
            let end = at;
            while (data[end] !== 0x22) end++;
            record(i, data.toString("latin1", at, end));
            return;
          }
          const text = data.toString();
          if (text === "2") ws.send("3");
          else if (text.startsWith("0")) ws.send("40");
          else if (text.startsWith("40")) ws.send(`420${request}`);
          else if (text.startsWith("430")) {
            if (text.includes('"error"')) reject(new Error(text));
            else resolve();
          }
        });
      });
    };
    const open = async (i: number) => {
      if (message.client === "raw") return openRaw(i);
      const url = message.urls[(message.first + i) % message.urls.length]!;
      const socket: Socket<ServerToClientEvents, ClientToServerEvents> = ioClient(url, {
        path: message.path,
        transports: ["websocket"],
        reconnection: false,
        forceNew: true,
      });
      sockets[i] = socket;
      socket.on("bets:update", (update: BetUpdatePayload) => record(i, update.seq));
      await new Promise<void>((resolve, reject) => {
        socket.once("connect", () => resolve());
        socket.once("connect_error", reject);
      });
      const state = await socket.timeout(30_000).emitWithAck("bets:subscribe", { all: true, wallets: [wallet(message.first + i)] });
      if ("error" in state) throw new Error(state.error.message);
    };
    for (let i = 0; i < message.count; i += 50) {
      await Promise.all(Array.from({ length: Math.min(50, message.count - i) }, (_, j) => open(i + j)));
    }
    send({ type: "connected" });
  };

  const collect = (commits: [number, number][]) => {
    const committedAt = new Map(commits);
    const histogram = new Map<number, number>();
    let unique = 0;
    let stray = 0;
    for (let r = 0; r < records.length; r++) {
      const at = committedAt.get(records.seq[r]!);
      if (at === undefined) {
        stray++;
        continue;
      }
      unique++;
      const bucket = Math.min(HISTOGRAM_MS, Math.max(0, Math.floor(records.time[r]! - at)));
      histogram.set(bucket, (histogram.get(bucket) ?? 0) + 1);
    }
    send({ type: "result", histogram: [...histogram], deliveries: records.length, unique: unique - duplicates, duplicates, stray });
    records.length = 0;
    duplicates = 0;
  };

  process.on("message", (message: ToWorker) => {
    if (message.type === "connect")
      connect(message).catch((error: unknown) => {
        console.error(error);
        process.exit(1);
      });
    else if (message.type === "collect") collect(message.commits);
  });
  process.on("disconnect", () => process.exit(0));
}

// ---------------------------------------------------------------------------------------------
// Driver
// ---------------------------------------------------------------------------------------------

interface Worker {
  child: ChildProcess;
  next(): Promise<FromWorker>;
}

function startWorker(): Worker {
  const child = fork(fileURLToPath(import.meta.url), ["--worker"], { execArgv: [...TYPESCRIPT_FLAGS], stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const inbox: FromWorker[] = [];
  const waiting: ((message: FromWorker) => void)[] = [];
  child.on("message", (message: FromWorker) => {
    const waiter = waiting.shift();
    if (waiter) waiter(message);
    else inbox.push(message);
  });
  return {
    child,
    next: () => {
      const queued = inbox.shift();
      return queued ? Promise.resolve(queued) : new Promise((resolve) => waiting.push(resolve));
    },
  };
}

function percentile(histogram: Map<number, number>, total: number, p: number): number {
  const rank = Math.ceil(total * p);
  let seen = 0;
  for (const bucket of [...histogram.keys()].sort((a, b) => a - b)) {
    seen += histogram.get(bucket)!;
    if (seen >= rank) return bucket + 1; // bucket b holds latencies in [b, b+1) ms
  }
  return Number.NaN;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      clients: { type: "string", default: "2000" },
      rates: { type: "string", default: "5,10,20" },
      seconds: { type: "string", default: "12" },
      workers: { type: "string", default: "2" },
      client: { type: "string", default: "raw" },
    },
  });
  const clients = Number(values.clients);
  const rates = values.rates.split(",").map(Number);
  const seconds = Number(values.seconds);
  const workerCount = Number(values.workers);
  if (values.client !== "raw" && values.client !== "socket.io") throw new Error("--client is raw or socket.io");
  const clientKind: ClientKind = values.client;
  const redisUrl = benchConfig.BENCH_REDIS_URL;
  const serverUrl = benchConfig.BENCH_DATABASE_URL;
  process.env.TEST_DATABASE_URL = serverUrl;
  const deadline = setTimeout(() => {
    console.error("benchmark exceeded 5 minutes: aborting");
    process.exit(2);
  }, 5 * 60_000);

  console.log(
    `realtime benchmark: ${clients} ${clientKind} clients (WebSocket) over 2 nodes + 1 publisher (Redis, PostgreSQL), ${workerCount} client processes`,
  );
  console.log(
    `machine: ${cpus().length} cores, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  );
  const name = await createPostgresDatabaseFromTemplate();
  const url = databaseUrl(name, serverUrl);
  let db: Database | undefined;
  let cluster: Cluster | undefined;
  const workers: Worker[] = [];
  try {
    db = await openDatabase({ url, poolSize: 2 });
    const outbox = new Outbox(db);
    await createNetworks(db, [1]);
    cluster = await startCluster({
      databaseUrl: url,
      redisUrl,
      prefix: `bets-bench:${randomBytes(6).toString("hex")}:`,
      nodes: 2,
      publishers: 1,
      // Every client of this benchmark is one loopback address, each a firehose: no per-address
      // allowance, and no bound on firehose subscriptions (what is measured is their delivery).
      env: {
        REALTIME_MAX_SOCKETS_PER_ADDRESS: "0",
        REALTIME_MAX_SOCKETS_PER_ADDRESS_CLUSTER: "0",
        REALTIME_MAX_FIREHOSE_SUBSCRIPTIONS: "0",
        REALTIME_MAX_FIREHOSE_PER_ADDRESS: "0",
      },
    });
    const urls = cluster.nodes.map((n) => n.url);

    let started = performance.now();
    const perWorker = Math.ceil(clients / workerCount);
    for (let w = 0; w < workerCount; w++) {
      const worker = startWorker();
      workers.push(worker);
      const count = Math.min(perWorker, clients - w * perWorker);
      worker.child.send({ type: "connect", urls, path: "/ws", first: w * perWorker, count, client: clientKind } satisfies ToWorker);
    }
    for (const worker of workers) {
      const reply = await worker.next();
      if (reply.type !== "connected") throw new Error("a client worker failed to connect");
    }
    console.log(`connected and subscribed ${clients} clients in ${((performance.now() - started) / 1000).toFixed(1)} s`);

    // A settled bet with calldata of a real proof's size (~1.3 KB), so payloads weigh what they will.
    const calldata = `0x${"ab".repeat(640)}`;
    let betId = 0;
    const insert = async (): Promise<[number, number]> => {
      betId++;
      const roll = betId % 10;
      const type = roll < 5 ? "PLACED" : roll < 9 ? "SETTLED" : "REFUNDED";
      const player = wallet(betId % clients);
      const bet = fakeBet({ chainId: 1, betId: String(betId), player, type });
      if (bet.result) bet.result.proof.solidityCalldata = calldata;
      const row = testUpdateRow({ chainId: 1, betId: String(betId), player, type }, bet);
      const at = now();
      const [seq] = await outbox.append([row]);
      return [Number(seq), at];
    };

    // Warm-up: JIT, connections, the publisher's first reads.
    for (let i = 0; i < 20; i++) await insert();
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    for (const worker of workers) worker.child.send({ type: "collect", commits: [] } satisfies ToWorker);
    for (const worker of workers) await worker.next();

    const results: string[] = [];
    let targetMet: boolean | undefined;
    for (const rate of rates) {
      const commits: [number, number][] = [];
      const total = Math.round(rate * seconds);
      started = performance.now();
      for (let i = 0; i < total; i++) {
        const due = started + (i * 1000) / rate;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        commits.push(await insert());
      }
      const elapsed = (performance.now() - started) / 1000;
      await new Promise((resolve) => setTimeout(resolve, 3_000)); // stragglers count; later ones are lost
      const histogram = new Map<number, number>();
      let deliveries = 0;
      let unique = 0;
      let duplicates = 0;
      for (const worker of workers) worker.child.send({ type: "collect", commits } satisfies ToWorker);
      for (const worker of workers) {
        const reply = await worker.next();
        if (reply.type !== "result") throw new Error("unexpected worker reply");
        for (const [bucket, count] of reply.histogram) histogram.set(bucket, (histogram.get(bucket) ?? 0) + count);
        deliveries += reply.deliveries;
        unique += reply.unique;
        duplicates += reply.duplicates;
      }
      const expected = total * clients;
      const lost = expected - unique;
      const p50 = percentile(histogram, unique + duplicates, 0.5);
      const p99 = percentile(histogram, unique + duplicates, 0.99);
      const max = Math.max(...histogram.keys()) + 1;
      const perSecond = deliveries / elapsed;
      const line = `${String(rate).padStart(5)} upd/s  ${Math.round(perSecond).toString().padStart(7)} deliveries/s  p50 ${String(p50).padStart(4)} ms  p99 ${String(p99).padStart(4)} ms  max ${String(max).padStart(5)} ms  lost ${lost}  duplicated ${duplicates}`;
      console.log(line);
      results.push(line);
      if (rate * clients >= TARGET.deliveriesPerSecond && targetMet === undefined) targetMet = p99 < TARGET.p99Ms && lost === 0 && duplicates === 0;
    }
    console.log(
      `target: p99 < ${TARGET.p99Ms} ms at ${TARGET.deliveriesPerSecond} deliveries/s, 0 lost, 0 duplicated → ${targetMet === undefined ? "not measured (rates too low)" : targetMet ? "met" : "NOT met"}`,
    );
  } finally {
    clearTimeout(deadline);
    for (const worker of workers) worker.child.kill();
    await cluster?.stop();
    await db?.close().catch(() => undefined);
    await dropPostgresDatabase(name);
  }
}

if (process.argv.includes("--worker")) runWorker();
else {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
