// Which GraphQL answer an Accept header allows, decided once at the door. Apollo Server negotiates
// its answer's media type only after it has run the operation: a request whose Accept allows
// neither JSON type was executed in full (subgraphs, database, points) and then answered 406,
// its work thrown away. The door decides instead, before anything runs, and hands Apollo Server
// the type it chose, so the two can never disagree.

/** The media types of a single GraphQL answer, in Apollo Server's order of preference on a tie. */
export const GRAPHQL_ANSWER_TYPES = ["application/json; charset=utf-8", "application/graphql-response+json; charset=utf-8"] as const;
export type GraphQLAnswerType = (typeof GRAPHQL_ANSWER_TYPES)[number];

interface Range {
  type: string;
  subtype: string;
  params: Map<string, string>;
  q: number;
  order: number;
}

const unquote = (value: string) => (value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value);

function rangesOf(accept: string): Range[] {
  const ranges: Range[] = [];
  for (const [order, part] of accept.split(",").entries()) {
    const [mediaType = "", ...parameters] = part.split(";");
    const [type, subtype, ...extra] = mediaType.trim().toLowerCase().split("/");
    if (!type || subtype === undefined || extra.length > 0) continue;
    const params = new Map<string, string>();
    let q = 1;
    const seen = new Set<string>();
    for (const parameter of parameters) {
      const at = parameter.indexOf("=");
      if (at < 0) continue;
      const key = parameter.slice(0, at).trim().toLowerCase();
      const value = unquote(parameter.slice(at + 1).trim()).toLowerCase();
      // A repeated parameter counts once, as first given; an empty q counts as none (as the negotiator reads them).
      if (seen.has(key)) continue;
      seen.add(key);
      if (key === "q") q = value === "" ? 1 : Number.parseFloat(value);
      else params.set(key, value);
    }
    ranges.push({ type, subtype: subtype.trim(), params, q, order });
  }
  return ranges;
}

/** How well a range names a provided type (higher is more specific), or -1 when it does not match it. */
function specificity(range: Range, type: string, subtype: string, params: Map<string, string>): number {
  let score = 0;
  if (range.type === type) score |= 4;
  else if (range.type !== "*") return -1;
  if (range.subtype === subtype) score |= 2;
  else if (range.subtype !== "*") return -1;
  if (range.params.size > 0) {
    for (const [key, value] of range.params) if (value !== "*" && value !== (params.get(key) ?? "")) return -1;
    score |= 1;
  }
  return score;
}

/**
 * The answer type an Accept header allows, by HTTP's rules as Apollo Server applies them (the
 * most specific matching range gives each type its quality; the better quality wins): undefined
 * when it allows neither JSON type. No header, or an empty one, means JSON.
 */
export function graphqlAnswerType(accept: string | undefined): GraphQLAnswerType | undefined {
  if (!accept) return GRAPHQL_ANSWER_TYPES[0];
  const ranges = rangesOf(accept);
  let best: { type: GraphQLAnswerType; q: number; score: number; order: number } | undefined;
  for (const provided of GRAPHQL_ANSWER_TYPES) {
    const [mediaType = "", charset = ""] = provided.split("; ");
    const [type = "", subtype = ""] = mediaType.split("/");
    const params = new Map([["charset", charset.slice("charset=".length)]]);
    // The range that gives this type its quality: the most specific, then the best quality, then
    // the last; compared as the negotiator compares (a quality that is not a number loses no tie).
    let match = { score: 0, q: 0, order: -1 };
    for (const range of ranges) {
      const score = specificity(range, type, subtype, params);
      if (score >= 0 && (match.score - score || match.q - range.q || match.order - range.order) < 0) match = { score, q: range.q, order: range.order };
    }
    if (!(match.q > 0)) continue;
    // Between the types: the better quality, then the more specific range, then the range named first, then our order.
    if (!best || (best.q - match.q || best.score - match.score || match.order - best.order) < 0) best = { type: provided, ...match };
  }
  return best?.type;
}
