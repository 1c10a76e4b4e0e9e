import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { InputError } from "../../core/errors.ts";

// Opaque keyset cursors: base64url JSON of the last row's sort key and `q`, a MAC of that key under
// the query's fingerprint, itself an HMAC of (wallet, filter, order) under the deployment's cursor
// key. A client sees neither key nor fingerprint, so it cannot make a cursor the server did not
// issue: an edited field (in range or not), or a cursor of another query, is BAD_USER_INPUT.
// Replicas of the history subgraph must share the key (CURSOR_SECRET) to accept each other's.
// During a rotation the previous key (CURSOR_SECRET_PREVIOUS) still verifies what it signed, and
// only the current one signs: published cursors keep working until the previous key is removed.

/** The key when none is configured: cursors are valid in this process only (a restart voids them). */
const PROCESS_KEY = randomBytes(32);

/** The cursor key of a configured secret: the same in every process given the same secret. */
export function cursorKeyFrom(secret: string): Uint8Array {
  return createHash("sha256").update(`bet-results cursor key\0${secret}`).digest();
}

/** The deployment's cursor keys (SubgraphDeps): unset `cursorKey`, a key of this process only. */
export interface CursorKeys {
  cursorKey?: Uint8Array;
  /** During a rotation: cursors it signed are still accepted; nothing new is signed with it. */
  previousCursorKey?: Uint8Array;
}

/** In production the history subgraph's cursors need a configured key: none, and it must not start. */
export const MISSING_CURSOR_SECRET =
  "CURSOR_SECRET is required with NODE_ENV=production (at least 16 characters, shared by every history replica): without it anyone could mint cursors; see docs/guides/operating.md";

/** The MAC a cursor carries for its sort-key fields under its query's fingerprint. */
function sign(fingerprint: string, fields: readonly string[]): string {
  return createHmac("sha256", fingerprint).update(fields.join("\0")).digest("base64url").slice(0, 22);
}

