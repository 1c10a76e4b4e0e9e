import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { isEnumType, isInputObjectType, isIntrospectionType, isObjectType, isScalarType, isSpecifiedScalarType, type GraphQLNamedType } from "graphql";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { ErrorCode } from "../core/errors.ts";
import { apiSchemaOf } from "../core/schema.ts";
import { ConnectErrorCode, RealtimeErrorCode } from "../realtime/events.ts";

// The documentation a clone carries: no pointer to documents outside the repository, no dead
// relative link or anchor in any markdown file, and docs/ naming every query, type, enum value,
// scalar, Socket.IO event, update type and error code — lists taken from the composed API schema
// and from the code, never written out here.

const root = resolve(".");
const git = (...args: string[]) => execFileSync("git", args, { cwd: root, encoding: "utf8" });

/** Tracked and untracked (not ignored) files matching the pathspecs. */
const repoFiles = (...pathspecs: string[]) =>
  git("ls-files", "--cached", "--others", "--exclude-standard", "--", ...pathspecs)
    .split("\n")
    .filter(Boolean);

// ---------------------------------------------------------------------------------------------
// Markdown: links and anchors
// ---------------------------------------------------------------------------------------------

/** GitHub's heading anchor: lowercase, punctuation and symbols dropped, spaces to hyphens. */
function slugOf(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]+>/g, "")
    .replace(/[`*]/g, "");
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, "")
    .replace(/ /g, "-");
}

/** The lines of a markdown text outside fenced code blocks, with inline code spans blanked. */
function proseLines(markdown: string): { line: number; text: string }[] {
  const lines: { line: number; text: string }[] = [];
  let fence: string | undefined;
  markdown.split("\n").forEach((text, index) => {
    const opener = /^\s*(`{3,}|~{3,})/.exec(text)?.[1];
    if (fence) {
      if (opener && opener[0] === fence[0] && opener.length >= fence.length) fence = undefined;
      return;
    }
    if (opener) {
      fence = opener;
      return;
    }
    lines.push({ line: index + 1, text: text.replace(/(`+)(?:(?!\1).)+?\1/g, "") });
  });
  return lines;
}

/** Every anchor a markdown file offers: its headings' slugs (duplicates numbered) and explicit ids. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fence: string | undefined;
  for (const text of markdown.split("\n")) {
    const opener = /^\s*(`{3,}|~{3,})/.exec(text)?.[1];
    if (fence) {
      if (opener && opener[0] === fence[0] && opener.length >= fence.length) fence = undefined;
      continue;
    }
    if (opener) {
      fence = opener;
      continue;
    }
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(text)?.[1];
    if (heading !== undefined) {
      const slug = slugOf(heading);
      const count = seen.get(slug) ?? 0;
      seen.set(slug, count + 1);
      anchors.add(count === 0 ? slug : `${slug}-${count}`);
    }
    for (const match of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(match[1]!);
  }
  return anchors;
}

interface Link {
  file: string;
  line: number;
  target: string;
}

/** Relative links of a markdown file: inline `[text](target)`, images and reference definitions. */
function relativeLinksOf(file: string, markdown: string): Link[] {
  const links: Link[] = [];
  for (const { line, text } of proseLines(markdown)) {
    const targets = [
      ...[...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!),
      ...[...text.matchAll(/^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/g)].map((m) => m[1]!),
    ];
    for (const target of targets) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
      links.push({ file, line, target });
    }
  }
  return links;
}

/** The links among `links` that do not resolve, as `file:line → target (why)`, relative to `base`. */
function brokenLinks(links: Link[], base: string): string[] {
  const anchorCache = new Map<string, Set<string>>();
  const anchors = (path: string) => {
    let found = anchorCache.get(path);
    if (!found) {
      found = anchorsOf(readFileSync(path, "utf8"));
      anchorCache.set(path, found);
    }
    return found;
  };
  const broken: string[] = [];
  for (const { file, line, target } of links) {
    const [rawPath = "", anchor] = target.split("#", 2) as [string, string | undefined];
    const path = rawPath === "" ? resolve(base, file) : resolve(base, dirname(file), decodeURIComponent(rawPath));
    const where = `${file}:${line} → ${target}`;
    if (relative(base, path).startsWith("..")) broken.push(`${where} (outside the repository)`);
    else if (!existsSync(path)) broken.push(`${where} (no such file)`);
    else if (anchor !== undefined && path.endsWith(".md") && !anchors(path).has(anchor)) broken.push(`${where} (no such anchor)`);
  }
  return broken;
}

describe("markdown link checker", () => {
  it("reports missing files, missing anchors and links out of the repository, and nothing inside code", () => {
    const dir = mkdtempSync(join(tmpdir(), "docs-links-"));
    try {
      writeFileSync(join(dir, "a.md"), "# Title\n\n## The `x` section — twice\n\n## The `x` section — twice\n\nSee [b](b.md#kept).\n");
      writeFileSync(
        join(dir, "b.md"),
        [
          "# Kept",
          "",
          "[ok](a.md#the-x-section--twice) [ok2](a.md#the-x-section--twice-1) [self](#kept)",
          "[gone](c.md) [bad anchor](a.md#nope) [out](../elsewhere.md) ![img](a.md#title)",
          "`[not a link](c.md)` [web](https://example.com/x.md)",
          "```",
          "[in code](c.md)",
          "# not a heading",
          "```",
          "[ref]: a.md#not-a-heading",
        ].join("\n"),
      );
      const links = ["a.md", "b.md"].flatMap((file) => relativeLinksOf(file, readFileSync(join(dir, file), "utf8")));
      expect(links.map((l) => l.target)).toEqual([
        "b.md#kept",
        "a.md#the-x-section--twice",
        "a.md#the-x-section--twice-1",
        "#kept",
        "c.md",
        "a.md#nope",
        "../elsewhere.md",
        "a.md#title",
        "a.md#not-a-heading",
      ]);
      expect(brokenLinks(links, dir)).toEqual([
        "b.md:4 → c.md (no such file)",
        "b.md:4 → a.md#nope (no such anchor)",
        "b.md:4 → ../elsewhere.md (outside the repository)",
        "b.md:10 → a.md#not-a-heading (no such anchor)",
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the repository's documentation", () => {
  it("refers to no document outside the repository", () => {
    // The team's own notes are not shipped: nothing may point at them (a clone would see a dead link).
    const pattern = String.raw`(\.\./)+shared/|/work/shared|\b(API|STYLE|ENVIRONMENT)\.md\b`;
    let found = "";
    try {
      found = git("grep", "-n", "-I", "-E", "--untracked", pattern, "--", ".", ":!test/docs.test.ts");
    } catch (error) {
      if ((error as { status?: number }).status !== 1) throw error; // 1: no match
    }
    expect(found).toBe("");
  });

  it("has no dead relative link or anchor in any markdown file", () => {
    const files = repoFiles("*.md");
    expect(files).toEqual(expect.arrayContaining(["README.md", "docs/README.md"]));
    const links = files.flatMap((file) => relativeLinksOf(file, readFileSync(join(root, file), "utf8")));
    expect(links.filter((l) => l.file.startsWith("docs/")).length).toBeGreaterThan(100);
    expect(brokenLinks(links, root)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// docs/ names the whole public interface
// ---------------------------------------------------------------------------------------------

const schema = apiSchemaOf(readFileSync(join(root, "supergraph.graphql"), "utf8"));
const publicTypes = Object.values(schema.getTypeMap()).filter((type) => !isIntrospectionType(type) && !isSpecifiedScalarType(type));
const doc = (path: string) => readFileSync(join(root, "docs", path), "utf8");
const named = (text: string) => (name: string) => new RegExp(String.raw`(^|[^\w:])${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}($|[^\w:])`, "m").test(text);
const unnamed = (names: string[], text: string) => names.filter((name) => !named(text)(name));

/** String-literal member names of an interface, or members of a string-literal union, in realtime/events.ts. */
function eventsFileNames(declaration: string): string[] {
  const source = ts.createSourceFile("events.ts", readFileSync(join(root, "realtime/events.ts"), "utf8"), ts.ScriptTarget.Latest, true);
  const names: string[] = [];
  source.forEachChild((node) => {
    if (ts.isInterfaceDeclaration(node) && node.name.text === declaration) {
      for (const member of node.members) if (member.name && ts.isStringLiteral(member.name)) names.push(member.name.text);
    }
    if (ts.isTypeAliasDeclaration(node) && node.name.text === declaration && ts.isUnionTypeNode(node.type)) {
      for (const part of node.type.types) if (ts.isLiteralTypeNode(part) && ts.isStringLiteral(part.literal)) names.push(part.literal.text);
    }
  });
  return names;
}

describe("docs/ names every element of the public interface", () => {
  it("every query, in the GraphQL reference", () => {
    const queries = Object.keys(schema.getQueryType()!.getFields());
    expect(queries.length).toBeGreaterThanOrEqual(6);
    expect(unnamed(queries, doc("reference/graphql.md"))).toEqual([]);
  });

  it("every query, in the docs index and in the README's tour", () => {
    const queries = Object.keys(schema.getQueryType()!.getFields());
    // In code spans: `bets` is also an English word.
    const unlisted = (text: string) => queries.filter((name) => !text.includes(`\`${name}\``));
    expect(unlisted(doc("README.md"))).toEqual([]);
    expect(unlisted(readFileSync(join(root, "README.md"), "utf8"))).toEqual([]);
  });

  it("every type, in the GraphQL or health reference, and every field and argument somewhere in docs/reference", () => {
    const reference = ["graphql.md", "health.md", "scalars.md"].map((file) => doc(`reference/${file}`)).join("\n");
    expect(
      unnamed(
        publicTypes.map((type) => type.name),
        reference,
      ),
    ).toEqual([]);
    const members = publicTypes.flatMap((type: GraphQLNamedType): string[] => {
      if (isObjectType(type)) return Object.values(type.getFields()).flatMap((field) => [field.name, ...field.args.map((arg) => arg.name)]);
      if (isInputObjectType(type)) return Object.keys(type.getFields());
      return [];
    });
    expect(members.length).toBeGreaterThan(80);
    expect(unnamed([...new Set(members)], reference)).toEqual([]);
  });

  it("every enum value (bet statuses included), and every bet status in the lifecycle page", () => {
    const values = publicTypes.filter(isEnumType).flatMap((type) => type.getValues().map((value) => value.name));
    expect(values).toEqual(expect.arrayContaining(["PENDING", "SETTLED", "REFUNDED"]));
    expect(unnamed(values, doc("reference/graphql.md"))).toEqual([]);
    const betStatus = schema.getType("BetStatus");
    const statuses = isEnumType(betStatus) ? betStatus.getValues().map((value) => value.name) : [];
    expect(statuses.length).toBe(3);
    expect(unnamed(statuses, doc("reference/lifecycle.md"))).toEqual([]);
  });

  it("every custom scalar, with its own section, which its @specifiedBy URL points at", () => {
    const scalars = publicTypes.filter(isScalarType);
    expect(scalars.map((s) => s.name).sort()).toEqual(["Address", "Bytes32", "ChainId", "UInt256"]);
    const anchors = anchorsOf(doc("reference/scalars.md"));
    for (const scalar of scalars) {
      expect(anchors.has(scalar.name.toLowerCase()), `a "## ${scalar.name}" section`).toBe(true);
      const url = scalar.specifiedByURL ?? "";
      expect(brokenLinks([{ file: "supergraph.graphql", line: 0, target: url }], root), `${scalar.name} @specifiedBy(url: "${url}")`).toEqual([]);
      expect(url).toBe(`docs/reference/scalars.md#${scalar.name.toLowerCase()}`);
    }
  });

  it("every Socket.IO event and update type of realtime/events.ts, in the realtime reference", () => {
    const events = [...eventsFileNames("ClientToServerEvents"), ...eventsFileNames("ServerToClientEvents")];
    expect(events).toEqual(expect.arrayContaining(["bets:subscribe", "bets:unsubscribe", "bets:subscribed", "bets:update", "bets:error"]));
    const updateTypes = eventsFileNames("BetUpdateType");
    expect(updateTypes.length).toBeGreaterThanOrEqual(4);
    expect(unnamed([...events, ...updateTypes], doc("reference/realtime.md"))).toEqual([]);
  });

  it("every error code, GraphQL and Socket.IO, in the errors reference", () => {
    const codes = [...Object.values(ErrorCode), ...Object.values(RealtimeErrorCode), ...Object.values(ConnectErrorCode)];
    expect(codes.length).toBeGreaterThanOrEqual(12);
    expect(unnamed([...new Set(codes)], doc("reference/errors.md"))).toEqual([]);
  });

  it("links the index to every page of docs/", () => {
    const pages = repoFiles("docs/*.md")
      .map((file) => relative("docs", file))
      .filter((page) => page !== "README.md");
    expect(pages.length).toBeGreaterThanOrEqual(11);
    expect(pages.filter((page) => !doc("README.md").includes(`](${page})`))).toEqual([]);
  });
});
