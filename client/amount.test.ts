import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatAmount, parseAmount } from "./amount.ts";

describe("formatAmount", () => {
  it("places the decimal point at the token's decimals, exactly", () => {
    expect(formatAmount("1500000", { decimals: 6 })).toBe("1.5");
    expect(formatAmount(10n ** 18n, { decimals: 18 })).toBe("1");
    expect(formatAmount("1", { decimals: 18 })).toBe("0.000000000000000001");
    expect(formatAmount("123", { decimals: 0 })).toBe("123");
    expect(formatAmount("0", { decimals: 9 })).toBe("0");
    expect(formatAmount(-1500n, { decimals: 3 })).toBe("-1.5");
    // 2^256 − 1 wei: far beyond what a Number holds, still exact.
    const max = (1n << 256n) - 1n;
    expect(formatAmount(max, { decimals: 18 })).toBe("115792089237316195423570985008687907853269984665640564039457.584007913129639935");
  });

  it("cuts fraction digits toward zero when asked, and appends the symbol when asked", () => {
    expect(formatAmount("1999999", { decimals: 6 }, { maxFractionDigits: 2 })).toBe("1.99");
    expect(formatAmount("1000001", { decimals: 6 }, { maxFractionDigits: 4 })).toBe("1");
    expect(formatAmount("-1", { decimals: 6 }, { maxFractionDigits: 2 })).toBe("0");
    expect(formatAmount("2500000", { decimals: 6, symbol: "USDC" }, { withSymbol: true })).toBe("2.5 USDC");
  });

  it("refuses decimals that are not a uint8 and text that is not an amount", () => {
    expect(() => formatAmount("1", { decimals: -1 })).toThrow(RangeError);
    expect(() => formatAmount("1", { decimals: 1.5 })).toThrow(RangeError);
    expect(() => parseAmount("1e18", { decimals: 18 })).toThrow(SyntaxError);
    expect(() => parseAmount("0.1234567", { decimals: 6 })).toThrow(RangeError);
  });

  it("parses back to the original amount, for any amount and decimals (property)", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(1n << 256n), max: 1n << 256n }), fc.integer({ min: 0, max: 255 }), (amount, decimals) => {
        const text = formatAmount(amount, { decimals });
        expect(text).toMatch(/^-?\d+(\.\d*[1-9])?$/);
        expect(parseAmount(text, { decimals })).toBe(amount);
      }),
      { numRuns: 2_000 },
    );
  });
});
