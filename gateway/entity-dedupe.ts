import type { GraphQLDataSource, GraphQLDataSourceProcessOptions } from "@apollo/gateway";
import { copyJson } from "./json-copy.ts";

// @apollo/gateway sends an entity fetch one representation per entity in the response, repeats
// included: a page of 50 bets on one network asks the networks subgraph for that network 50 times,
// and merges 50 copies of its answer. This wrapper sends each distinct representation once and
// hands the gateway back the answer it would have got for the full list: every entity at its
// position (a copy per repeat, since the gateway merges into them), and every error of a repeated
// representation once per position, its path pointing there. What a subgraph does for one
// representation does not depend on the others in the list, so the answer is the same
// (gateway/entity-dedupe.test.ts checks it over generated lists).

type Response = Awaited<ReturnType<GraphQLDataSource["process"]>>;
type FormattedError = NonNullable<Response["errors"]>[number];

/** Where each representation of `list` goes in the list of distinct ones; undefined when all are distinct. */
function distinctPositions(list: readonly unknown[]): { distinct: unknown[]; positionOf: number[] } | undefined {
  const indexByKey = new Map<string, number>();
  const distinct: unknown[] = [];
  const positionOf: number[] = [];
  for (const representation of list) {
    // Representations are built by the gateway from one selection set: equal ones serialise alike.
    const key = JSON.stringify(representation);
    let index = indexByKey.get(key);
    if (index === undefined) {
      index = distinct.length;
      indexByKey.set(key, index);
      distinct.push(representation);
    }
    positionOf.push(index);
  }
  return distinct.length < list.length ? { distinct, positionOf } : undefined;
}

/** The answer for the full list, from the answer for its distinct representations. */
function expand(response: Response, positionOf: readonly number[]): Response {
  const entities = (response.data as { _entities?: unknown } | null | undefined)?._entities;
  const firstUse = new Set<number>();
  const data = Array.isArray(entities)
    ? {
        ...response.data,
        _entities: positionOf.map((index) => {
          if (firstUse.has(index)) return copyJson(entities[index]);
          firstUse.add(index);
          return entities[index];
        }),
      }
    : response.data;
  // An entity's errors at each of its positions, in position order (the order a subgraph resolving
  // the full list reports them); errors of no entity first, as they came.
  let errors: FormattedError[] | undefined;
  if (response.errors) {
    const ofNoEntity: FormattedError[] = [];
    const atPosition: { at: number; error: FormattedError }[] = [];
    for (const error of response.errors) {
      const [root, index, ...rest] = error.path ?? [];
      if (root !== "_entities" || typeof index !== "number") ofNoEntity.push(error);
      else
        for (const [at, position] of positionOf.entries()) {
          if (position === index) atPosition.push({ at, error: { ...error, path: ["_entities", at, ...rest] } });
        }
    }
    errors = [...ofNoEntity, ...atPosition.sort((a, b) => a.at - b.at).map(({ error }) => error)];
  }
  return { ...response, data, ...(errors ? { errors } : {}) };
}

/**
 * An entity fetch declares `$representations: [_Any!]!`. `_Any` is not in the API schema, so a
 * client's operation (sent as is by single-subgraph routing, or a plan's root fetch with the
 * client's variables) cannot declare it, whatever its own variables are called.
 */
const ENTITY_FETCH = /\$representations\s*:\s*\[\s*_Any\s*!\s*\]\s*!/;

/** Wraps a subgraph's data source so that entity fetches carry each distinct representation once. */
export function dedupeRepresentations(inner: GraphQLDataSource): GraphQLDataSource {
  return {
    async process(options: GraphQLDataSourceProcessOptions): Promise<Response> {
      const representations = options.request.variables?.representations;
      const entityFetch = Array.isArray(representations) && ENTITY_FETCH.test(options.request.query ?? "");
      const positions = entityFetch ? distinctPositions(representations) : undefined;
      if (!positions) return inner.process(options);
      const request = { ...options.request, variables: { ...options.request.variables, representations: positions.distinct } };
      return expand(await inner.process({ ...options, request }), positions.positionOf);
    },
  };
}
