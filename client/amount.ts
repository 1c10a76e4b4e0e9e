// Token amounts as people read them: `stake` and `payout` are integers in the token's smallest unit
// (UInt256 decimal strings); `Bet.tokenInfo.decimals` says where the decimal point goes. Integer
// arithmetic only: a Number cannot hold 2^256 nor most wei amounts exactly.

/** What formatting needs of `Bet.tokenInfo`. */
export interface AmountToken {
  decimals: number;
  symbol?: string;
}

export interface FormatAmountOptions {
  /** Keep at most this many fraction digits, cutting toward zero (the text is then no longer exact). Default: all. */
  maxFractionDigits?: number;
  /** Append " SYMBOL" (the token's symbol). Default false. */
  withSymbol?: boolean;
}

function checkDecimals(decimals: number): bigint {
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > 255) throw new RangeError(`decimals must be an integer 0..255, not ${decimals}`);
  return 10n ** BigInt(decimals);
}

/**
 * An amount in the token's smallest unit (bigint or decimal string) as a decimal in whole tokens:
 * `formatAmount("1500000", { decimals: 6 })` is "1.5". Exact unless `maxFractionDigits` cuts it:
 * no trailing fraction zeros, no exponent, a leading "-" for a negative amount.
 */
export function formatAmount(amount: bigint | string, token: AmountToken, options: FormatAmountOptions = {}): string {
  const value = typeof amount === "bigint" ? amount : BigInt(amount);
  const unit = checkDecimals(token.decimals);
  const magnitude = value < 0n ? -value : value;
  let fraction = token.decimals > 0 ? (magnitude % unit).toString().padStart(token.decimals, "0") : "";
  if (options.maxFractionDigits !== undefined) fraction = fraction.slice(0, Math.max(0, options.maxFractionDigits));
  fraction = fraction.replace(/0+$/, "");
  const whole = magnitude / unit;
  const sign = value < 0n && (whole > 0n || fraction !== "") ? "-" : "";
  const text = `${sign}${whole}${fraction ? `.${fraction}` : ""}`;
  return options.withSymbol && token.symbol ? `${text} ${token.symbol}` : text;
}

/**
 * The inverse of formatAmount: a decimal in whole tokens ("1.5") → the amount in the smallest
 * unit (1500000n for 6 decimals). Throws on anything else, or on more fraction digits than the
 * token has (that would not be a whole number of units).
 */
export function parseAmount(text: string, token: AmountToken): bigint {
  const unit = checkDecimals(token.decimals);
  const match = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text.trim());
  if (!match) throw new SyntaxError(`not a decimal amount: ${JSON.stringify(text)}`);
  const [, sign, whole = "0", fraction = ""] = match;
  if (fraction.length > token.decimals) throw new RangeError(`${text} has more than ${token.decimals} fraction digits`);
  const units = BigInt(whole) * unit + (fraction ? BigInt(fraction.padEnd(token.decimals, "0")) : 0n);
  return sign ? -units : units;
}
