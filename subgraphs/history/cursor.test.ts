import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { InputError } from "../../core/errors.ts";
import { cursorKeyFrom, decodeCursor, decodeExplorerCursor, encodeCursor, encodeExplorerCursor, queryFingerprint, queryFingerprints } from "./cursor.ts";

// A cursor is accepted only as the server writes it: canonical base64url of canonical JSON, each
// field of its type and within the range of its column; anything else is BAD_USER_INPUT on `after`.

const fingerprint = queryFingerprint(["0xwallet", null, null, null, null, null, "DESC"]);
const key = { placedBlock: 123456n, logIndex: 7, chainId: 31337n };
const issued = encodeCursor(fingerprint, key);
const payload = JSON.parse(Buffer.from(issued, "base64url").toString("utf8")) as Record<string, unknown>;
const reencode = (edited: unknown) => Buffer.from(JSON.stringify(edited)).toString("base64url");

function expectRefused(cursor: string) {
  let thrown: unknown;
  try {
    decodeCursor(cursor, fingerprint);
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(InputError);
  expect((thrown as InputError).extensions).toMatchObject({ code: "BAD_USER_INPUT", argumentName: "after" });
}

const INT8_MAX = (1n << 63n) - 1n;
const INT4_MAX = 2 ** 31 - 1;

describe("cursors", () => {
  it("decodes what it encodes", () => {
    expect(decodeCursor(issued, fingerprint)).toEqual(key);
    const extreme = { placedBlock: INT8_MAX, logIndex: INT4_MAX, chainId: BigInt(Number.MAX_SAFE_INTEGER) };
    expect(decodeCursor(encodeCursor(fingerprint, extreme), fingerprint)).toEqual(extreme);
  });

  it.each([
    ["b: 20 digits", { b: "99999999999999999999" }],
    ["b: past int8", { b: (INT8_MAX + 1n).toString() }],
    ["b: hex", { b: "0x10" }],
    ["b: negative", { b: "-1" }],
    ["b: leading zero", { b: "0123456" }],
    ["b: a number", { b: 123456 }],
    ["l: 2^40", { l: 2 ** 40 }],
    ["l: past int4", { l: INT4_MAX + 1 }],
    ["l: 1.5", { l: 1.5 }],
    ["l: -1", { l: -1 }],
    ["l: a string", { l: "7" }],
    ["c: zero", { c: "0" }],
    ["c: past 2^53", { c: "9007199254740992" }],
    ["c: hex", { c: "0x10" }],
    ["c: leading zero", { c: "031337" }],
    ["q: another query", { q: queryFingerprint(["other"]) }],
    ["an extra key", { x: 1 }],
    ["a missing key", { l: undefined }],
  ])("refuses an edited cursor (%s)", (_what, edit) => {
    expectRefused(reencode({ ...payload, ...edit }));
  });

  it("refuses a cursor re-encoded in another shape (key order, spacing, padding)", () => {
    const { q, b, l, c } = payload;
    expectRefused(reencode({ b, q, l, c }));
    expectRefused(Buffer.from(JSON.stringify(payload, null, 1)).toString("base64url"));
    expectRefused(Buffer.from(JSON.stringify(payload)).toString("base64"));
    expectRefused(`${issued}A`);
    expectRefused(issued.slice(0, -2));
  });

  it("refuses every edited cursor, in range or not: only what the server signed is accepted", () => {
    const value = fc.oneof(
      fc.bigInt({ min: -(1n << 70n), max: 1n << 70n }).map(String),
      fc.stringMatching(/^[0-9]{1,25}$/),
      fc.integer({ min: 0, max: INT4_MAX }),
      fc.integer(),
      fc.double(),
      fc.constantFrom(2 ** 40, 2 ** 53, 1.5, -1, "0x10", "-1", "", null, true, [], {}),
      fc.string(),
    );
    fc.assert(
      fc.property(fc.constantFrom("q", "b", "l", "c"), value, (field, edited) => {
        fc.pre(JSON.stringify(edited) !== JSON.stringify(payload[field as keyof typeof payload]));
        expectRefused(reencode({ ...payload, [field]: edited }));
      }),
      { numRuns: 2000 },
    );
    // In range and well formed, yet not issued: another block, log index or chain.
    for (const edit of [{ b: "1" }, { l: 0 }, { c: "1337" }]) expectRefused(reencode({ ...payload, ...edit }));
  });

  it("accepts a cursor signed with the same secret in another process, refuses one signed with another", () => {
    const query = ["0xwallet", null, null, null, null, null, "DESC"];
    const key = { placedBlock: 12n, logIndex: 3, chainId: 1n };
    const shared = cursorKeyFrom("replicas share this");
    const issued = encodeCursor(queryFingerprint(query, shared), key);
    expect(decodeCursor(issued, queryFingerprint(query, cursorKeyFrom("replicas share this")))).toEqual(key);
    expect(() => decodeCursor(issued, queryFingerprint(query, cursorKeyFrom("another deployment")))).toThrow(InputError);
    expect(() => decodeCursor(issued, queryFingerprint(query))).toThrow(InputError);
  });

  it("during a rotation accepts cursors signed with the previous secret, signs new ones with the current one", () => {
    const query = ["0xwallet", null, null, null, null, null, "DESC"];
    const explorerQuery = ["bets", null, null, null, null, null, null, null, "DESC"];
    const key = { placedBlock: 12n, logIndex: 3, chainId: 1n };
    const explorerKey = { placedAt: 1_700_000_000n, chainId: 1n, betId: 5n };
    const before = { cursorKey: cursorKeyFrom("the secret until today") };
    const rotating = { cursorKey: cursorKeyFrom("the secret from today"), previousCursorKey: cursorKeyFrom("the secret until today") };
    const after = { cursorKey: cursorKeyFrom("the secret from today") };
    const published = encodeCursor(queryFingerprints(query, before)[0], key);
    const publishedExplorer = encodeExplorerCursor(queryFingerprints(explorerQuery, before)[0], explorerKey);

    expect(decodeCursor(published, queryFingerprints(query, rotating))).toEqual(key);
    expect(decodeExplorerCursor(publishedExplorer, queryFingerprints(explorerQuery, rotating))).toEqual(explorerKey);
    const fresh = encodeCursor(queryFingerprints(query, rotating)[0], key);
    expect(fresh).not.toBe(published);
    expect(decodeCursor(fresh, queryFingerprints(query, after))).toEqual(key);

    // The previous secret removed: what it signed is refused.
    expect(() => decodeCursor(published, queryFingerprints(query, after))).toThrow(InputError);
    expect(() => decodeExplorerCursor(publishedExplorer, queryFingerprints(explorerQuery, after))).toThrow(InputError);
    // The previous secret signs nothing new, and a cursor of another query is refused under either.
    expect(() => decodeCursor(fresh, queryFingerprints(query, before))).toThrow(InputError);
    expect(() => decodeCursor(published, queryFingerprints(["0xother", null, null, null, null, null, "DESC"], rotating))).toThrow(InputError);
  });
});

describe("explorer (bets) cursors", () => {
  const explorerFingerprint = queryFingerprint(["bets", null, null, null, null, null, null, null, "DESC"]);
  const UINT256_MAX = (1n << 256n) - 1n;
  const refused = (cursor: string, print = explorerFingerprint) => {
    expect(() => decodeExplorerCursor(cursor, print)).toThrow(InputError);
    try {
      decodeExplorerCursor(cursor, print);
    } catch (error) {
      expect((error as InputError).extensions).toMatchObject({ code: "BAD_USER_INPUT", argumentName: "after" });
    }
  };

  it("decodes what it encodes, up to the columns' ranges, and fits the cursor length limit", () => {
    const extreme = { placedAt: INT8_MAX, chainId: BigInt(Number.MAX_SAFE_INTEGER), betId: UINT256_MAX };
    const cursor = encodeExplorerCursor(explorerFingerprint, extreme);
    expect(decodeExplorerCursor(cursor, explorerFingerprint)).toEqual(extreme);
    expect(cursor.length).toBeLessThanOrEqual(300);
  });

  it("refuses edits, out-of-range fields, another query's cursor and a playerBets cursor", () => {
    const key = { placedAt: 1_700_000_000n, chainId: 1n, betId: 42n };
    const issuedHere = encodeExplorerCursor(explorerFingerprint, key);
    const json = JSON.parse(Buffer.from(issuedHere, "base64url").toString("utf8")) as Record<string, unknown>;
    for (const edit of [
      { i: "042" },
      { i: "43" },
      { t: "1700000001" },
      { c: "2" },
      { i: (UINT256_MAX + 1n).toString() },
      { t: (INT8_MAX + 1n).toString() },
      { c: "0" },
      { i: 42 },
      { extra: 1 },
    ]) {
      refused(reencode({ ...json, ...edit }));
    }
    refused(issuedHere, queryFingerprint(["bets", 1, null, null, null, null, null, null, "DESC"]));
    refused(encodeCursor(explorerFingerprint, { placedBlock: 1n, logIndex: 0, chainId: 1n }));
    expect(() => decodeCursor(issuedHere, explorerFingerprint)).toThrow(InputError);
  });
});
