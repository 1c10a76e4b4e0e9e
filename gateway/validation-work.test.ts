import { parse } from "graphql";
import { describe, expect, it } from "vitest";
import { FREE_OVERLAP_PAIRS, overlapPairs, validationPoints } from "./validation-work.ts";

const copies = (n: number, field: string) => Array.from({ length: n }, () => field).join(" ");

describe("overlapPairs", () => {
  it("counts pairs of one response name per selection set, aliases by their alias", () => {
    expect(overlapPairs(parse("{ a b c }"))).toBe(0);
    expect(overlapPairs(parse(`{ ${copies(4, "a")} }`))).toBe(6);
    expect(overlapPairs(parse("{ x: a x: b a }"))).toBe(1);
  });

  it("merges the sub-selections of same-named fields and counts them again", () => {
    // 3 pairs of `n`, then 3 pairs of `c` and 3 of `d` below them merged.
    expect(overlapPairs(parse(`{ ${copies(3, "n { c d }")} }`))).toBe(9);
  });

  it("spreads fragments and inline fragments in place, and counts each fragment definition too", () => {
    // The operation: n twice (1 pair) and c twice below (1 pair); fragments A and B alone: none.
    expect(overlapPairs(parse("{ ...A ... on Query { ...B } } fragment A on Query { n { c } } fragment B on Query { n { c } }"))).toBe(2);
  });

  it("stops at a fragment cycle and at its bounds: a fragment bomb is counted in bounded time", () => {
    expect(overlapPairs(parse("{ ...A } fragment A on Query { a ...A }"))).toBe(0);
    // A cycle through fields (A's field spreads B, which spreads A): each level is one more field deep.
    expect(overlapPairs(parse("{ ...A } fragment A on Query { n { ...B } } fragment B on N { ...A }"))).toBe(0);
    const bomb = Array.from({ length: 40 }, (_, i) => `fragment F${i} on Query { ...F${i + 1} ...F${i + 1} }`).join(" ");
    expect(overlapPairs(parse(`{ ...F0 } ${bomb} fragment F40 on Query { a }`))).toBeGreaterThan(0);
  });
});

describe("validationPoints", () => {
  it("is free up to FREE_OVERLAP_PAIRS, then half a point a pair", () => {
    const free = Math.floor((1 + Math.sqrt(1 + 8 * FREE_OVERLAP_PAIRS)) / 2); // n with n(n-1)/2 <= FREE
    expect(validationPoints(parse(`{ ${copies(free, "a")} }`))).toBe(0);
    const n = 200;
    expect(validationPoints(parse(`{ ${copies(n, "a")} }`))).toBe(Math.ceil(((n * (n - 1)) / 2 - FREE_OVERLAP_PAIRS) / 2));
  });
});
