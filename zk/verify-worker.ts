// A worker of zk/verify-pool.ts: one single-threaded BN254 instance verifying batches for the key
// in workerData. Messages in: { id, items }; out: { id, verdicts } or { id, error }.
import { parentPort, workerData } from "node:worker_threads";
import { createBatchVerifier, type BatchItem } from "./batch-verify.ts";
import type { Groth16VerificationKey } from "./proof-shape.ts";

const port = parentPort;
if (!port) throw new Error("zk/verify-worker.ts runs as a worker thread only");
const verifier = await createBatchVerifier((workerData as { key: Groth16VerificationKey }).key);
port.on("message", (message: { id: number; items: BatchItem[] }) => {
  try {
    port.postMessage({ id: message.id, verdicts: verifier.verify(message.items) });
  } catch (error) {
    port.postMessage({ id: message.id, error: error instanceof Error ? error.message : String(error) });
  }
});
port.postMessage({ ready: true });
