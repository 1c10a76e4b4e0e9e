// What a `sinceSeq` replay costs the realtime node in CPU, per replayed update, and where it goes.
//
//   node --max-semi-space-size=32 --import ./bin/typescript.mjs bench/replay-cost.ts \
//        [--updates 40000] [--runs 3] [--profile [--top 20]]
//
// Loopback only. Creates a PostgreSQL database from the test template on BENCH_DATABASE_URL's
// server (dropped at the end), writes `--updates` outbox rows (half PLACED, half SETTLED with their
// proof, as test/outbox.ts fakes them), starts one realtime node in this process (in-memory
// fan-out, replay pages of REPLAY_PAGE_UPDATES, no budget) and one client in a child process: a bare `ws` WebSocket speaking
// Engine.IO 4 / Socket.IO 5 that reads every frame and counts the `bets:update`s (so the client's
// own CPU is not the node's). Each run replays the whole outbox to it (`{ all: true, sinceSeq: 0 }`)
// and prints the node's CPU (process.cpuUsage over the replay, user + system) per replayed update.
// `--profile` samples the node's JS during one more replay (node:inspector) and splits its time by
// where each sample was: the innermost frame of a known component, node's own frames counted to
// the component that called them (a socket write from `ws` is `ws`). What it measured is the
// price of a replay page (bin/wiring.ts replayBudget, docs/reference/limits.md#rate-limit).
import { fork } from "node:child_process";
import http from "node:http";
import { Session } from "node:inspector/promises";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import WebSocket from "ws";
import { openDatabase } from "../core/db.ts";
import { silentLogger } from "../core/logger.ts";
import { Outbox } from "../core/outbox.ts";
import { REPLAY_PAGE_UPDATES } from "../realtime/connection.ts";
import { createMemoryFanout } from "../realtime/fanout.ts";
import { createRealtime } from "../realtime/server.ts";
import { createPostgresDatabaseFromTemplate, databaseUrl, dropPostgresDatabase } from "../test/db.ts";
import { TYPESCRIPT_FLAGS } from "../test/spawn.ts";
import { createNetworks, testUpdateRow, wallet } from "../test/outbox.ts";
import { benchConfig, log, median } from "./common.ts";

const PATH = "/ws";
const UPDATE_EVENT = Buffer.from('["bets:update"');

type ToClient = { type: "replay"; url: string };
type FromClient = { type: "replayed"; updates: number; bytes: number };

/** The child: one WebSocket per replay, reads everything, reports once the resume is acknowledged. */
function runClient(): void {
  process.on("message", (message: ToClient) => {
    const ws = new WebSocket(`${message.url.replace(/^http/, "ws")}${PATH}/?EIO=4&transport=websocket`, { perMessageDeflate: false });
    let updates = 0;
    let bytes = 0;
    ws.on("message", (data: Buffer) => {
      bytes += data.length;
      // Engine.IO: 0 open, 2 ping, 4 message; Socket.IO inside: 0 connect, 2 event, 3 ack.
      if (data[0] === 0x34 && data[1] === 0x32) {
        if (data.indexOf(UPDATE_EVENT) === 2) updates++;
        return;
      }
      const text = data.toString();
      if (text === "2") ws.send("3");
      else if (text.startsWith("0")) ws.send("40");
      else if (text.startsWith("40")) ws.send(`420${JSON.stringify(["bets:subscribe", { all: true, sinceSeq: "0" }])}`);
      else if (text.startsWith("430")) {
        if (text.includes('"error"')) throw new Error(text);
        process.send!({ type: "replayed", updates, bytes } satisfies FromClient);
        ws.close();
      }
    });
  });
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

/** Which component a frame belongs to (undefined: node's own or unknown, counted to its caller). */
function componentOf(frame: ProfileNode["callFrame"]): string | undefined {
  const { url, functionName } = frame;
  if (functionName === "(garbage collector)") return "garbage collection";
  if (functionName === "(program)" || functionName === "(idle)") return functionName;
  // The package is the one after the last node_modules/ (engine.io carries its own ws).
  const pkg = /.*node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1];
  const packages: [RegExp, string][] = [
    [/^(pg|pg-protocol|pg-types|pg-pool|postgres-.*)$/, "outbox read (pg driver)"],
    [/^(@prisma\/.*|prisma)$/, "outbox read (Prisma)"],
    [/^socket\.io-parser$/, "socket.io-parser (encode)"],
    [/^socket\.io-adapter$/, "socket.io-adapter"],
    [/^socket\.io$/, "socket.io (emit)"],
    [/^engine\.io-parser$/, "engine.io-parser"],
    [/^engine\.io$/, "engine.io"],
    [/^ws$/, "ws (frames, socket writes)"],
  ];
  if (pkg) return packages.find(([pattern]) => pattern.test(pkg))?.[1] ?? `other library (${pkg})`;
  const rules: [RegExp, string][] = [
    [/\/realtime\/depth\.ts|\/core\/finality\.ts/, "DeliveryDepth"],
    // Its coalesceWrites uncorks the TCP socket: the writev of a flush's frames counts here.
    [/\/realtime\/backpressure\.ts/, "backpressure.ts (uncork: the writev; queue checks)"],
    [/\/realtime\/connection\.ts/, "replay loop (connection.ts)"],
    [/\/core\/outbox\.ts|\/core\/db\.ts|\/core\/sql\.ts/, "outbox read (core)"],
  ];
  for (const [pattern, name] of rules) if (pattern.test(url)) return name;
  if (url.startsWith("file:") || url.startsWith("/")) return "other project code";
  return undefined;
}

