// The committed chain/generated/artifacts.ts matches a fresh solc-js compile of the sources.
import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { artifactsFile, compileContracts } from "./compile.ts";

it("chain/generated/artifacts.ts is up to date (else run `tsx chain/compile.ts`)", () => {
  const fresh = compileContracts();
  expect(readFileSync(artifactsFile, "utf8") === fresh.text).toBe(true);
  expect(fresh.text.startsWith("// GENERATED FILE: DO NOT EDIT BY HAND.")).toBe(true);
});
