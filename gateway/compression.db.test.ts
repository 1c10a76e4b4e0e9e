// Answers above the threshold come back compressed when the client accepts it (Brotli first,
// then gzip, q-values honoured), decompress to exactly the identity answer, and say
// `Vary: Accept-Encoding`; small answers and clients that accept nothing get identity.
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { negotiateEncoding } from "../core/compression.ts";
import { startTestStack, type TestStack } from "../test/stack.ts";
import { ask, type Reply } from "../test/raw-graphql.ts";

let t: TestStack;
beforeAll(async () => {
  t = await startTestStack();
});
afterAll(() => t?.close());

/** A raw POST (fetch would decompress by itself and hide the headers' meaning). */
function post(query: string, acceptEncoding?: string): Promise<Reply> {
  return ask(t.url, { query, headers: acceptEncoding === undefined ? {} : { "accept-encoding": acceptEncoding } });
}

const LARGE = `{ playerBets(wallet: "WHALE", first: 100) { nodes { chainId betId player token stake game clientSeed serverSeedHash status placedTx result { won outcome payout } } } }`;
const SMALL = "{ networkConfigs { chainId } }";

describe("response compression", () => {
  it("compresses a large answer with Brotli, else gzip, to the same bytes as identity", async () => {
    const query = LARGE.replace("WHALE", t.fixtures.whale);
    const identity = await post(query, "identity");
    expect(identity.status).toBe(200);
    expect(identity.headers["content-encoding"]).toBeUndefined();
    expect(identity.body.length).toBeGreaterThan(10_000);
    expect(JSON.parse(identity.body.toString("utf8")).errors).toBeUndefined();

    const br = await post(query, "gzip, deflate, br");
    expect(br.headers["content-encoding"]).toBe("br");
    expect(br.headers.vary).toMatch(/accept-encoding/i);
    expect(Number(br.headers["content-length"])).toBe(br.body.length);
    expect(br.body.length).toBeLessThan(identity.body.length / 3);
    expect(brotliDecompressSync(br.body).equals(identity.body)).toBe(true);

    const gz = await post(query, "gzip");
    expect(gz.headers["content-encoding"]).toBe("gzip");
    expect(gunzipSync(gz.body).equals(identity.body)).toBe(true);

    const preferGzip = await post(query, "br;q=0.5, gzip;q=1");
    expect(preferGzip.headers["content-encoding"]).toBe("gzip");
    const refused = await post(query, "br;q=0, gzip;q=0");
    expect(refused.headers["content-encoding"]).toBeUndefined();
    expect(refused.body.equals(identity.body)).toBe(true);
    const none = await post(query);
    expect(none.headers["content-encoding"]).toBeUndefined();
  });

  it("sends small answers as they are", async () => {
    const small = await post(SMALL, "br, gzip");
    expect(small.status).toBe(200);
    expect(small.body.length).toBeLessThan(1024);
    expect(small.headers["content-encoding"]).toBeUndefined();
  });

  it("never picks an encoding the client did not accept", () => {
    const token = fc.constantFrom("br", "gzip", "deflate", "identity", "*", "compress", "BR", "Gzip");
    const q = fc.option(fc.constantFrom("0", "0.0", "0.5", "1", "1.0", "0.001", "x"), { nil: undefined });
    fc.assert(
      fc.property(fc.array(fc.tuple(token, q), { maxLength: 6 }), (entries) => {
        const header = entries.map(([name, weight]) => (weight === undefined ? name : `${name};q=${weight}`)).join(", ");
        const chosen = negotiateEncoding(header);
        if (chosen === undefined) return;
        // The chosen coding is listed (or covered by `*`) with a weight above zero.
        const listed = entries.filter(([name]) => name.toLowerCase() === chosen);
        const wildcard = entries.filter(([name]) => name === "*");
        const weightOf = (list: typeof entries) => list.map(([, weight]) => (weight === undefined ? 1 : Number(weight))).at(-1);
        // A malformed weight (NaN here) must never have been chosen: the comparison below fails for it.
        // (a header naming the same coding twice: the last one counts, as in the implementation)
        const weight = listed.length ? weightOf(listed) : weightOf(wildcard);
        expect(weight, header).toBeGreaterThan(0);
      }),
    );
  });
});
