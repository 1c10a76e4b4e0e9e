import { encodeAbiParameters, stringToHex } from "viem";
import { describe, expect, it } from "vitest";
import { decodeDecimals, decodeSymbol } from "./tokens.ts";

describe("token metadata answers", () => {
  it("reads a symbol as an ABI string or a zero-padded bytes32, and nothing else", () => {
    expect(decodeSymbol(encodeAbiParameters([{ type: "string" }], ["USDC"]))).toBe("USDC");
    expect(decodeSymbol(stringToHex("MKR", { size: 32 }))).toBe("MKR");
    expect(decodeSymbol(encodeAbiParameters([{ type: "string" }], ["A\u0000B\u0007\n"]))).toBe("AB");
    expect(decodeSymbol(encodeAbiParameters([{ type: "string" }], ["X".repeat(100)]))).toBe("X".repeat(32));
    // Format characters render invisibly or reorder text: a hostile token must not pass for another
    // (U+202E right-to-left override, U+2066 isolate, zero-width space and joiner, BOM, line separator).
    const spoof = "\u202eHTE\u2066\u200b\u200d\ufeff\u2028";
    expect(decodeSymbol(encodeAbiParameters([{ type: "string" }], [spoof]))).toBe("HTE");
    expect(decodeSymbol(encodeAbiParameters([{ type: "string" }], ["\u200b\u200b"]))).toBeUndefined();
    for (const data of [null, "0x", "0x1234", encodeAbiParameters([{ type: "string" }], [""])] as const) expect(decodeSymbol(data)).toBeUndefined();
  });

  it("reads decimals as one word holding a uint8", () => {
    expect(decodeDecimals(encodeAbiParameters([{ type: "uint8" }], [6]))).toBe(6);
    expect(decodeDecimals(encodeAbiParameters([{ type: "uint256" }], [256n]))).toBeUndefined();
    expect(decodeDecimals("0x")).toBeUndefined();
    expect(decodeDecimals(null)).toBeUndefined();
  });
});
