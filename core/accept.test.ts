import { createRequire } from "node:module";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { GRAPHQL_ANSWER_TYPES, graphqlAnswerType } from "./accept.ts";

// The door's choice must be the one Apollo Server would make after running the operation: checked
// against the very negotiator Apollo Server uses (its dependency, loaded here for the comparison only).
type Negotiate = new (request: { headers: { accept?: string } }) => { mediaType(available: string[]): string | undefined };
const Negotiator = createRequire(import.meta.url)("negotiator") as Negotiate;
const apollo = (accept: string | undefined) =>
  accept ? (new Negotiator({ headers: { accept } }).mediaType([...GRAPHQL_ANSWER_TYPES]) ?? undefined) : GRAPHQL_ANSWER_TYPES[0];

describe("graphqlAnswerType", () => {
  it.each([
    [undefined, GRAPHQL_ANSWER_TYPES[0]],
    ["", GRAPHQL_ANSWER_TYPES[0]],
    ["*/*", GRAPHQL_ANSWER_TYPES[0]],
    ["application/graphql-response+json", GRAPHQL_ANSWER_TYPES[1]],
    ["image/png", undefined],
    ["text/html", undefined],
    ["application/json;q=0", undefined],
    ["application/graphql-response+json, application/json", GRAPHQL_ANSWER_TYPES[1]],
    ["application/json;q=0, application/graphql-response+json;q=0", undefined],
    ["application/json; charset=latin1", undefined],
    ["*/*, application/json;q=0", GRAPHQL_ANSWER_TYPES[1]],
    // Malformed quoted parameters, where a parser of our own disagreed with Apollo Server's (found by the property below).
    ['application/json;q=0;=", application/json', undefined],
    ['application/json;=", application/json;"', undefined],
    ['text/json;=", application/json', undefined],
  ])("%j → %j", (accept, expected) => {
    expect(graphqlAnswerType(accept)).toBe(expected);
    expect(apollo(accept)).toBe(expected);
  });

  it("agrees with Apollo Server's negotiator on generated Accept headers", () => {
    const type = fc.constantFrom("application", "*", "text", "APPLICATION", "image", "multipart");
    const subtype = fc.constantFrom("json", "*", "graphql-response+json", "html", "JSON", "mixed", "png");
    const param = fc.oneof(
      fc.constantFrom(
        "q=0",
        "q=1",
        "q=0.5",
        "q=abc",
        "q=",
        "charset=utf-8",
        "charset=UTF-8",
        'charset="utf-8"',
        "charset=latin1",
        "charset=*",
        "x=y",
        "deferSpec=20220824",
        'x="a, b"',
        '="',
      ),
      fc.string({ maxLength: 6 }),
    );
    const range = fc.tuple(type, subtype, fc.array(param, { maxLength: 3 })).map(([t, s, ps]) => [`${t}/${s}`, ...ps].join(";"));
    const accept = fc.oneof(
      fc.array(range, { minLength: 1, maxLength: 4 }).map((rs) => rs.join(", ")),
      fc.string({ maxLength: 30 }),
    );
    fc.assert(
      fc.property(accept, (header) => {
        expect(graphqlAnswerType(header), header).toBe(apollo(header));
      }),
      { numRuns: 3000 },
    );
  });
});
