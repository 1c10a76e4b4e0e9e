// The simulator's randomness. Public choices (players, games, stakes, client seeds, which bets
// expire) come from a seeded rng, so a run is reproducible; server seeds come from
// crypto.randomBytes, live only in a SeedVault in this process's memory, leave it as soon as their
// bet is settled or abandoned, and are never logged, returned or written anywhere.
import { createHash, randomBytes } from "node:crypto";
import type { Hex } from "viem";
import { FIELD_MODULUS, fieldToBytes32 } from "./betvault.ts";

/** What the vault needs from the prover: the commitment of a seed. */
export interface SeedCommitter {
  serverSeedCommitment(seed: bigint): bigint;
}

export type Rng = ReturnType<typeof createRng>;

/** sfc32 seeded from sha256(seed): reproducible choices, independent of the server seeds. */
export function createRng(seed: number | string): { next(): number; bytes(n: number): Uint8Array; bigintIn(lo: bigint, hi: bigint): bigint } {
  const h = createHash("sha256").update(String(seed)).digest();
  let a = h.readUInt32LE(0);
  let b = h.readUInt32LE(4);
  let c = h.readUInt32LE(8);
  let d = h.readUInt32LE(12);
  const u32 = (): number => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return t >>> 0;
  };
  for (let i = 0; i < 12; i++) u32();
  const next = (): number => u32() / 4294967296;
  const bytes = (n: number): Uint8Array => {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i += 4) {
      const v = u32();
      for (let j = 0; j < 4 && i + j < n; j++) out[i + j] = (v >>> (8 * j)) & 0xff;
    }
    return out;
  };
  const bigintIn = (lo: bigint, hi: bigint): bigint => {
    const span = hi - lo + 1n;
    const r = BigInt(`0x${Buffer.from(bytes(16)).toString("hex")}`);
    return lo + (r % span);
  };
  return { next, bytes, bigintIn };
}

/** A uniformly random field element in [1, p): rejection sampling of 254-bit values. */
export function randomServerSeed(): bigint {
  for (;;) {
    const buf = randomBytes(32);
    buf[0] = (buf[0] ?? 0) & 0x3f; // 254 bits
    const v = BigInt(`0x${buf.toString("hex")}`);
    if (v > 0n && v < FIELD_MODULUS) return v;
  }
}

/** Server seeds by commitment (bytes32, lowercase). In memory only; a seed leaves when its bet is settled or abandoned. */
export class SeedVault {
  private readonly seeds = new Map<Hex, bigint>();

  /** `count` fresh seeds, kept; returns their commitments. */
  draw(count: number, prover: SeedCommitter): Hex[] {
    const commitments: Hex[] = [];
    for (let i = 0; i < count; i++) {
      const seed = randomServerSeed();
      const commitment = fieldToBytes32(prover.serverSeedCommitment(seed));
      this.seeds.set(commitment, seed);
      commitments.push(commitment);
    }
    return commitments;
  }

  has(commitment: Hex): boolean {
    return this.seeds.has(commitment);
  }

  /** The seed of `commitment`, forgotten as it is handed out. */
  take(commitment: Hex): bigint | undefined {
    const seed = this.seeds.get(commitment);
    this.seeds.delete(commitment);
    return seed;
  }

  forget(commitments: Iterable<Hex>): void {
    for (const commitment of commitments) this.seeds.delete(commitment);
  }
}
