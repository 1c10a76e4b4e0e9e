// The package's `./snarkjs` subpath, for Node: snarkjs' Groth16 verifier, loaded on demand and typed
// as `verifyBetProof` takes it. snarkjs is an optional peer dependency (`npm install snarkjs`); it
// ships no types, which is why this module exists. In a page, pass the global of snarkjs' browser
// build (`snarkjs.groth16`) to `verifyBetProof` instead.
import type { Groth16Verify } from "./proof.ts";

/** Loaded through a variable, so that neither TypeScript nor a bundler reaches for snarkjs unasked. */
const SNARKJS = "snarkjs";

interface Snarkjs {
  groth16: Groth16Verify;
}

/** snarkjs' `groth16`, imported on first use; a clear error when snarkjs is not installed. */
export async function loadGroth16(): Promise<Groth16Verify> {
  let snarkjs: Snarkjs;
  try {
    snarkjs = (await import(SNARKJS)) as Snarkjs;
  } catch (error) {
    throw new Error("verifying proofs in Node needs snarkjs: npm install snarkjs", { cause: error });
  }
  return snarkjs.groth16;
}

/**
 * Ends the worker threads snarkjs starts for its curve, so that a script can exit. (snarkjs keeps the
 * curve in a global, `curve_bn128`, once a proof has been verified.)
 */
export async function releaseGroth16(): Promise<void> {
  await (globalThis as { curve_bn128?: { terminate(): Promise<void> } }).curve_bn128?.terminate();
}
