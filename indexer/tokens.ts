/**
 * What a bet's token is called and how many decimals its amounts have (`Bet.tokenInfo`): read from
 * the chain once per token and kept in the Token table, written in the same transaction as the
 * first bet in the token, so a served bet always has its row.
 *
 * - The native coin (address 0x0…0) is never called: its row comes from the network's
 *   `nativeCurrency` setting, rewritten at every start (IndexerStore.register).
 * - An ERC-20 token: `symbol()` and `decimals()` at the latest block. `symbol()` may be an ABI
 *   string or, in early tokens (MKR, SAI), a bytes32 padded with zeros: both are read.
 * - A call that reverts, returns nothing (no contract at the address) or returns something else
 *   gets the fallback, each call on its own: symbol "UNKNOWN", decimals 0. Decimals 0 rather than
 *   a guessed 18: amounts are then shown in the token's smallest unit, which is exact, whereas a
 *   wrong guess would misstate every amount by orders of magnitude. The fallback is stored like
 *   any answer (read once), so a non-standard token never stalls indexing.
 * - A call that fails otherwise (timeout, node down) is NOT a fallback: the commit fails and the
 *   sync loop retries it like any RPC failure.
 */
import { decodeAbiParameters, hexToString, size, type Hex } from "viem";
import type { ChainRpc } from "./rpc.ts";
import type { IndexerStore, TokenRow } from "./store.ts";

export const NATIVE_TOKEN = "0x0000000000000000000000000000000000000000";
export const TOKEN_FALLBACK = { symbol: "UNKNOWN", decimals: 0 } as const;

const SYMBOL = "0x95d89b41"; // symbol()
const DECIMALS = "0x313ce567"; // decimals()
/** Longest symbol kept (a hostile token may return megabytes). */
const MAX_SYMBOL_LENGTH = 32;

/** The symbol of a `symbol()` answer (ABI string or zero-padded bytes32); undefined when it is neither. */
export function decodeSymbol(data: Hex | null): string | undefined {
  if (data === null || data === "0x") return undefined;
  let text: string | undefined;
  try {
    [text] = decodeAbiParameters([{ type: "string" }], data);
  } catch {
    if (size(data) === 32) text = hexToString(data, { size: 32 }).replace(/\0+$/, "");
  }
  // Printable text only: control characters and lone surrogates would corrupt every page showing it,
  // and format characters (bidi overrides, zero-width ones) would let a symbol pass for another.
  const clean = text?.replace(/[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\uFFFD]/gu, "").trim();
  return clean ? [...clean].slice(0, MAX_SYMBOL_LENGTH).join("") : undefined;
}

/** The decimals of a `decimals()` answer (a uint8 in one word); undefined otherwise. */
export function decodeDecimals(data: Hex | null): number | undefined {
  if (data === null || size(data) !== 32) return undefined;
  const value = BigInt(data);
  return value <= 255n ? Number(value) : undefined;
}

/** One network's token rows: which tokens already have one, and reading the new ones. */
export class TokenMetadata {
  /** Addresses known to have a row (committed): no database read for them. */
  private readonly known = new Set<string>([NATIVE_TOKEN]);

  private readonly deps: { chainId: number; rpc: Pick<ChainRpc, "call">; store: Pick<IndexerStore, "storedTokens"> };
  constructor(deps: { chainId: number; rpc: Pick<ChainRpc, "call">; store: Pick<IndexerStore, "storedTokens"> }) {
    this.deps = deps;
  }

  /** The rows to write with a batch of bets: their tokens that have none yet, read from the chain. */
  async newTokens(addresses: Iterable<string>): Promise<TokenRow[]> {
    const unknown = [...new Set(addresses)].filter((a) => !this.known.has(a));
    if (unknown.length === 0) return [];
    const stored = await this.deps.store.storedTokens(this.deps.chainId, unknown);
    for (const address of stored) this.known.add(address);
    return Promise.all(unknown.filter((a) => !stored.has(a)).map((a) => this.read(a)));
  }

  /** After the commit that wrote `rows`: they exist now. */
  committed(rows: readonly TokenRow[]): void {
    for (const row of rows) this.known.add(row.address);
  }

  /** After a reset (the network's token rows were deleted). */
  forget(): void {
    this.known.clear();
    this.known.add(NATIVE_TOKEN);
  }

  private async read(address: string): Promise<TokenRow> {
    const [symbol, decimals] = await Promise.all([this.deps.rpc.call(address as Hex, SYMBOL), this.deps.rpc.call(address as Hex, DECIMALS)]);
    return {
      chainId: BigInt(this.deps.chainId),
      address,
      symbol: decodeSymbol(symbol) ?? TOKEN_FALLBACK.symbol,
      decimals: decodeDecimals(decimals) ?? TOKEN_FALLBACK.decimals,
    };
  }
}
