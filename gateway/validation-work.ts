import { Kind, TokenKind, type DocumentNode, type FragmentDefinitionNode, type SelectionSetNode } from "graphql";
import { Parser } from "graphql/language/parser.js";

// What a document costs before the query limits measure its operation (gateway/limits.ts): its
// size is bounded while it is parsed, and validating it is priced in the points of the budget
// (gateway/points-budget.ts). graphql-js's OverlappingFieldsCanBeMerged compares every pair of fields that share a response
// name in one selection set (fragments' fields included), then their sub-selections merged: work
// that grows with the square of repetition, paid before any limit measures the operation. 490
// copies of `networkConfigs { chainId }` (2 000 tokens, MAX_DOCUMENT_TOKENS) kept
// a gateway busy ~0.1 s before graphql-js gave up, for the 10 points every request pays. Honest
// documents repeat a field a few times, where fragments meet; such pairs are free.

/**
 * Tokens a document may hold, checked while it is parsed (before validation, the query limits and
 * any plan). graphql-js validates in time that grows faster than a document (fields of one name are
 * compared pairwise) and recurses through nested fragments: thousands of repeated fields cost a
 * gateway most of a second, and ~1 500 nested inline fragments overflowed its stack. The largest
 * documented request (test/largest-request.ts) is ~340 tokens, a full introspection query (every option) 184.
 */
export const MAX_DOCUMENT_TOKENS = 2000;

/** Pairs of same-named fields a document may hold at no charge (~2 ms of validation; a page of 20 Apollo Client fragments on one type makes ~1 500). */
export const FREE_OVERLAP_PAIRS = 5000;
/**
 * Points per pair past the free ones. A pair (with its merged sub-selections) took ~0.4 µs to
 * compare here, and a point is about a microsecond of gateway CPU elsewhere (betResults of 100 ids:
 * ~2 000 points, ~1.6 ms): half a point a pair.
 */
export const POINTS_PER_OVERLAP_PAIR = 0.5;
/** graphql-js gives up past 500 000 units of this work, about two a pair ("Validation aborted."): nothing past it is done, so nothing is charged. */
const MAX_OVERLAP_PAIRS = 250_000;
/**
 * Selections the count visits at most (fragments spread under several aliases each grow
 * exponentially): ~2 ms of the count's own work, unpriced, as the first selections of any document are.
 */
const MAX_VISITS = 20_000;
/**
 * Points per token of a document validation refused, on top of its pairs. Refusals are where
 * graphql-js works hardest per token (an error per unknown name, each with "Did you mean"
 * suggestions searched over the schema; duplicate or unused variables and fragments): 20-40 ms for
 * 2 000 tokens, 10-20 µs a token, no honest client's steady traffic. A typo in a 100-token document
 * costs 500 points; a 2 000-token refusal 10 000.
 */
export const POINTS_PER_REFUSED_TOKEN = 5;
/**
 * What a text the gateway has not seen before costs beyond a repeated one (parsing, validation, the
 * query limits' measure and, most of it, a query plan; Apollo Server's document store and the plan
 * cache serve a repeated text), counted in tokens: this many for any text, plus its own. Each client
 * sends RATE_LIMIT_NEW_DOCUMENT_TOKENS_PER_MINUTE of them free (an honest client sends a few texts,
 * over and over); past them, POINTS_PER_NEW_DOCUMENT_TOKEN each. bench/document-cost.ts measured
 * the extra CPU of a new text: `{ __typename }` ~0.37 ms, the largest documented playerBets and
 * betResults (~330 tokens) ~6.4 ms, 300 one-field operations (1 500 tokens) ~7 ms.
 */
export const NEW_DOCUMENT_BASE_TOKENS = 20;
/** Points per new-document token past a client's free ones: ~18 µs of planning a token in a rich selection, at about a point a µs. */
export const POINTS_PER_NEW_DOCUMENT_TOKEN = 20;

/** The points a new document of `tokens` tokens costs once its client's free tokens of the minute are spent. */
export function newDocumentPoints(tokens: number): number {
  return (NEW_DOCUMENT_BASE_TOKENS + tokens) * POINTS_PER_NEW_DOCUMENT_TOKEN;
}

/**
 * Points per token of a document refused at parse for its size (past MAX_DOCUMENT_TOKENS): it was
 * lexed up to the bound, ~1.3 ms (twice with the response cache on, whose key parses it too), and
 * the same text is refused again each time, never remembered. No documented request comes near.
 */
export const POINTS_PER_PARSED_TOKEN = 1;

/**
 * Tokens of a text that does not parse which its least price covers: more than the largest
 * documented request (~340), so a typo in any honest query costs the door's 10 points alone.
 */
export const FREE_PARSED_TOKENS = 400;

