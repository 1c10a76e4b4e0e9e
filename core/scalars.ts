import { GraphQLScalarType, Kind, type ValueNode } from "graphql";
import { isAddress } from "viem";
import { InputError } from "./errors.ts";

// The wire conventions (docs/reference/scalars.md) live here and only here: every on-chain
// integer leaves as a canonical decimal string, every address/hash as lowercase hex, chain ids as
// JSON numbers. Resolvers may return bigint, Prisma Decimal or strings; these scalars normalise.

export const UINT256_MAX = (1n << 256n) - 1n;
const HEX_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const HEX_BYTES32 = /^0x[0-9a-fA-F]{64}$/;
const MAX_CHAIN_ID = Number.MAX_SAFE_INTEGER;

/** Anything a resolver may hand to `UInt256`: Prisma's Decimal exposes `toFixed`. */
export type UInt256Like = string | bigint | number | { toFixed(digits?: number): string };

/**
 * A decimal integer with no sign and no leading zero. A regular expression, not a charCodeAt loop:
 * on 77-digit strings (every proof number, ~1 500 a betResults(100) answer) V8's compiled
 * expression takes a third of the loop's time.
 */
const CANONICAL_DECIMAL = /^(?:0|[1-9][0-9]*)$/;

/** A canonical decimal string up to 2^256−1. Up to 77 digits it cannot exceed the bound (2^256−1 has 78), so only
 * 78-digit strings pay for the BigInt comparison: this runs for every number of every proof served. */
function isUInt256Text(text: string): boolean {
  return text.length <= 78 && CANONICAL_DECIMAL.test(text) && (text.length < 78 || BigInt(text) <= UINT256_MAX);
}

export function parseUInt256(value: unknown, what = "UInt256"): string {
  if (typeof value !== "string" || !isUInt256Text(value)) {
    throw new InputError(`${what} must be a decimal string of an integer from 0 to 2^256-1 with no leading zeros`);
  }
  return value;
}

export function formatUInt256(value: UInt256Like): string {
  let text: string;
  if (typeof value === "bigint") text = value.toString(10);
  else if (typeof value === "number") {
    if (!Number.isSafeInteger(value)) throw new TypeError(`UInt256 cannot represent ${value}`);
    text = value.toString(10);
  } else if (typeof value === "string") text = value;
  else text = value.toFixed(0);
  if (!isUInt256Text(text)) throw new TypeError(`UInt256 cannot represent ${text}`);
  return text;
}

export function parseAddress(value: unknown, what = "Address"): `0x${string}` {
  if (typeof value !== "string" || !HEX_ADDRESS.test(value)) {
    throw new InputError(`${what} must be 0x followed by 40 hexadecimal digits`);
  }
  const lower = value.toLowerCase();
  const mixedCase = value !== lower && value.slice(2) !== value.slice(2).toUpperCase();
  if (mixedCase && !isAddress(value, { strict: true })) {
    throw new InputError(`${what} has mixed case but is not a valid EIP-55 checksum`);
  }
  return lower as `0x${string}`;
}

export function parseBytes32(value: unknown, what = "Bytes32"): `0x${string}` {
  if (typeof value !== "string" || !HEX_BYTES32.test(value)) {
    throw new InputError(`${what} must be 0x followed by 64 hexadecimal digits`);
  }
  return value.toLowerCase() as `0x${string}`;
}

export function parseChainId(value: unknown, what = "ChainId"): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1 || value > MAX_CHAIN_ID) {
    throw new InputError(`${what} must be an integer from 1 to 2^53-1 (a JSON number)`);
  }
  return value;
}

function formatHex(value: unknown, pattern: RegExp, name: string): string {
  if (typeof value !== "string" || !pattern.test(value)) throw new TypeError(`${name} cannot represent ${String(value)}`);
  return value.toLowerCase();
}

function stringLiteral(ast: ValueNode, name: string): string {
  if (ast.kind !== Kind.STRING) throw new InputError(`${name} must be given as a string`);
  return ast.value;
}

// No descriptions here: each subgraph's SDL describes its scalars, and @apollo/subgraph would copy
// a description set here over the SDL's (subgraphs/kit/scalar-descriptions.test.ts).
export const UInt256Scalar = new GraphQLScalarType<string, string>({
  name: "UInt256",
  serialize: (value) => formatUInt256(value as UInt256Like),
  parseValue: (value) => parseUInt256(value),
  parseLiteral: (ast) => parseUInt256(stringLiteral(ast, "UInt256")),
});

export const AddressScalar = new GraphQLScalarType<string, string>({
  name: "Address",
  serialize: (value) => formatHex(value, HEX_ADDRESS, "Address"),
  parseValue: (value) => parseAddress(value),
  parseLiteral: (ast) => parseAddress(stringLiteral(ast, "Address")),
});

export const Bytes32Scalar = new GraphQLScalarType<string, string>({
  name: "Bytes32",
  serialize: (value) => formatHex(value, HEX_BYTES32, "Bytes32"),
  parseValue: (value) => parseBytes32(value),
  parseLiteral: (ast) => parseBytes32(stringLiteral(ast, "Bytes32")),
});

export const ChainIdScalar = new GraphQLScalarType<number, number>({
  name: "ChainId",
  serialize: (value) => {
    const n = typeof value === "bigint" ? Number(value) : value;
    if (typeof n !== "number" || !Number.isSafeInteger(n) || n < 1) throw new TypeError(`ChainId cannot represent ${String(value)}`);
    return n;
  },
  parseValue: (value) => parseChainId(value),
  parseLiteral: (ast) => {
    if (ast.kind !== Kind.INT) throw new InputError("ChainId must be an integer from 1 to 2^53-1 (a JSON number)");
    return parseChainId(Number(ast.value));
  },
});

/** Resolver map entries for the scalars a subgraph declares. */
export const scalarResolvers = {
  UInt256: UInt256Scalar,
  Address: AddressScalar,
  Bytes32: Bytes32Scalar,
  ChainId: ChainIdScalar,
};
