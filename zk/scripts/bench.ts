// Measures proveBetOutcome / verifyBetProof with the committed DEV artifacts.
//   tsx zk/scripts/bench.ts [iterations=10]
import { randomBytes } from "node:crypto";
import { loadDevVerificationKey, proveBetOutcome, releaseProverResources, verifyBetProof } from "../groth16.ts";

const n = Number(process.argv[2] ?? 10);
const { key } = loadDevVerificationKey();
const ms = (t0: number): number => Math.round((performance.now() - t0) * 10) / 10;
const input = (i: number) => ({
  serverSeed: BigInt(`0x${randomBytes(31).toString("hex")}`),
  betId: BigInt(i),
  clientSeed: `0x${randomBytes(32).toString("hex")}`,
});

let t0 = performance.now();
let bet = await proveBetOutcome(input(0));
console.log(`prove cold: ${ms(t0)} ms`);
t0 = performance.now();
if (!(await verifyBetProof(key, bet.proof, bet.publicSignals))) throw new Error("verify failed");
console.log(`verify cold: ${ms(t0)} ms`);

const prove: number[] = [];
const verify: number[] = [];
for (let i = 1; i <= n; i++) {
  t0 = performance.now();
  bet = await proveBetOutcome(input(i));
  prove.push(ms(t0));
  t0 = performance.now();
  if (!(await verifyBetProof(key, bet.proof, bet.publicSignals))) throw new Error("verify failed");
  verify.push(ms(t0));
}
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
console.log(`warm x${n}: prove median ${median(prove)} ms (min ${Math.min(...prove)}, max ${Math.max(...prove)}); verify median ${median(verify)} ms`);
await releaseProverResources();
