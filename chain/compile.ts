/**
 * Compiles chain/contracts/BetVault.sol and zk/artifacts/Groth16Verifier.sol with solc-js (standard
 * JSON, the bundled compiler: nothing is downloaded) and writes chain/generated/artifacts.ts: each
 * contract's ABI `as const` (so viem infers function/event types) and creation bytecode.
 *
 *   tsx chain/compile.ts          regenerate chain/generated/artifacts.ts
 *   tsx chain/compile.ts --check  exit 1 when the committed file differs from a fresh compile
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import solc from "solc";

const chainDir = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(chainDir, "..");
export const artifactsFile = join(chainDir, "generated", "artifacts.ts");

/** Source files by their standard-JSON name (repo-relative path) and the contracts exported from each. */
const sources = [
  { path: "chain/contracts/BetVault.sol", contracts: [{ name: "BetVault", id: "betVault" }] },
  { path: "zk/artifacts/Groth16Verifier.sol", contracts: [{ name: "Groth16Verifier", id: "groth16Verifier" }] },
] as const;

const settings = {
  optimizer: { enabled: true, runs: 200 },
  evmVersion: "cancun",
  outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } },
} as const;

interface SolcError {
  severity: "error" | "warning" | "info";
  formattedMessage: string;
}
export interface SolcContractOutput {
  abi: unknown[];
  evm: { bytecode: { object: string } };
}
interface SolcOutput {
  errors?: SolcError[];
  contracts?: Record<string, Record<string, SolcContractOutput>>;
}

/** Compile Solidity sources (name -> content) with the bundled solc-js and this module's settings. */
export function solcCompile(contents: Record<string, string>): {
  contracts: Record<string, Record<string, SolcContractOutput>>;
  warnings: string[];
} {
  const input = {
    language: "Solidity",
    sources: Object.fromEntries(Object.entries(contents).map(([name, content]) => [name, { content }])),
    settings,
  };
  const compile: (json: string) => string = solc.compile;
  const output = JSON.parse(compile(JSON.stringify(input))) as SolcOutput;
  const errors = (output.errors ?? []).filter((e) => e.severity === "error");
  if (errors.length > 0) {
    throw new Error(`solc failed:\n${errors.map((e) => e.formattedMessage).join("\n")}`);
  }
  const warnings = (output.errors ?? []).filter((e) => e.severity !== "error").map((e) => e.formattedMessage);
  return { contracts: output.contracts ?? {}, warnings };
}

export interface CompileResult {
  /** The full text of chain/generated/artifacts.ts. */
  text: string;
  warnings: string[];
  solcVersion: string;
}

/** Compile in memory and render the artifacts module; throws on a compile error or a missing source. */
export function compileContracts(): CompileResult {
  const contents: Record<string, string> = {};
  const digests: string[] = [];
  for (const source of sources) {
    const file = join(repoRoot, source.path);
    if (!existsSync(file)) {
      throw new Error(`missing ${source.path} (the zk/ build exports it: snarkjs zkey export solidityverifier)`);
    }
    const content = readFileSync(file, "utf8");
    contents[source.path] = content;
    digests.push(`//   ${source.path} sha256 ${createHash("sha256").update(content).digest("hex")}`);
  }

  const solcVersion: string = solc.version();
  const output = solcCompile(contents);
  const warnings = output.warnings;

  const parts: string[] = [
    "// GENERATED FILE: DO NOT EDIT BY HAND. Regenerate with `tsx chain/compile.ts`;",
    "// `tsx chain/compile.ts --check` exits non-zero when this file is stale.",
    `// solc ${solcVersion}, optimizer runs ${settings.optimizer.runs}, evmVersion ${settings.evmVersion}. Sources:`,
    ...digests,
    "",
  ];
  for (const source of sources) {
    for (const contract of source.contracts) {
      const out = output.contracts?.[source.path]?.[contract.name];
      if (!out) throw new Error(`solc produced no output for ${source.path}:${contract.name}`);
      parts.push(
        `export const ${contract.id}Abi = ${JSON.stringify(out.abi, null, 2)} as const;`,
        "",
        `export const ${contract.id}Bytecode = "0x${out.evm.bytecode.object}" as const;`,
        "",
      );
    }
  }
  return { text: parts.join("\n"), warnings, solcVersion };
}

function main(): void {
  const check = process.argv.includes("--check");
  const started = performance.now();
  const result = compileContracts();
  const ms = Math.round(performance.now() - started);
  const target = relative(repoRoot, artifactsFile);
  for (const w of result.warnings) process.stderr.write(`${w}\n`);
  if (check) {
    const current = existsSync(artifactsFile) ? readFileSync(artifactsFile, "utf8") : "";
    if (current !== result.text) {
      process.stderr.write(`${target} is stale: run \`tsx chain/compile.ts\`\n`);
      process.exit(1);
    }
    process.stdout.write(`${target} is up to date (solc ${result.solcVersion}, ${ms} ms)\n`);
    return;
  }
  mkdirSync(dirname(artifactsFile), { recursive: true });
  writeFileSync(artifactsFile, result.text);
  process.stdout.write(`wrote ${target} (solc ${result.solcVersion}, ${ms} ms)\n`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main();
}
