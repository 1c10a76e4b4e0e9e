// Genuine settlement proofs for bench/backfill-proofs.ts, generated once (snarkjs fullProve, ~0.3 s
// each) and cached as JSON lines under .data/ (gitignored), so later runs only read them. The bets
// they prove are deterministic: bet `id` takes commitment Poseidon(serverSeedOf(id)) and the client
// seed BetBatcher.placeMany gives it when every placement transaction places PLACE_PER_TX bets with
// seedBase = fieldToBytes32(tx + 1), all from one wallet (so ids follow transaction order).
//
//   npx tsx bench/proof-cache.ts [--bets 2000]     # generate (resumes an interrupted run)
//
// Bets 1..n are read in id order up to the first one missing, and each id keeps one proof (the
// last line for it), so the benchmark never counts a proof twice. The 1 767 of the first figures
// were a generation stopped early (bench/README.md), not duplicates; backfill-proofs.ts now
// refuses a cache in which two bets share a proof and prints how many distinct proofs it used.
import { appendFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { encodeAbiParameters, keccak256, type Hex } from "viem";
import { fieldToBytes32, parseSolidityCalldata, type SolidityProof } from "../chain/betvault.ts";
import { proveBetOutcome, releaseProverResources } from "../zk/groth16.ts";

export const PLACE_PER_TX = 80;
export const PROOF_CACHE = ".data/bench-proofs.jsonl";

export interface CachedProof {
  betId: bigint;
  outcome: bigint;
  proof: SolidityProof;
}

export const serverSeedOf = (betId: bigint): bigint => 10n ** 20n + betId;

export function clientSeedOf(betId: bigint): Hex {
  const tx = (betId - 1n) / BigInt(PLACE_PER_TX);
  const j = (betId - 1n) % BigInt(PLACE_PER_TX);
  return keccak256(encodeAbiParameters([{ type: "bytes32" }, { type: "uint256" }], [fieldToBytes32(tx + 1n), j]));
}

type Json = { betId: string; outcome: string; pA: string[]; pB: string[][]; pC: string[] };

/** The cached proofs of bets 1..n that exist so far (in id order). */
export function readProofCache(n: number): CachedProof[] {
  if (!existsSync(PROOF_CACHE)) return [];
  const byId = new Map<bigint, CachedProof>();
  for (const line of readFileSync(PROOF_CACHE, "utf8").split("\n")) {
    if (!line.trim()) continue;
    let j: Json;
    try {
      j = JSON.parse(line) as Json;
    } catch {
      continue; // a line cut short by an interrupted run: that bet is proved again
    }
    const two = (v: string[]) => [BigInt(v[0] ?? "0"), BigInt(v[1] ?? "0")] as const;
    byId.set(BigInt(j.betId), {
      betId: BigInt(j.betId),
      outcome: BigInt(j.outcome),
      proof: { pA: two(j.pA), pB: [two(j.pB[0] ?? []), two(j.pB[1] ?? [])], pC: two(j.pC) } as SolidityProof,
    });
  }
  const out: CachedProof[] = [];
  for (let id = 1n; id <= BigInt(n); id++) {
    const p = byId.get(id);
    if (!p) break;
    out.push(p);
  }
  return out;
}

/** Proves bets 1..n, appending the ones not cached yet. */
export async function fillProofCache(n: number, log: (msg: string) => void): Promise<CachedProof[]> {
  mkdirSync(".data", { recursive: true });
  // An interrupted run may have left a partial last line: start the next one on a line of its own.
  if (existsSync(PROOF_CACHE) && !readFileSync(PROOF_CACHE, "utf8").endsWith("\n")) appendFileSync(PROOF_CACHE, "\n");
  const have = readProofCache(n).length;
  const started = performance.now();
  for (let id = BigInt(have + 1); id <= BigInt(n); id++) {
    const proved = await proveBetOutcome({ serverSeed: serverSeedOf(id), betId: id, clientSeed: clientSeedOf(id) });
    const { pA, pB, pC } = parseSolidityCalldata(proved.solidityCalldata);
    const s = (v: readonly bigint[]) => v.map(String);
    appendFileSync(PROOF_CACHE, `${JSON.stringify({ betId: String(id), outcome: proved.outcome, pA: s(pA), pB: pB.map(s), pC: s(pC) })}\n`);
    if (id % 100n === 0n) log(`proved ${id}/${n} (${((performance.now() - started) / 1000).toFixed(0)} s)`);
  }
  return readProofCache(n);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { bets: { type: "string", default: "2000" } } });
  await fillProofCache(Number(values.bets), (m) => process.stderr.write(`[proofs] ${m}\n`));
  await releaseProverResources();
}
