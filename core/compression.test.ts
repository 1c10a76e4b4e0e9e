import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { encodingFor, negotiateEncoding, type CompressionSettings } from "./compression.ts";

// encodingFor decides identity or an encoding from the Accept-Encoding header and the answer's size
// in bytes (UTF-8): the same decision as the rule written out plainly, over generated answers
// (multi-byte characters, sizes around the threshold) and headers.

const plainRule = (acceptEncoding: string | undefined, body: string | Buffer, settings: CompressionSettings) =>
  settings.minBytes <= 0 || Buffer.byteLength(body) < settings.minBytes ? undefined : negotiateEncoding(acceptEncoding);

const settings = (minBytes: number): CompressionSettings => ({ minBytes, brotliQuality: 4, gzipLevel: 6 });

describe("encodingFor", () => {
  it("is the plain rule: identity below minBytes (UTF-8 bytes) or when nothing acceptable, else the negotiated encoding", () => {
    const header = fc.option(fc.constantFrom("gzip", "br", "gzip, br", "br;q=0", "identity", "*", "gzip;q=0.5, br;q=0.9", "x;q=oops", ""), { nil: undefined });
    const body = fc.oneof(
      fc.string({ unit: "grapheme", maxLength: 40 }),
      fc.string({ unit: "binary", maxLength: 40 }),
      fc.string({ maxLength: 40 }).map((s) => Buffer.from(s)),
    );
    fc.assert(
      fc.property(header, body, fc.integer({ min: -1, max: 120 }), (acceptEncoding, answer, minBytes) => {
        const req = { headers: acceptEncoding === undefined ? {} : { "accept-encoding": acceptEncoding } };
        expect(encodingFor(req, answer, settings(minBytes))).toBe(plainRule(acceptEncoding, answer, settings(minBytes)));
      }),
      { numRuns: 2000 },
    );
  });

  it("counts bytes, not characters: a string of fewer characters than minBytes but as many bytes is compressed", () => {
    const req = { headers: { "accept-encoding": "gzip" } };
    expect(encodingFor(req, "é".repeat(6), settings(12))).toBe("gzip");
    expect(encodingFor(req, "e".repeat(6), settings(12))).toBeUndefined();
  });
});