/**
 * What a text that does not parse costs beyond the door: POINTS_PER_PARSED_TOKEN for each token
 * graphql-js read before it failed (the one it failed on included) past FREE_PARSED_TOKENS. A
 * syntax error at the end of a long text costs its whole parse each time it is sent, and Apollo
 * Server remembers only documents that parse. Counted by parsing again (the failed parse's count
 * is not exposed), only for texts long enough to hold that many tokens; the price covers both.
 */
export function syntaxErrorPoints(text: string): number {
  if (text.length <= FREE_PARSED_TOKENS) return 0;
  const parser = new Parser(text, { noLocation: true, maxTokens: MAX_DOCUMENT_TOKENS });
  try {
    parser.parseDocument();
  } catch {
    // the expected end
  }
  return Math.max(0, Math.min(parser.tokenCount, MAX_DOCUMENT_TOKENS) - FREE_PARSED_TOKENS) * POINTS_PER_PARSED_TOKEN;
}

/** Fields nested deeper are not counted (the depth limit is 8; fragments that spread each other through fields never end). */
const MAX_FIELD_DEPTH = 64;

const counted = new WeakMap<DocumentNode, number>();

/**
 * The points validating `document` costs: 0 for any valid document with at most FREE_OVERLAP_PAIRS
 * pairs; one validation `refused` pays for its tokens too.
 */
export function validationPoints(document: DocumentNode, refused = false): number {
  let pairs = counted.get(document);
  if (pairs === undefined) {
    pairs = overlapPairs(document);
    counted.set(document, pairs);
  }
  const overlap = Math.ceil(Math.max(0, pairs - FREE_OVERLAP_PAIRS) * POINTS_PER_OVERLAP_PAIR);
  return overlap + (refused ? tokensOf(document) * POINTS_PER_REFUSED_TOKEN : 0);
}

/** The tokens of a parsed document, comments not counted, as the parser's token limit counts them (its location's token chain; 0 when parsed without locations). */
export function tokensOf(document: DocumentNode): number {
  let count = 0;
  for (let token = document.loc?.startToken.next; token && token.kind !== TokenKind.EOF; token = token.next) if (token.kind !== TokenKind.COMMENT) count++;
  return count;
}

/**
 * Pairs of fields sharing a response name, per selection set, with the sub-selections of same-named
 * fields merged and counted again below (as graphql-js compares them), fragments spread in place.
 * Counted on every operation and every fragment definition, as graphql-js validates each.
 */
export function overlapPairs(document: DocumentNode): number {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  let pairs = 0;
  let visits = 0;
  const exhausted = () => pairs >= MAX_OVERLAP_PAIRS || visits >= MAX_VISITS;

  // The fields of `sets` merged, by response name: how many, and their sub-selections.
  const group = (sets: readonly SelectionSetNode[], byName: Map<string, { count: number; children: SelectionSetNode[] }>, spreading: Set<string>) => {
    for (const set of sets) {
      for (const selection of set.selections) {
        if (++visits >= MAX_VISITS) return;
        if (selection.kind === Kind.FIELD) {
          const name = selection.alias?.value ?? selection.name.value;
          const entry = byName.get(name) ?? { count: 0, children: [] };
          entry.count++;
          if (selection.selectionSet) entry.children.push(selection.selectionSet);
          byName.set(name, entry);
        } else if (selection.kind === Kind.INLINE_FRAGMENT) {
          group([selection.selectionSet], byName, spreading);
        } else {
          const fragment = fragments.get(selection.name.value);
          // A cycle (invalid, but priced before it is refused) is not followed.
          if (!fragment || spreading.has(fragment.name.value)) continue;
          spreading.add(fragment.name.value);
          group([fragment.selectionSet], byName, spreading);
          spreading.delete(fragment.name.value);
        }
      }
    }
  };
  const count = (sets: readonly SelectionSetNode[], depth: number, within?: string) => {
    const byName = new Map<string, { count: number; children: SelectionSetNode[] }>();
    group(sets, byName, new Set(within === undefined ? [] : [within]));
    for (const { count: n, children } of byName.values()) {
      pairs += (n * (n - 1)) / 2;
      if (exhausted()) return;
      if (children.length > 0 && depth < MAX_FIELD_DEPTH) count(children, depth + 1);
      if (exhausted()) return;
    }
  };
  for (const definition of document.definitions) {
    if (definition.kind === Kind.OPERATION_DEFINITION) count([definition.selectionSet], 0);
    if (definition.kind === Kind.FRAGMENT_DEFINITION) count([definition.selectionSet], 0, definition.name.value);
    if (exhausted()) break;
  }
  return Math.min(pairs, MAX_OVERLAP_PAIRS);
}
