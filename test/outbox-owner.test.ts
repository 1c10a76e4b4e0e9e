// The BetUpdate outbox has one owner (core/outbox.ts): it alone writes the table, so every writer
// takes the same advisory lock and seq order stays commit order. This test reads every TypeScript
// source of the repository (tests and benchmarks included; generated code and SQL migrations are
// not TypeScript sources) and fails on any other file that writes "BetUpdate": SQL text inserting,
// updating, deleting, truncating or copying into it, or a Prisma write through `betUpdate`.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { BET_UPDATES_CHANNEL } from "../core/outbox.ts";
import { readMigrations } from "../prisma/migrate.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const OWNER = /^core\/outbox(\.ts$|\/)/;
const SKIPPED_DIRS = new Set(["node_modules", "generated", ".git", ".data", "dist", "build"]);

/** SQL that writes the table: the verb, then (for TRUNCATE) other tables of the list, then BetUpdate itself. */
const SQL_WRITE =
  /\b(?:insert\s+into|update|delete\s+from|truncate(?:\s+table)?|copy)\s+(?:only\s+)?(?:(?:"?\w+"?\.)?"?\w+"?\s*,\s*)*(?:"?\w+"?\.)?"?BetUpdate"?(?!\w)/i;
const PRISMA_WRITES = new Set(["create", "createMany", "createManyAndReturn", "update", "updateMany", "updateManyAndReturn", "upsert", "delete", "deleteMany"]);

/** Every place a source writes BetUpdate, as `line: what`. */
function outboxWrites(fileName: string, source: string): string[] {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: string[] = [];
  const at = (node: ts.Node) => file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1;
  const visit = (node: ts.Node): void => {
    let text: string | undefined;
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) text = node.text;
    else if (ts.isTemplateExpression(node)) text = [node.head.text, ...node.templateSpans.map((span) => span.literal.text)].join(" $1 ");
    if (text !== undefined && SQL_WRITE.test(text)) found.push(`${at(node)}: SQL ${SQL_WRITE.exec(text)![0].replace(/\s+/g, " ")}`);
    if (ts.isPropertyAccessExpression(node) && PRISMA_WRITES.has(node.name.text)) {
      const target = node.expression;
      if (ts.isPropertyAccessExpression(target) && target.name.text === "betUpdate") found.push(`${at(node)}: prisma betUpdate.${node.name.text}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

function sources(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name)) files.push(...sources(join(dir, entry.name)));
    } else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) {
      files.push(join(dir, entry.name));
    }
  }
  return files;
}

describe("the outbox's one owner", () => {
  it("recognises every kind of write, and no read", () => {
    // Built from parts, so this file's own text holds no write for the scan below.
    const table = ['"Bet', 'Update"'].join("");
    const writes = [
      `const a = sql\`${["INSERT", "INTO"].join(" ")} ${table} ("chainId") VALUES (\${x})\`;`,
      `q('${["UPDATE"].join("")} ${table} SET "createdAt" = now()');`,
      `q('${["DELETE", "FROM"].join(" ")} ${table} WHERE "seq" < 3');`,
      `q(\`${["TRUNCATE"].join("")} "Bet", ${table}, "Network" RESTART IDENTITY\`);`,
      `q(\`${["truncate", "table"].join(" ")} public.${table.replaceAll('"', "")}\`);`,
      `await tx.${["bet", "Update"].join("")}.${["create", "Many"].join("")}({ data });`,
      `await db.prisma.${["bet", "Update"].join("")}.${["delete", "Many"].join("")}();`,
      `await db.prisma.${["bet", "Update"].join("")}.${["up", "sert"].join("")}({});`,
    ];
    for (const write of writes) expect(outboxWrites("sample.ts", write), write).toHaveLength(1);
    const reads = [
      `q(\`SELECT max("seq") FROM ${table}\`);`,
      `q(\`SELECT nextval(pg_get_serial_sequence('${table}', 'seq'))\`);`,
      `q(\`INSERT INTO "Bet" (x) VALUES (1) ON CONFLICT ("chainId") DO UPDATE SET "x" = 1\`);`,
      `q(\`SELECT 1 FROM "IndexingCursor" FOR UPDATE\`); // ${["INSERT", "INTO"].join(" ")} ${table} in a comment`,
      `await db.prisma.${["bet", "Update"].join("")}.findMany({ orderBy: { seq: "asc" } });`,
      `q(\`${["INSERT", "INTO"].join(" ")} ${table.slice(0, -1)}Type" (x) VALUES (1)\`);`,
    ];
    for (const read of reads) expect(outboxWrites("sample.ts", read), read).toEqual([]);
  });

  it("no TypeScript source but core/outbox writes BetUpdate", () => {
    const offenders: string[] = [];
    const files = sources(ROOT);
    expect(files.length).toBeGreaterThan(100);
    for (const file of files) {
      const path = relative(ROOT, file).split(sep).join("/");
      if (OWNER.test(path)) continue;
      for (const write of outboxWrites(path, readFileSync(file, "utf8"))) offenders.push(`${path}:${write}`);
    }
    expect(offenders).toEqual([]);
  });

  it("listens on the channel the table's trigger notifies", () => {
    const sql = readMigrations()
      .map((m) => readFileSync(join(ROOT, "prisma", "migrations", m.name, "migration.sql"), "utf8"))
      .join("\n");
    const trigger = /AFTER\s+INSERT\s+ON\s+"BetUpdate"[\s\S]*?EXECUTE\s+FUNCTION\s+"?(\w+)"?\s*\(/i.exec(sql);
    expect(trigger, "the BetUpdate insert trigger").not.toBeNull();
    const body = new RegExp(`CREATE\\s+(?:OR\\s+REPLACE\\s+)?FUNCTION\\s+"?${trigger![1]}"?\\s*\\(\\)[\\s\\S]*?\\$\\$([\\s\\S]*?)\\$\\$`, "i").exec(sql);
    expect(body, `the body of ${trigger![1]}`).not.toBeNull();
    const channels = [...body![1]!.matchAll(/pg_notify\(\s*'([^']*)'/g)].map((m) => m[1]);
    expect(channels).toEqual([BET_UPDATES_CHANNEL]);
  });
});
