// A pool of worker threads (zk/verify-worker.ts) that batch-verify Groth16 proofs for one key
// (zk/batch-verify.ts), so pairings run on every core and off the caller's event loop.
//
// verify(items) splits the items into one slice per worker (never below MIN_SLICE proofs: a batch
// pays three shared Miller loops and a final exponentiation whatever its size), verifies the
// slices in parallel and returns one verdict per item, in order. Fewer than MIN_SLICE items (a
// block followed at the head: ~3.5 ms of CPU per proof) and workers = 0 verify on the calling
// thread instead (same code, same verdicts). Workers start lazily, are unref'd while idle
// (an idle pool never keeps the process alive); a crashed worker is replaced on the next call and
// its slice verified on the calling thread.
//
// The worker is TypeScript (zk/verify-worker.ts and what it imports). The pool bundles it once per
// process with esbuild into one ES module (packages stay external, imported by absolute file URL)
// and starts each worker from that code: no TypeScript loader in the worker, which halves a
// worker's start (~0.45 s of CPU instead of ~0.9 s with tsx's hooks and their extra thread). If
// bundling fails, workers start from zk/verify-worker.mjs, which registers tsx's hooks.
import { fileURLToPath, pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import * as esbuild from "esbuild";
import { createBatchVerifier, type BatchItem, type BatchVerifier } from "./batch-verify.ts";
import type { Groth16VerificationKey } from "./proof-shape.ts";

export type { BatchItem };

export interface VerifyPool {
  /** One verdict per item, in order; false for malformed input (never rejects because of it). */
  verify(items: readonly BatchItem[]): Promise<boolean[]>;
  /**
   * Starts the workers now (a service starting, so their ~0.45 s boot each overlaps its other
   * start-up work instead of delaying the first proofs); resolves to how many are ready. Without
   * workers it builds this thread's verifier instead (0).
   */
  warm(): Promise<number>;
  /** Terminates the workers. Later verify() calls start new ones. */
  close(): Promise<void>;
}

/** Smallest slice worth its own batch (its fixed cost is ~3 Miller loops + 1 final exponentiation). */
const MIN_SLICE = 16;
const WORKER_URL = new URL("./verify-worker.mjs", import.meta.url);
const WORKER_TS = new URL("./verify-worker.ts", import.meta.url);

/** Packages imported by absolute file URL, so the bundle runs from a data: URL. */
const absolutePackages: esbuild.Plugin = {
  name: "absolute-packages",
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, async (args) => {
      if (args.pluginData === "inner" || args.path.startsWith("node:")) return undefined;
      const resolved = await build.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, pluginData: "inner" });
      if (resolved.errors.length > 0 || !resolved.path) return undefined;
      return { path: pathToFileURL(resolved.path).href, external: true };
    });
  },
};

let bundled: Promise<URL> | undefined;
/** The worker as one ES module (a data: URL), built once per process; zk/verify-worker.mjs if that fails. */
export function workerUrl(): Promise<URL> {
  bundled ??= esbuild
    .build({
      entryPoints: [fileURLToPath(WORKER_TS)],
      bundle: true,
      format: "esm",
      platform: "node",
      write: false,
      plugins: [absolutePackages],
      logLevel: "silent",
    })
    .then((out) => {
      const code = out.outputFiles[0]?.text;
      if (!code) throw new Error("empty bundle");
      return new URL(`data:text/javascript,${encodeURIComponent(code)}`);
    })
    .catch(() => WORKER_URL);
  return bundled;
}
/**
 * ffjavascript imports the `web-worker` package, which takes ANY worker thread for one of its own
 * and runs workerData.mod in it (logging an error when there is none): give it an empty script.
 */
const WEB_WORKER_NOOP = "data:text/javascript,";

interface Job {
  items: readonly BatchItem[];
  resolve: (verdicts: boolean[]) => void;
  reject: (error: Error) => void;
}

interface Slot {
  worker: Worker;
  ready: Promise<void>;
  busy: Job | undefined;
}

type Reply = { ready: true } | { id: number; verdicts: boolean[] } | { id: number; error: string };

export function createVerifyPool(key: Groth16VerificationKey, options: { workers: number }): VerifyPool {
  const size = Math.max(0, Math.floor(options.workers));
  let local: Promise<BatchVerifier> | undefined;
  let slots: Slot[] = [];
  const queue: Job[] = [];
  let nextId = 0;

  function spawn(url: URL): Slot {
    const worker = new Worker(url, { workerData: { key, mod: WEB_WORKER_NOOP } });
    worker.unref();
    let markReady: () => void = () => undefined;
    let failStart: (error: Error) => void = () => undefined;
    const ready = new Promise<void>((resolve, reject) => {
      markReady = resolve;
      failStart = reject;
    });
    const slot: Slot = { worker, ready, busy: undefined };
    slot.ready.catch(() => undefined);
    worker.on("message", (reply: Reply) => {
      if ("ready" in reply) return markReady();
      const job = slot.busy;
      slot.busy = undefined;
      worker.unref();
      if ("error" in reply) job?.reject(new Error(`proof verification worker failed: ${reply.error}`));
      else job?.resolve(reply.verdicts);
      dispatch();
    });
    const fail = (error: Error) => {
      failStart(error);
      slots = slots.filter((s) => s !== slot);
      slot.busy?.reject(error);
      slot.busy = undefined;
      void worker.terminate();
    };
    worker.on("error", fail);
    worker.on("exit", (code) => fail(new Error(`proof verification worker exited (code ${code})`)));
    return slot;
  }

  function dispatch(): void {
    for (const slot of slots) {
      if (slot.busy) continue;
      const job = queue.shift();
      if (!job) return;
      slot.busy = job;
      slot.worker.ref();
      slot.ready.then(
        () => slot.worker.postMessage({ id: nextId++, items: job.items }),
        (error: Error) => job.reject(error),
      );
    }
  }

  async function here(items: readonly BatchItem[]): Promise<boolean[]> {
    local ??= createBatchVerifier(key);
    return (await local).verify(items);
  }

  async function run(items: readonly BatchItem[]): Promise<boolean[]> {
    const url = await workerUrl();
    return new Promise<boolean[]>((resolve, reject) => {
      queue.push({ items, resolve, reject });
      while (slots.length < size) slots.push(spawn(url));
      dispatch();
    });
  }

  return {
    async warm() {
      if (size === 0) {
        local ??= createBatchVerifier(key);
        await local;
        return 0;
      }
      const url = await workerUrl();
      while (slots.length < size) slots.push(spawn(url));
      const started = await Promise.allSettled(slots.map((s) => s.ready));
      return started.filter((s) => s.status === "fulfilled").length;
    },
    async verify(items) {
      if (items.length === 0) return [];
      // A few proofs (a followed block) cost less here than a round trip, and need no worker started.
      if (size === 0 || items.length < MIN_SLICE) return here(items);
      const slices = Math.max(1, Math.min(size, Math.floor(items.length / MIN_SLICE)));
      const per = Math.ceil(items.length / slices);
      // A worker that dies (or a pool closed meanwhile) costs speed, never a verdict: its slice is
      // verified here instead.
      const parts = await Promise.all(
        Array.from({ length: slices }, (_, i) => items.slice(i * per, (i + 1) * per)).map((slice) => run(slice).catch(() => here(slice))),
      );
      return parts.flat();
    },
    async close() {
      const closing = slots;
      slots = [];
      for (const job of queue.splice(0)) job.reject(new Error("the proof verification pool is closed"));
      await Promise.all(closing.map((s) => s.worker.terminate()));
    },
  };
}
