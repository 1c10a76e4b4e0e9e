import { createHash } from "node:crypto";
import { InputError } from "../../core/errors.ts";

// Opaque keyset cursors: base64url JSON of the last row's sort key, bound to the query that made
// it by a hash of (wallet, filter, order). Reusing one with another query is BAD_USER_INPUT.

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

export function queryFingerprint(query: unknown): string {
  return createHash("sha256").update(JSON.stringify(query)).digest("base64url").slice(0, 16);
}

export function encodeCursor(fingerprint: string, key: SortKey): string {
  const payload: CursorPayload = { q: fingerprint, b: key.placedBlock.toString(), l: key.logIndex, c: key.chainId.toString() };
  return Buffer.from(JSON.stringify(payload)).toString("base64url");
}

export function decodeCursor(cursor: string, fingerprint: string): SortKey {
  const invalid = () => new InputError("`after` is not a cursor of this query: cursors are valid only with the same wallet, filter and orderDirection", { argumentName: "after" });
  if (cursor.length > 200 || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalid();
  let payload: Partial<CursorPayload>;
  try {
    payload = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as Partial<CursorPayload>;
  } catch {
    throw invalid();
  }
  const { q, b, l, c } = payload;
  if (q !== fingerprint || typeof b !== "string" || !/^\d{1,20}$/.test(b) || typeof c !== "string" || !/^\d{1,16}$/.test(c) ||
      typeof l !== "number" || !Number.isSafeInteger(l) || l < 0) {
    throw invalid();
  }
  return { placedBlock: BigInt(b), logIndex: l, chainId: BigInt(c) };
}
