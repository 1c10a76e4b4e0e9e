import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { encodingFor, negotiateEncoding, type CompressionSettings, type ContentEncoding } from "./compression.ts";

// encodingFor decides identity or an encoding from the Accept-Encoding header and the answer's size
// in bytes (UTF-8): the same decision as the rule written out plainly, over generated answers
// (multi-byte characters, sizes around the threshold) and headers. The headers are generated from
// a model (codings with their weights, as numbers), written out with any case, spacing and
// malformed weights, and the expected choice is read off the model: the code's own negotiation is
// never the expectation.

/** One entry of an Accept-Encoding header: its coding, and its weight (1 without `q`; 0 when malformed). */
interface Coding {
  name: "br" | "gzip" | "*" | "identity" | "compress";
  text: string;
  weight: number;
}
const randomCase = (text: string) =>
  fc.array(fc.boolean(), { minLength: text.length, maxLength: text.length }).map((upper) => [...text].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join(""));
const space = fc.constantFrom("", " ", "  ", "\t");
/** An RFC 9110 qvalue as written, with its number: 0, 0., 0.5, 0.125, 1, 1.000 … */
const qvalue = fc.oneof(
  fc.integer({ min: 0, max: 1000 }).chain((thousandths) =>
    fc.constantFrom(1, 2, 3).map((digits) => {
      const rounded = Math.floor(thousandths / 10 ** (3 - digits)) / 10 ** digits;
      return {
        text: rounded === 0 && digits === 1 ? "0" : rounded.toFixed(digits).replace(/^1\.\d+$/, "1.000".slice(0, digits + 2)),
        weight: rounded === 1 ? 1 : rounded,
      };
    }),
  ),
  fc.constantFrom({ text: "1", weight: 1 }, { text: "1.", weight: 1 }, { text: "0.", weight: 0 }, { text: "1.0", weight: 1 }),
  // Malformed: not acceptable at all.
  fc.constantFrom("1.5", "2", "0.1234", "oops", "-0.5", "", ".5", "1.001").map((text) => ({ text, weight: 0 })),
);
const coding: fc.Arbitrary<Coding> = fc
  .record({
    name: fc.constantFrom("br" as const, "gzip" as const, "*" as const, "identity" as const, "compress" as const),
    q: fc.option(qvalue, { nil: undefined }),
    before: space,
    after: space,
  })
  .chain(({ name, q, before, after }) =>
    randomCase(name).map((written) => ({
      name,
      text: `${before}${written}${q === undefined ? "" : `;${before}q=${q.text}`}${after}`,
      weight: q === undefined ? 1 : q.weight,
    })),
  );
const header = fc.oneof(
  { weight: 1, arbitrary: fc.constant(undefined) },
  { weight: 6, arbitrary: fc.array(coding, { maxLength: 5 }).map((codings) => ({ text: codings.map((c) => c.text).join(","), codings })) },
);
/** The rule, plainly: an encoding's weight is its own entry's (the last one), else `*`'s, else 0; the heaviest above 0 wins, br on a tie. */
function chosen(codings: Coding[]): ContentEncoding | undefined {
  const last = (name: Coding["name"]) => codings.filter((c) => c.name === name).at(-1)?.weight;
  const weight = (encoding: ContentEncoding) => last(encoding) ?? last("*") ?? 0;
  if (weight("br") > 0 && weight("br") >= weight("gzip")) return "br";
  return weight("gzip") > 0 ? "gzip" : undefined;
}

const settings = (minBytes: number): CompressionSettings => ({ minBytes, brotliQuality: 4, gzipLevel: 6 });

describe("encodingFor", () => {
  it("is the plain rule: identity below minBytes (UTF-8 bytes) or when nothing acceptable, else the negotiated encoding", () => {
    const seen = new Set<string>();
    const body = fc.oneof(
      fc.string({ unit: "grapheme", maxLength: 40 }),
      fc.string({ unit: "binary", maxLength: 40 }),
      fc.string({ maxLength: 40 }).map((s) => Buffer.from(s)),
    );
    fc.assert(
      fc.property(header, body, fc.integer({ min: -1, max: 120 }), (accept, answer, minBytes) => {
        const req = { headers: accept === undefined ? {} : { "accept-encoding": accept.text } };
        const expected = minBytes <= 0 || Buffer.byteLength(answer) < minBytes || accept === undefined ? undefined : chosen(accept.codings);
        expect(encodingFor(req, answer, settings(minBytes))).toBe(expected);
        if (accept) {
          expect(negotiateEncoding(accept.text), accept.text).toBe(chosen(accept.codings));
          seen.add(`${chosen(accept.codings)}`);
        }
      }),
      { numRuns: 2000 },
    );
    // Every choice was reached: br, gzip and identity.
    expect([...seen].sort()).toEqual(["br", "gzip", "undefined"]);
  });

  it("counts bytes, not characters: a string of fewer characters than minBytes but as many bytes is compressed", () => {
    const req = { headers: { "accept-encoding": "gzip" } };
    expect(encodingFor(req, "é".repeat(6), settings(12))).toBe("gzip");
    expect(encodingFor(req, "e".repeat(6), settings(12))).toBeUndefined();
  });
});