/** Share of samples per component; each sample goes to its innermost frame that has one. */
function splitProfile(profile: { nodes: ProfileNode[]; samples?: number[] }): { counts: Map<string, number>; leaves: Map<string, number> } {
  const parent = new Map<number, ProfileNode>();
  const byId = new Map<number, ProfileNode>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parent.set(child, node);
  }
  const counts = new Map<string, number>();
  const leaves = new Map<string, number>();
  for (const id of profile.samples ?? []) {
    let node = byId.get(id);
    if (node) {
      const { functionName, url, lineNumber } = node.callFrame;
      const leaf = `${functionName || "(anonymous)"} ${url.replace(/.*node_modules\//, "").replace(/.*\/wt\/[^/]+\//, "")}:${lineNumber + 1}`;
      leaves.set(leaf, (leaves.get(leaf) ?? 0) + 1);
    }
    let component = node && componentOf(node.callFrame);
    while (node && !component) {
      node = parent.get(node.id);
      component = node && componentOf(node.callFrame);
    }
    const name = component ?? "node internals (no caller known)";
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return { counts, leaves };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      updates: { type: "string", default: "40000" },
      runs: { type: "string", default: "3" },
      profile: { type: "boolean" },
      top: { type: "string", default: "0" },
    },
  });
  const top = Number(values.top);
  const total = Number(values.updates);
  const runs = Number(values.runs);
  const server = benchConfig.BENCH_DATABASE_URL;
  process.env.TEST_DATABASE_URL = server;
  const name = await createPostgresDatabaseFromTemplate();
  const db = await openDatabase({ url: databaseUrl(name, server) });
  const child = fork(fileURLToPath(import.meta.url), ["--client"], { execArgv: [...TYPESCRIPT_FLAGS], stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const httpServer = http.createServer();
  try {
    await createNetworks(db, [1]);
    const outbox = new Outbox(db);
    for (let first = 0; first < total; first += 1_000) {
      const rows = Array.from({ length: Math.min(1_000, total - first) }, (_, i) => {
        const n = first + i;
        return testUpdateRow({ chainId: 1, betId: String(1 + Math.floor(n / 2)), player: wallet(n % 50), type: n % 2 === 0 ? "PLACED" : "SETTLED" });
      });
      await outbox.append(rows);
    }
    const realtime = await createRealtime(httpServer, { db, logger: silentLogger(), fanout: createMemoryFanout(), path: PATH, transports: ["websocket"] });
    await new Promise<void>((resolve) => httpServer.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(httpServer.address() as { port: number }).port}`;

    const replay = async () => {
      const replayed = new Promise<FromClient>((resolve) => child.once("message", resolve));
      const cpu = process.cpuUsage();
      const wall = performance.now();
      child.send({ type: "replay", url } satisfies ToClient);
      const result = await replayed;
      const used = process.cpuUsage(cpu);
      if (result.updates !== total) throw new Error(`replayed ${result.updates} of ${total} updates`);
      return { cpuUs: used.user + used.system, wallMs: performance.now() - wall, bytes: result.bytes };
    };

    log(`replay of ${total} updates to one reading socket (pages of ${REPLAY_PAGE_UPDATES}), node CPU:`);
    await replay(); // warm-up: JIT, the networks' heads, the pool's connections
    const perUpdate: number[] = [];
    for (let run = 0; run < runs; run++) {
      const { cpuUs, wallMs, bytes } = await replay();
      perUpdate.push(cpuUs / total);
      log(
        `  run ${run + 1}: ${(cpuUs / 1000).toFixed(0)} ms CPU, ${wallMs.toFixed(0)} ms wall, ${(cpuUs / total).toFixed(1)} µs/update, ${(bytes / total).toFixed(0)} B/update`,
      );
    }
    log(`median: ${median(perUpdate).toFixed(1)} µs CPU per replayed update`);

    if (values.profile) {
      const session = new Session();
      session.connect();
      await session.post("Profiler.enable");
      await session.post("Profiler.setSamplingInterval", { interval: 100 });
      await session.post("Profiler.start");
      const { cpuUs } = await replay();
      const { profile } = await session.post("Profiler.stop");
      session.disconnect();
      const { counts, leaves } = splitProfile(profile as unknown as { nodes: ProfileNode[]; samples?: number[] });
      const samples = [...counts.values()].reduce((a, b) => a + b, 0);
      // Idle samples are the wall time the node waited (on the client, on the database): not CPU.
      const busy = samples - (counts.get("(idle)") ?? 0);
      log(`profile (${(cpuUs / total).toFixed(1)} µs/update under the profiler; shares of the busy samples, µs/update at the median above):`);
      for (const [component, count] of [...counts].sort((a, b) => b[1] - a[1])) {
        if (component === "(idle)") continue;
        log(`  ${component.padEnd(44)} ${((100 * count) / busy).toFixed(1).padStart(5)} %  ${((median(perUpdate) * count) / busy).toFixed(1).padStart(6)} µs`);
      }
      if (top > 0) log(`the ${top} functions with the most self time:`);
      for (const [leaf, count] of [...leaves].sort((a, b) => b[1] - a[1]).slice(0, top)) {
        if (leaf.startsWith("(idle)")) continue;
        log(`  ${((100 * count) / busy).toFixed(1).padStart(5)} %  ${leaf}`);
      }
    }
    await realtime.close();
  } finally {
    child.kill();
    await new Promise((resolve) => httpServer.close(resolve));
    await db.close();
    await dropPostgresDatabase(name, server);
  }
}

if (process.argv.includes("--client")) runClient();
else await main();