function signedBy(q: unknown, fingerprint: string, fields: readonly string[]): boolean {
  if (typeof q !== "string") return false;
  const expected = Buffer.from(sign(fingerprint, fields));
  const given = Buffer.from(q);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export interface SortKey {
  placedBlock: bigint;
  logIndex: number;
  chainId: bigint;
}

interface CursorPayload {
  q: string;
  b: string;
  l: number;
  c: string;
}

/** The secret a query's cursors are signed under (never sent): `key` is the deployment's cursor key. */
export function queryFingerprint(query: unknown, key: Uint8Array = PROCESS_KEY): string {
  return createHmac("sha256", key).update(JSON.stringify(query)).digest("base64url");
}

/**
 * A query's fingerprints under the deployment's keys: new cursors are signed with the first (the
 * current key's); a cursor signed with any of them is accepted.
 */
export type Fingerprints = readonly [string, ...string[]];

export function queryFingerprints(query: unknown, keys: CursorKeys): Fingerprints {
  const current = queryFingerprint(query, keys.cursorKey);
  return keys.previousCursorKey ? [current, queryFingerprint(query, keys.previousCursorKey)] : [current];
}

export function encodeCursor(fingerprint: string, key: SortKey): string {
  const fields = [key.placedBlock.toString(), String(key.logIndex), key.chainId.toString()];
  const payload: CursorPayload = { q: sign(fingerprint, fields), b: fields[0]!, l: key.logIndex, c: fields[2]! };
  return Buffer.from(JSON.stringify(payload)).toString("base64url");
}

/** Column ranges: placedBlock is int8, placedLogIndex int4, chainId a ChainId (1 … 2^53−1). */
const INT8_MAX = (1n << 63n) - 1n;
const INT4_MAX = 2 ** 31 - 1;
const DECIMAL = /^(0|[1-9][0-9]{0,18})$/;

function sortKeyOf(payload: unknown, fingerprint: string): SortKey | undefined {
  if (!payload || typeof payload !== "object" || Array.isArray(payload)) return undefined;
  const { q, b, l, c } = payload as Partial<CursorPayload>;
  if (typeof b !== "string" || typeof c !== "string" || typeof l !== "number") return undefined;
  if (!DECIMAL.test(b) || !DECIMAL.test(c) || !Number.isInteger(l) || l < 0 || l > INT4_MAX) return undefined;
  if (!signedBy(q, fingerprint, [b, String(l), c])) return undefined;
  const placedBlock = BigInt(b);
  const chainId = BigInt(c);
  if (placedBlock > INT8_MAX || chainId < 1n || chainId > BigInt(Number.MAX_SAFE_INTEGER)) return undefined;
  return { placedBlock, logIndex: l, chainId };
}

/** The key a cursor holds, when it is exactly what `encode` writes for that key (see decodeCursor). */
function decodeStrict<K>(
  cursor: string,
  fingerprints: string | Fingerprints,
  keyOf: (payload: unknown, fingerprint: string) => K | undefined,
  encode: (fingerprint: string, key: K) => string,
  bound: string,
): K {
  const invalid = () =>
    new InputError(`\`after\` is not a cursor of this query: cursors are valid only with the same ${bound} and orderDirection`, { argumentName: "after" });
  if (cursor.length > 300 || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalid();
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw invalid();
  }
  for (const fingerprint of typeof fingerprints === "string" ? [fingerprints] : fingerprints) {
    const key = keyOf(payload, fingerprint);
    if (key && encode(fingerprint, key) === cursor) return key;
  }
  throw invalid();
}

/**
 * The sort key of a cursor this server wrote for this query (wallet, filter, order), or
 * BAD_USER_INPUT naming `after`; signed under any of the query's fingerprints. Strict: every field of its type and within its column's range,
 * and the cursor must be exactly what `encodeCursor` writes for that key (no other key order,
 * spacing, extra keys, leading zeros or base64 variants), so an edited cursor never reaches SQL.
 */
export function decodeCursor(cursor: string, fingerprints: string | Fingerprints): SortKey {
  return decodeStrict(cursor, fingerprints, sortKeyOf, encodeCursor, "wallet, filter");
}

/** The explorer's (`bets`) page order: placedAt, then chainId, then betId (unique within a chain). */
export interface ExplorerKey {
  placedAt: bigint;
  chainId: bigint;
  betId: bigint;
}

interface ExplorerPayload {
  q: string;
  t: string;
  c: string;
  i: string;
}

const UINT256_MAX = (1n << 256n) - 1n;
const UINT256_DECIMAL = /^(0|[1-9][0-9]{0,77})$/;

export function encodeExplorerCursor(fingerprint: string, key: ExplorerKey): string {
  const fields = [key.placedAt.toString(), key.chainId.toString(), key.betId.toString()];
  const payload: ExplorerPayload = { q: sign(fingerprint, fields), t: fields[0]!, c: fields[1]!, i: fields[2]! };
  return Buffer.from(JSON.stringify(payload)).toString("base64url");
}

function explorerKeyOf(payload: unknown, fingerprint: string): ExplorerKey | undefined {
  if (!payload || typeof payload !== "object" || Array.isArray(payload)) return undefined;
  const { q, t, c, i } = payload as Partial<ExplorerPayload>;
  if (typeof t !== "string" || typeof c !== "string" || typeof i !== "string") return undefined;
  if (!DECIMAL.test(t) || !DECIMAL.test(c) || !UINT256_DECIMAL.test(i)) return undefined;
  if (!signedBy(q, fingerprint, [t, c, i])) return undefined;
  const key = { placedAt: BigInt(t), chainId: BigInt(c), betId: BigInt(i) };
  if (key.placedAt > INT8_MAX || key.chainId < 1n || key.chainId > BigInt(Number.MAX_SAFE_INTEGER) || key.betId > UINT256_MAX) return undefined;
  return key;
}

/** As decodeCursor, for a `bets` cursor of this filter and order. */
export function decodeExplorerCursor(cursor: string, fingerprints: string | Fingerprints): ExplorerKey {
  return decodeStrict(cursor, fingerprints, explorerKeyOf, encodeExplorerCursor, "filter");
}
