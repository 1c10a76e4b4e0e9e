// What the response cache tests ask: one GraphQL POST with the headers that tell a hit from a
// miss, and the finalized bets of the fixture set (the answers that may be kept an hour).

export interface Answer {
  status: number;
  xCache: string | null;
  age: string | null;
  cacheControl: string | null;
  text: string;
  body: { data?: Record<string, unknown> | null; errors?: { extensions?: { code?: string } }[] };
}

export async function ask(url: string, query: string, variables?: Record<string, unknown>): Promise<Answer> {
  const response = await fetch(`${url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ query, variables }),
    signal: AbortSignal.timeout(20_000),
  });
  const text = await response.text();
  const h = response.headers;
  return {
    status: response.status,
    xCache: h.get("x-cache"),
    age: h.get("age"),
    cacheControl: h.get("cache-control"),
    text,
    body: JSON.parse(text) as Answer["body"],
  };
}

/** Ids of settled bets on 31337 whose settlement is finalized (what may be kept an hour). */
export async function finalizedSettledBetIds(url: string): Promise<string[]> {
  const ids = Array.from({ length: 100 }, (_, i) => String(i + 1));
  const { body } = await ask(url, `query ($ids: [UInt256!]!) { betResults(chainId: 31337, betIds: $ids) { betId status finalized } }`, { ids });
  const bets = (body.data!.betResults as ({ betId: string; status: string; finalized: boolean } | null)[]).filter((b) => b !== null);
  return bets.filter((b) => b.status === "SETTLED" && b.finalized).map((b) => b.betId);
}

export const FINAL_BET = `query ($betId: UInt256!) { betResult(chainId: 31337, betId: $betId) {
  betId player stake game status result { outcome won payout proof { piA piB piC publicSignals verified } } } }`;
