// Drift check (CI and before committing): `tsx prisma/check.ts [--server]`
//
// 1. prisma/schema.prisma vs prisma/migrations: `prisma migrate diff --from-migrations … --to-schema …
//    --exit-code` through the offline schema engine. The migrations are replayed into a throw-away
//    shadow database — an in-memory PGlite by default (no server needed), or with `--server` a
//    temporary database on DATABASE_URL's server (or SHADOW_DATABASE_URL). Any difference means a
//    migration is missing (or a migration was edited by hand): the SQL that would close the gap
//    is printed.
// 2. prisma/generated vs the schema: the client is generated again into a temporary directory
//    and compared file by file with the committed one (nothing in the work tree is touched).
//
// Exit code 0 when both agree, 1 otherwise.
import { spawn, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { prismaCliPath, prismaEnv, repoRoot } from "../scripts/prisma-cli.ts";

const SCHEMA = join(repoRoot, "prisma", "schema.prisma");
const MIGRATIONS = join(repoRoot, "prisma", "migrations");
const GENERATED = join(repoRoot, "prisma", "generated");

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

function prisma(args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [prismaCliPath, ...args], { cwd: repoRoot, env: prismaEnv(env), stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** The CLI's chatter ("Loaded Prisma config…") is not part of the answer. */
function cleanOutput(text: string): string {
  return text
    .split("\n")
    .filter((line) => !/^(Loaded Prisma config|Prisma schema loaded|npm warn)/.test(line))
    .join("\n")
    .trim();
}

async function checkMigrations(useServer: boolean): Promise<string | null> {
  if (!existsSync(join(MIGRATIONS, "migration_lock.toml"))) {
    return "prisma/migrations/migration_lock.toml is missing (create the first migration with `tsx scripts/prisma-cli.ts migrate dev --create-only --name init`).";
  }
  // Without --server: no datasource URL at all, so the offline engine uses an in-memory PGlite shadow.
  const env = useServer ? { ...process.env } : { ...process.env, DATABASE_URL: "", SHADOW_DATABASE_URL: "" };
  const result = await prisma(
    ["migrate", "diff", "--from-migrations", relative(repoRoot, MIGRATIONS), "--to-schema", relative(repoRoot, SCHEMA), "--script", "--exit-code"],
    env,
  );
  if (result.code === 0) return null;
  if (result.code === 2) {
    return (
      "prisma/schema.prisma and prisma/migrations disagree. Replaying the migrations and applying this SQL would give the schema:\n\n" +
      cleanOutput(result.stdout) +
      "\n\nCreate a migration for it: tsx scripts/prisma-cli.ts migrate dev --create-only --name <change> (see prisma/README.md)."
    );
  }
  return `prisma migrate diff failed (exit ${result.code}):\n${cleanOutput(result.stdout)}\n${cleanOutput(result.stderr)}`;
}

function listFiles(dir: string, base: string = dir): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? listFiles(path, base) : [relative(base, path)];
  });
}

async function checkGenerated(): Promise<string | null> {
  const tmp = mkdtempSync(join(tmpdir(), "prisma-generated-check-"));
  try {
    // The generator writes to `output` relative to the schema file, so a copy of the schema
    // generates into <tmp>/generated; the output does not depend on where it is written.
    copyFileSync(SCHEMA, join(tmp, "schema.prisma"));
    const result = await prisma(["generate", "--schema", join(tmp, "schema.prisma")], { ...process.env, DATABASE_URL: "", SHADOW_DATABASE_URL: "" });
    if (result.code !== 0) return `prisma generate failed (exit ${result.code}):\n${cleanOutput(result.stdout)}\n${cleanOutput(result.stderr)}`;
    const fresh = join(tmp, "generated");
    const expected = new Set(listFiles(fresh));
    const actual = new Set(listFiles(GENERATED));
    const missing = [...expected].filter((f) => !actual.has(f));
    const extra = [...actual].filter((f) => !expected.has(f));
    const changed = [...expected].filter((f) => actual.has(f) && !readFileSync(join(fresh, f)).equals(readFileSync(join(GENERATED, f))));
    if (missing.length + extra.length + changed.length === 0) return null;
    const lines = ["prisma/generated is stale (regenerate with `tsx scripts/prisma-cli.ts generate` and commit it):"];
    for (const f of missing) lines.push(`  missing:  prisma/generated/${f}`);
    for (const f of extra) lines.push(`  extra:    prisma/generated/${f}`);
    for (const f of changed) lines.push(`  changed:  prisma/generated/${f}`);
    const diff = spawnSync("diff", ["-ru", GENERATED, fresh], { encoding: "utf8" });
    if (diff.stdout) {
      const out = diff.stdout.split("\n").map((line) => (line.length > 160 ? `${line.slice(0, 160)}…` : line));
      lines.push("", ...out.slice(0, 80), ...(out.length > 80 ? [`… ${out.length - 80} more lines`] : []));
    }
    return lines.join("\n");
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

const useServer = process.argv.includes("--server");
const started = performance.now();
const [migrations, generated] = await Promise.all([checkMigrations(useServer), checkGenerated()]);
const problems = [migrations, generated].filter((p): p is string => p !== null);
if (problems.length === 0) {
  console.log(`prisma: schema, migrations and generated client agree (${((performance.now() - started) / 1000).toFixed(1)} s)`);
} else {
  for (const problem of problems) console.error(`✗ ${problem}\n`);
  process.exitCode = 1;
}
