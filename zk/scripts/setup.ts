// DEV trusted setup for zk/circuits/bet_outcome.circom, end to end and offline.
//
//   tsx zk/scripts/setup.ts            rebuild and overwrite zk/artifacts/
//   tsx zk/scripts/setup.ts --check    rebuild in zk/build/ and compare with zk/artifacts/ (exit 1 on drift)
//
// Steps: circom2 (--O2 --r1cs --wasm) → powers of tau (BN254, power 11) → phase-1 contribution →
// prepare phase 2 → groth16 setup (new zkey) → phase-2 contribution → verify the zkey against the
// r1cs and ptau → export verification key + Solidity verifier.
//
// Both contributions are snarkjs *beacon* contributions whose randomness is derived from the public
// DEV_ENTROPY string below. That makes the whole ceremony deterministic (byte-identical artifacts
// on every run, so `--check` can prove the committed files come from this script) and it also
// means the toxic waste is PUBLIC: anyone can forge proofs for these keys. DEV / TEST ONLY.
// (snarkjs' ordinary `contribute` mixes OS randomness into the entropy and is not reproducible.)

import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import * as snarkjs from "snarkjs";

const require = createRequire(import.meta.url);

const ZK_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const REPO_DIR = resolve(ZK_DIR, "..");
const CIRCUIT = join(ZK_DIR, "circuits", "bet_outcome.circom");
const BUILD_DIR = join(ZK_DIR, "build");
const ARTIFACTS_DIR = join(ZK_DIR, "artifacts");

/** Powers of tau size: 2^11 = 2048 constraints (the circuit has ~500). */
const PTAU_POWER = 11;
/** Fixed, PUBLIC dev entropy: every secret of this setup is derived from it. */
const DEV_ENTROPY = "public-bet-results-api / bet_outcome / DEV-ONLY trusted setup v1 / toxic waste is public";
/** snarkjs beacon iterations: 2^10 hashes (snarkjs' minimum). */
const BEACON_ITERATIONS_EXP = 10;

const ARTIFACT_NAMES = ["bet_outcome.wasm", "bet_outcome.zkey", "verification_key.json", "Groth16Verifier.sol"] as const;

const check = process.argv.includes("--check");

const logger: snarkjs.SnarkjsLogger = {
  debug: () => {},
  info: (msg) => console.log(`  snarkjs: ${msg}`),
  warn: (msg) => console.warn(`  snarkjs WARN: ${msg}`),
  error: (msg) => console.error(`  snarkjs ERROR: ${msg}`),
};

function beaconHash(label: string): string {
  return createHash("sha256").update(`${DEV_ENTROPY} / ${label}`).digest("hex");
}

