// The hand-written ABIs of the test-only contracts match what solc compiles.
import { expect, it } from "vitest";
import { TEST_CONTRACTS, compileTestContract, type TestContractName } from "./contracts.ts";

interface Item {
  type: string;
  name?: string;
  stateMutability?: string;
  inputs?: readonly { type: string }[];
  outputs?: readonly { type: string }[];
}
const signatures = (abi: readonly unknown[]) =>
  (abi as readonly Item[])
    .map((i) => `${i.type} ${i.name ?? ""}(${(i.inputs ?? []).map((p) => p.type)}) ${i.stateMutability ?? ""} -> (${(i.outputs ?? []).map((p) => p.type)})`)
    .sort();

it.each(Object.keys(TEST_CONTRACTS) as TestContractName[])("%s: declared ABI = compiled ABI", (name) => {
  const compiled = compileTestContract(name);
  expect(compiled.bytecode.length).toBeGreaterThan(100);
  expect(signatures(TEST_CONTRACTS[name].abi)).toEqual(signatures(compiled.abi));
});
