import { GraphQLError, parseValue as parseLiteralText } from "graphql";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AddressScalar, Bytes32Scalar, ChainIdScalar, UInt256Scalar } from "./scalars.ts";

function rejects(fn: () => unknown) {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(GraphQLError);
  expect((caught as GraphQLError).extensions.code).toBe("BAD_USER_INPUT");
}

const MAX = ((1n << 256n) - 1n).toString();
const CHECKSUMMED = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed";

describe("UInt256", () => {
  it.each(["0", "1", "1500000000000000000", MAX])("accepts %s", (value) => {
    expect(UInt256Scalar.parseValue(value)).toBe(value);
    expect(UInt256Scalar.parseLiteral(parseLiteralText(JSON.stringify(value)))).toBe(value);
  });
  it.each([["01"], ["-1"], ["1e3"], ["1.0"], [" 1"], ["0x10"], [""], [(1n << 256n).toString()], ["9".repeat(100)], [1], [null], [{}], [["1"]], [true]])(
    "rejects %j",
    (value) => rejects(() => UInt256Scalar.parseValue(value)),
  );
  it("accepts exactly the canonical decimal strings up to 2^256-1 (the rule as a regular expression)", () => {
    const canonical = (text: string) => /^(0|[1-9][0-9]*)$/.test(text) && BigInt(text) <= (1n << 256n) - 1n;
    const accepts = (text: string) => {
      try {
        return UInt256Scalar.parseValue(text) === text && UInt256Scalar.serialize(text) === text;
      } catch {
        return false;
      }
    };
    const digits = fc.string({ unit: fc.constantFrom(..."0123456789"), maxLength: 80 });
    const near = fc.string({ unit: fc.constantFrom(..."0123456789 -+.e/:x"), maxLength: 80 });
    fc.assert(
      fc.property(fc.oneof(digits, near, fc.string()), (text) => accepts(text) === canonical(text)),
      { numRuns: 5_000 },
    );
    for (const edge of ["0", "00", "01", "10", "/", ":", MAX, `${MAX.slice(0, -1)}6`, `${MAX}0`]) expect(accepts(edge)).toBe(canonical(edge));
  });
  it("rejects number literals: integers travel as strings", () => {
    rejects(() => UInt256Scalar.parseLiteral(parseLiteralText("12")));
  });
  it("serialises bigint, Decimal-like and numbers as canonical decimal strings", () => {
    expect(UInt256Scalar.serialize(10n ** 30n)).toBe(`1${"0".repeat(30)}`);
    expect(UInt256Scalar.serialize({ toFixed: () => "1000000000000000000000000" })).toBe("1000000000000000000000000");
    expect(UInt256Scalar.serialize(42)).toBe("42");
    expect(() => UInt256Scalar.serialize(1.5)).toThrow();
    expect(() => UInt256Scalar.serialize(-1n)).toThrow();
    expect(() => UInt256Scalar.serialize(1n << 256n)).toThrow();
  });
});

describe("Address", () => {
  it.each([
    [CHECKSUMMED, CHECKSUMMED.toLowerCase()],
    [CHECKSUMMED.toLowerCase(), CHECKSUMMED.toLowerCase()],
    [`0x${CHECKSUMMED.slice(2).toUpperCase()}`, CHECKSUMMED.toLowerCase()],
  ])("accepts %s as %s", (input, expected) => {
    expect(AddressScalar.parseValue(input)).toBe(expected);
    expect(AddressScalar.parseLiteral(parseLiteralText(JSON.stringify(input)))).toBe(expected);
  });
  it.each([
    ["0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD"], // mixed case, bad checksum
    ["5aaeb6053f3e94c9b9a09f33669435e7ef1beaed"],
    ["0x5aaeb6053f3e94c9b9a09f33669435e7ef1bea"],
    ["0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaedd"],
    ["0xzzaeb6053f3e94c9b9a09f33669435e7ef1beaed"],
    [42],
    [null],
  ])("rejects %j", (value) => rejects(() => AddressScalar.parseValue(value)));
  it("serialises lowercase", () => expect(AddressScalar.serialize(CHECKSUMMED)).toBe(CHECKSUMMED.toLowerCase()));
});

describe("Bytes32", () => {
  const hash = `0x${"Ab".repeat(32)}`;
  it("accepts any case and lowercases", () => {
    expect(Bytes32Scalar.parseValue(hash)).toBe(hash.toLowerCase());
    expect(Bytes32Scalar.parseLiteral(parseLiteralText(JSON.stringify(hash)))).toBe(hash.toLowerCase());
  });
  it.each([[`0x${"a".repeat(63)}`], [`0x${"a".repeat(65)}`], ["a".repeat(64)], [`0x${"g".repeat(64)}`], [1]])("rejects %j", (value) =>
    rejects(() => Bytes32Scalar.parseValue(value)),
  );
});

describe("ChainId", () => {
  it.each([1, 8453, 2 ** 31, Number.MAX_SAFE_INTEGER])("accepts %d", (value) => {
    expect(ChainIdScalar.parseValue(value)).toBe(value);
    expect(ChainIdScalar.parseLiteral(parseLiteralText(String(value)))).toBe(value);
  });
  it.each([[0], [-1], [1.5], [Number.MAX_SAFE_INTEGER + 1], ["1"], [null], [Number.NaN]])("rejects %j", (value) =>
    rejects(() => ChainIdScalar.parseValue(value)),
  );
  it("rejects string and oversized literals", () => {
    rejects(() => ChainIdScalar.parseLiteral(parseLiteralText('"1"')));
    rejects(() => ChainIdScalar.parseLiteral(parseLiteralText("9007199254740993")));
  });
  it("serialises bigint rows as JSON numbers", () => expect(ChainIdScalar.serialize(31337n)).toBe(31337));
});
