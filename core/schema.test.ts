import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { parse, print } from "graphql";
import { describe, expect, it } from "vitest";
import { composeSupergraph, COMPOSED_SERVICES } from "../scripts/supergraph.ts";
import { TYPESCRIPT_FLAGS } from "../test/spawn.ts";
import { firstNonAscii, parseSdl } from "./schema.ts";

// Schema text is ASCII (core/schema.ts parseSdl says why): a subgraph's SDL with one character past
// U+007F is refused by the subgraph and by composition, at its exact place; and the schemas the
// service builds leave no field name or enum value that JSON answers would carry two-byte.

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SDL_FILES = COMPOSED_SERVICES.map((service) => service.sdl);

/** A character that is not ASCII: Latin-1 (still one byte in V8), past it, or astral (a surrogate pair). */
const nonAscii = fc.oneof(
  fc.integer({ min: 0x80, max: 0xff }),
  fc.integer({ min: 0x100, max: 0xd7ff }),
  fc.integer({ min: 0xe000, max: 0xfffd }),
  fc.integer({ min: 0x10000, max: 0x10ffff }),
);

describe("parseSdl", () => {
  it("parses every ASCII SDL file of the service as graphql-js does", () => {
    for (const file of SDL_FILES) {
      const text = readFileSync(`${ROOT}/${file}`, "utf8");
      expect(firstNonAscii(text), file).toBeUndefined();
      expect(print(parseSdl(text, file))).toBe(print(parse(text)));
    }
  });

  it("refuses a character past ASCII anywhere in the text, naming its line, column and code point", () => {
    fc.assert(
      fc.property(fc.constantFrom(...SDL_FILES), fc.nat(), nonAscii, (file, position, codePoint) => {
        const text = readFileSync(`${ROOT}/${file}`, "utf8");
        const at = position % (text.length + 1);
        const tainted = `${text.slice(0, at)}${String.fromCodePoint(codePoint)}${text.slice(at)}`;
        const lines = text.slice(0, at).split("\n");
        const where = `${file}:${lines.length}:${(lines.at(-1)?.length ?? 0) + 1}`;
        const code = `U+${codePoint.toString(16).toUpperCase().padStart(4, "0")}`;
        expect(() => parseSdl(tainted, file)).toThrow(`${where}: "${String.fromCodePoint(codePoint)}" (${code}) is not ASCII`);
      }),
      { numRuns: 200 },
    );
  });

  it("makes composition fail with the same finding, and compose what it composed before once the text is ASCII again", () => {
    const history = readFileSync(`${ROOT}/subgraphs/history/history.graphql`, "utf8");
    const tainted = history.replace("head - confirmations + 1", "head \u2212 confirmations + 1");
    expect(tainted).not.toBe(history);
    const refused = composeSupergraph({ history: tainted });
    expect(refused.errors).toHaveLength(1);
    expect(refused.errors?.[0]).toMatch(/^subgraphs\/history\/history\.graphql:\d+:\d+: "\u2212" \(U\+2212\) is not ASCII/);
    expect(composeSupergraph({ history }).supergraphSdl).toBe(readFileSync(`${ROOT}/supergraph.graphql`, "utf8"));
  });
});

describe("the schemas the service builds", () => {
  it("leave no field name or enum value that JSON answers would carry as a two-byte string", () => {
    // A fresh process: this worker has made these names already, from other files' test data.
    const output = execFileSync(process.execPath, [...TYPESCRIPT_FLAGS, "test/string-encoding-probe.ts"], { cwd: ROOT, encoding: "utf8", timeout: 60_000 });
    const probe = JSON.parse(output.trim().split("\n").at(-1) ?? "{}") as { schemas: number; twoByte: string[] };
    expect(probe.schemas).toBe(COMPOSED_SERVICES.length + 1);
    expect(probe.twoByte).toEqual([]);
  });
});
