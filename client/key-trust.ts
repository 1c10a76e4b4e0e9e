// Whether to trust the verification key the service serves. verifyBetProof recomputes a verdict,
// but under the served key: a lying service could serve a key that matches its lie. Two ways to
// anchor the key outside the service, the user's choice:
//
// - "pinned": the SHA-256 of the key's JSON text (exactly as served: `verificationKey { json }`)
//   equals a hash the user pinned (e.g. from the network operator's published ceremony);
// - "chain": the verifier contract BetVault calls (`BetVault.verifier()`), read through an RPC node
//   the user chooses, holds the key's constants in the order it uses them (the snarkjs template's
//   PUSH32 constants: client/wire/verifier-key-words.ts, the same comparison the indexer makes at
//   start). Pass the BetVault address you trust (the operator's), not only the one the service names.
import { compareKeyWithCode, type VerifierKeyCoordinates } from "./wire/verifier-key-words.ts";

export type KeyTrustAnchor = { pinnedSha256: string } | { rpcUrl: string; betVault: string };

export type KeyTrust =
  | { trusted: true; path: "pinned"; sha256: string }
  | { trusted: true; path: "chain"; rpcUrl: string; verifier: string }
  | { trusted: false; path: "pinned" | "chain"; reason: string };

/** `verifier()` of BetVault: the first four bytes of keccak256("verifier()"). */
export const VERIFIER_SELECTOR = "0x2b7ac3f3";

/** Lowercase hex SHA-256 of `text` as UTF-8 (WebCrypto: browsers and Node 20+). */
export async function sha256Hex(text: string): Promise<string> {
  const digest = await globalThis.crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

async function rpc(rpcUrl: string, method: string, params: unknown[], fetchImpl: typeof fetch): Promise<string> {
  const response = await fetchImpl(rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: unknown; error?: { message?: string } };
  if (typeof body.result !== "string") throw new Error(`${method}: ${body.error?.message ?? `HTTP ${response.status}`}`);
  return body.result;
}

/** Checks the served key's JSON text against the anchor the user chose; never throws. */
export async function checkServedKey(keyJson: string, anchor: KeyTrustAnchor, options: { fetch?: typeof fetch } = {}): Promise<KeyTrust> {
  if ("pinnedSha256" in anchor) {
    const pinned = anchor.pinnedSha256.toLowerCase().replace(/^0x/, "");
    const served = await sha256Hex(keyJson);
    return served === pinned
      ? { trusted: true, path: "pinned", sha256: served }
      : { trusted: false, path: "pinned", reason: `the served key's sha256 ${served} is not the pinned ${pinned}` };
  }
  const fetchImpl = options.fetch ?? globalThis.fetch;
  try {
    const key = JSON.parse(keyJson) as VerifierKeyCoordinates;
    const word = await rpc(anchor.rpcUrl, "eth_call", [{ to: anchor.betVault, data: VERIFIER_SELECTOR }, "latest"], fetchImpl);
    const verifier = `0x${word.slice(-40)}`;
    const code = await rpc(anchor.rpcUrl, "eth_getCode", [verifier, "latest"], fetchImpl);
    if (code.length <= 2) return { trusted: false, path: "chain", reason: `BetVault's verifier ${verifier} has no code` };
    const { total, missing, misplaced } = compareKeyWithCode(key, code);
    if (missing > 0)
      return {
        trusted: false,
        path: "chain",
        reason: `the chain's verifier ${verifier} does not hold the served key (${missing} of ${total} constants differ)`,
      };
    if (misplaced.length > 0) {
      return {
        trusted: false,
        path: "chain",
        reason: `the chain's verifier ${verifier} holds the served key's constants in another order (${misplaced.join(", ")})`,
      };
    }
    return { trusted: true, path: "chain", rpcUrl: anchor.rpcUrl, verifier };
  } catch (error) {
    return { trusted: false, path: "chain", reason: `could not check the key on chain: ${error instanceof Error ? error.message : String(error)}` };
  }
}