async function step<T>(name: string, fn: () => Promise<T> | T): Promise<T> {
  const t0 = performance.now();
  console.log(`▶ ${name}`);
  const result = await fn();
  console.log(`  done in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return result;
}

function assertOk(value: unknown, what: string): void {
  // snarkjs reports several failures by returning false instead of throwing.
  if (value === false) throw new Error(`${what} failed (snarkjs returned false)`);
}

function sha256File(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

async function main(): Promise<void> {
  rmSync(BUILD_DIR, { recursive: true, force: true });
  mkdirSync(BUILD_DIR, { recursive: true });

  const r1cs = join(BUILD_DIR, "bet_outcome.r1cs");
  const wasm = join(BUILD_DIR, "bet_outcome_js", "bet_outcome.wasm");
  const ptau0 = join(BUILD_DIR, "pot11_0000.ptau");
  const ptau1 = join(BUILD_DIR, "pot11_0001.ptau");
  const ptauFinal = join(BUILD_DIR, "pot11_final.ptau");
  const zkey0 = join(BUILD_DIR, "bet_outcome_0000.zkey");
  const zkeyFinal = join(BUILD_DIR, "bet_outcome.zkey");
  const vkeyFile = join(BUILD_DIR, "verification_key.json");
  const verifierFile = join(BUILD_DIR, "Groth16Verifier.sol");

  await step("compile circuit (circom2 --O2 --r1cs --wasm)", () => {
    // circom2 runs under WASI and only sees paths relative to the working directory.
    const cli = require.resolve("circom2/cli.js");
    const res = spawnSync(
      process.execPath,
      [cli, relative(REPO_DIR, CIRCUIT), "--O2", "--r1cs", "--wasm", "-l", "node_modules", "-o", relative(REPO_DIR, BUILD_DIR)],
      { cwd: REPO_DIR, stdio: "inherit" },
    );
    if (res.status !== 0) throw new Error(`circom2 exited with ${res.status ?? res.signal}`);
    if (!existsSync(r1cs) || !existsSync(wasm)) throw new Error("circom2 did not write the r1cs/wasm");
  });

  const curve = await snarkjs.curves.getCurveFromName("bn128");
  try {
    await step(`powers of tau: new accumulator (bn128, power ${PTAU_POWER})`, async () =>
      assertOk(await snarkjs.powersOfTau.newAccumulator(curve, PTAU_POWER, ptau0, logger), "powersoftau new"),
    );
    await step("powers of tau: DEV contribution (beacon from DEV_ENTROPY)", async () =>
      assertOk(await snarkjs.powersOfTau.beacon(ptau0, ptau1, "DEV phase 1", beaconHash("phase1"), BEACON_ITERATIONS_EXP, logger), "powersoftau beacon"),
    );
    await step("powers of tau: prepare phase 2 (slow, ~40 s)", () => snarkjs.powersOfTau.preparePhase2(ptau1, ptauFinal, logger));
    await step("groth16 setup (new zkey)", async () => assertOk(await snarkjs.zKey.newZKey(r1cs, ptauFinal, zkey0, logger), "zkey new"));
    await step("phase 2: DEV contribution (beacon from DEV_ENTROPY)", async () =>
      assertOk(await snarkjs.zKey.beacon(zkey0, zkeyFinal, "DEV phase 2", beaconHash("phase2"), BEACON_ITERATIONS_EXP, logger), "zkey beacon"),
    );
    await step("verify zkey against r1cs + ptau", async () => {
      if (!(await snarkjs.zKey.verifyFromR1cs(r1cs, ptauFinal, zkeyFinal, logger))) {
        throw new Error("zkey verification failed");
      }
    });
    await step("export verification key + Solidity verifier", async () => {
      const vkey = await snarkjs.zKey.exportVerificationKey(zkeyFinal, logger);
      writeFileSync(vkeyFile, `${JSON.stringify(vkey, null, 2)}\n`);
      // snarkjs' package "exports" hides templates/; locate it from the package entry point.
      const snarkjsDir = resolve(dirname(require.resolve("snarkjs")), "..");
      const template = readFileSync(join(snarkjsDir, "templates", "verifier_groth16.sol.ejs"), "utf8");
      const solidity = await snarkjs.zKey.exportSolidityVerifier(zkeyFinal, { groth16: template }, logger);
      writeFileSync(verifierFile, solidity);
    });
  } finally {
    await curve.terminate();
    // Proving/verifying with snarkjs keeps worker threads alive through this global.
    await (globalThis as { curve_bn128?: { terminate(): Promise<void> } | null }).curve_bn128?.terminate();
  }

  const built: Record<(typeof ARTIFACT_NAMES)[number], string> = {
    "bet_outcome.wasm": wasm,
    "bet_outcome.zkey": zkeyFinal,
    "verification_key.json": vkeyFile,
    "Groth16Verifier.sol": verifierFile,
  };

  if (check) {
    let drift = false;
    for (const name of ARTIFACT_NAMES) {
      const committed = join(ARTIFACTS_DIR, name);
      const fresh = built[name];
      const same = existsSync(committed) && sha256File(committed) === sha256File(fresh);
      console.log(`${same ? "✔ identical" : "✘ DIFFERS "}  ${name}  ${sha256File(fresh)}`);
      drift ||= !same;
    }
    if (drift) {
      console.error("zk/artifacts/ does not match a fresh DEV setup; run `tsx zk/scripts/setup.ts` to regenerate.");
      process.exitCode = 1;
    }
    return;
  }

  mkdirSync(ARTIFACTS_DIR, { recursive: true });
  for (const name of ARTIFACT_NAMES) {
    copyFileSync(built[name], join(ARTIFACTS_DIR, name));
    console.log(`wrote zk/artifacts/${name}  sha256 ${sha256File(built[name])}`);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
