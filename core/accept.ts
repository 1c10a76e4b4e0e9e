// Which GraphQL answer an Accept header allows, decided once at the door. Apollo Server negotiates
// its answer's media type only after it has run the operation: a request whose Accept allows
// neither JSON type was executed in full (subgraphs, database, points) and then answered 406,
// its work thrown away. The door decides instead, before anything runs, and hands Apollo Server
// the type it chose, so the two can never disagree. It asks the very negotiator Apollo Server asks
// (the `negotiator` package, pinned to the version Apollo Server resolves): a parser of our own
// disagreed with it on malformed quoted parameters (`application/json;q=0;=", application/json`).
import Negotiator from "negotiator";

/** The media types of a single GraphQL answer, in Apollo Server's order of preference on a tie. */
export const GRAPHQL_ANSWER_TYPES = ["application/json; charset=utf-8", "application/graphql-response+json; charset=utf-8"] as const;
export type GraphQLAnswerType = (typeof GRAPHQL_ANSWER_TYPES)[number];

const isAnswerType = (type: string | undefined): type is GraphQLAnswerType => GRAPHQL_ANSWER_TYPES.some((answer) => answer === type);

/**
 * The answer type an Accept header allows, by HTTP's rules as Apollo Server applies them (the
 * most specific matching range gives each type its quality; the better quality wins): undefined
 * when it allows neither JSON type. No header, or an empty one, means JSON.
 */
export function graphqlAnswerType(accept: string | undefined): GraphQLAnswerType | undefined {
  if (!accept) return GRAPHQL_ANSWER_TYPES[0];
  const chosen = new Negotiator({ headers: { accept } }).mediaType([...GRAPHQL_ANSWER_TYPES]);
  return isAnswerType(chosen) ? chosen : undefined;
}
