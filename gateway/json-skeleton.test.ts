import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { jsonSkeleton } from "./json-skeleton.ts";

// The skeleton scan stands in for JSON.parse where the gateway forwards a subgraph's data
// (gateway/forwarded-data.ts): it must accept exactly what JSON.parse accepts, and keep exactly
// the objects and lists of the members it is asked for.

/** What the skeleton of a parsed value must be: kept members' objects and lists, everything else null. */
function expectedSkeleton(value: unknown, keys: ReadonlySet<string>): unknown {
  if (Array.isArray(value)) return value.map((item) => expectedSkeleton(item, keys));
  if (typeof value !== "object" || value === null) return null;
  const skeleton: Record<string, unknown> = Object.create(null);
  for (const [key, member] of Object.entries(value)) if (keys.has(key)) skeleton[key] = expectedSkeleton(member, keys);
  return skeleton;
}

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Whether the scan accepts the whole text as one value (JSON.parse allows whitespace around it). */
function scansWhole(text: string): boolean {
  const scanned = jsonSkeleton(text, new Set());
  return scanned !== undefined && /^[ \t\n\r]*$/.test(text.slice(scanned.end));
}

// More names than the scan matches in place (8): subsets of either size are drawn.
const KEYS = ["a", "b", "result", "__proto__", "é", "c", "d", "e", "f", "g", "h"];

describe("jsonSkeleton", () => {
  it("keeps the objects and lists of the asked members of any JSON value, and ends where the value does", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.subarray(KEYS), fc.constantFrom("", " ", "\n"), (value, keys, space) => {
        const text = `${space}${JSON.stringify(value, null, space.length > 0 ? 1 : undefined)}`;
        const scanned = jsonSkeleton(text, new Set(keys));
        expect(scanned?.end).toBe(text.length);
        expect(scanned?.skeleton).toEqual(expectedSkeleton(JSON.parse(text), new Set(keys)));
      }),
      { numRuns: 500 },
    );
  });

  it("keeps the same members whether it matches keys in place (a few names) or by lookup (many, as aliases make)", () => {
    const text = JSON.stringify({ a: { b: [{ c: 1, result: { d: 2 } }], x: { y: 1 } }, z: [1, { a: 2 }], é: { b: null } });
    const few = new Set(["a", "b", "result"]);
    const many = new Set([...few, "n1", "n2", "n3", "n4", "n5", "n6"]);
    expect(jsonSkeleton(text, few)?.skeleton).toEqual(expectedSkeleton(JSON.parse(text), few));
    expect(jsonSkeleton(text, many)?.skeleton).toEqual(jsonSkeleton(text, few)?.skeleton);
    expect(jsonSkeleton(text, few)?.skeleton).toEqual({ a: { b: [{ result: {} }] } });
  });

  it("accepts exactly what JSON.parse accepts", () => {
    const samples = [
      '{"a":1}',
      '{"a":1,}',
      "[1,]",
      "[01]",
      "[-]",
      "[1.]",
      "[.5]",
      "[1e]",
      "[1e+5, -0.5E-3, 0, -0]",
      '["\\u00e9\\ud83c\\udfb2"]',
      '["\\u00g9"]',
      '["\\x"]',
      '["a\u0001"]',
      '["\u2028é€🎲"]',
      '{"a" 1}',
      '{"a":1 "b":2}',
      "{a:1}",
      "[tru]",
      "[true, false, null]",
      "[nul",
      '{"a":"',
      '"\\',
      "",
      "  ",
      "{}}",
      "[] []",
    ];
    for (const text of samples) expect(scansWhole(text), text).toBe(parses(text));
    // Any text cut from, or spliced into, a JSON text.
    fc.assert(
      fc.property(fc.jsonValue(), fc.nat(), fc.nat(), fc.string({ maxLength: 3 }), (value, cut, at, insert) => {
        const json = JSON.stringify(value);
        const text = `${json.slice(0, at % (json.length + 1))}${insert}${json.slice(at % (json.length + 1))}`.slice(0, json.length + 3 - (cut % 4));
        expect(scansWhole(text), text).toBe(parses(text));
      }),
      { numRuns: 2000 },
    );
  });

  it("keeps the last of repeated members, reads escaped keys, and makes `__proto__` an own member", () => {
    const scanned = jsonSkeleton('{"a":{"x":1},"a":[{}],"\\u0062":{},"__proto__":{"a":{}}}', new Set(["a", "b", "__proto__"]));
    expect(scanned?.skeleton).toEqual(expectedSkeleton(JSON.parse('{"a":[{}],"b":{},"__proto__":{"a":{}}}'), new Set(["a", "b", "__proto__"])));
    expect(Object.getPrototypeOf(scanned?.skeleton)).toBeNull();
  });

  it("refuses, without throwing, a value nested deeper than it can follow", () => {
    const deep = `${"[".repeat(200_000)}${"]".repeat(200_000)}`;
    expect(() => jsonSkeleton(deep, new Set())).not.toThrow();
  });
});
