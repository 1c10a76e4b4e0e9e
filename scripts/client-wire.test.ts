import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { clientWireFiles, staleClientWireFiles, wireBetJson, wireEvents, wireProofShape } from "./client-wire.ts";

const scratch = mkdtempSync(join(tmpdir(), "client-wire-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("scripts/client-wire.ts", () => {
  it("the committed client/wire is what the sources give", () => {
    expect(staleClientWireFiles()).toEqual([]);
  });

  it("finds a copy that was edited or is missing", () => {
    for (const source of ["core/bet-json.ts", "realtime/events.ts", "zk/proof-shape.ts", "core/finality.ts", "zk/verifier-key-words.ts"]) {
      mkdirSync(join(scratch, source, ".."), { recursive: true });
      cpSync(source, join(scratch, source));
    }
    mkdirSync(join(scratch, "client/wire"), { recursive: true });
    for (const [path, content] of clientWireFiles(scratch)) writeFileSync(join(scratch, path), content);
    expect(staleClientWireFiles(scratch)).toEqual([]);
    writeFileSync(join(scratch, "client/wire/events.ts"), "// edited by hand\n");
    rmSync(join(scratch, "client/wire/proof-shape.ts"));
    expect(staleClientWireFiles(scratch)).toEqual(["client/wire/events.ts", "client/wire/proof-shape.ts"]);
  });

  it("gives the bet's JSON shape its wire types and refuses a type the client does not have", () => {
    const source = [
      'import type { Bet } from "../prisma/generated/client.ts";',
      'import { betDepth, type NetworkEntry } from "./networks.ts";',
      "export interface BetJson {",
      "  betId: string;",
      '  status: Bet["status"];',
      "}",
      "export function betToJson(): void {}",
    ].join("\n");
    const wire = wireBetJson(source);
    expect(wire).toContain('import type { BetStatus } from "../generated/graphql.ts";');
    expect(wire).toContain("status: BetStatus;");
    expect(wire).not.toMatch(/betToJson|prisma/);

    expect(() => wireBetJson(`${source}\nexport interface Depth { network: NetworkEntry }`)).toThrow(/NetworkEntry.*BET_JSON_TYPES/);
    expect(() => wireBetJson("export const x = 1;")).toThrow(/exports no interface/);
  });

  it("refuses sources that would pull other modules into the client", () => {
    expect(() => wireEvents('import type { BetJson } from "../core/bet-json.ts";\nimport { x } from "../core/x.ts";')).toThrow(/\.\.\/core\/x\.ts/);
    expect(() => wireProofShape('import { y } from "./y.ts";')).toThrow(/must import nothing/);
  });
});
