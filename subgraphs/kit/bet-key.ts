/** DataLoader key of a bet, "chainId:betId": the same string however the ids arrived. */
export function betKey(chainId: number | bigint, betId: string): string {
  return `${chainId}:${betId}`;
}

export function splitBetKey(key: string): { chainId: bigint; betId: string } {
  const [chainId, betId] = key.split(":") as [string, string];
  return { chainId: BigInt(chainId), betId };
}

/** Keys grouped by chain: one `chainId = … AND betId IN (…)` clause per chain in a batch. */
export function betIdsByChain(keys: readonly string[]): Map<bigint, string[]> {
  const byChain = new Map<bigint, string[]>();
  for (const key of keys) {
    const { chainId, betId } = splitBetKey(key);
    byChain.set(chainId, [...(byChain.get(chainId) ?? []), betId]);
  }
  return byChain;
}
