import type { GraphQLDataSource, GraphQLDataSourceProcessOptions } from "@apollo/gateway";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { dedupeRepresentations } from "./entity-dedupe.ts";

// The wrapper must give the gateway exactly the answer a subgraph gives for the full list of
// representations, while the subgraph sees each distinct representation once. The subgraph here
// answers each representation on its own, as federation's `_entities` does: an entity with a
// nested object (the gateway merges into it), null for an unknown one, errors for a failing one
// (on the entity and on one of its fields), and possibly an error of no entity.

type Response = Awaited<ReturnType<GraphQLDataSource["process"]>>;
interface Representation {
  __typename: string;
  chainId: number;
}

function fakeSubgraph(seen: Representation[][]): GraphQLDataSource {
  return {
    async process(options): Promise<Response> {
      const representations = options.request.variables?.representations as Representation[];
      seen.push(representations);
      const errors: NonNullable<Response["errors"]>[number][] = [];
      if (options.request.variables?.failAll) errors.push({ message: "subgraph trouble" });
      const entities = representations.map((r, index) => {
        if (r.chainId % 7 === 0) {
          errors.push({ message: `no network ${r.chainId}`, path: ["_entities", index], extensions: { code: "BAD_USER_INPUT" } });
          return null;
        }
        if (r.chainId % 5 === 0) {
          errors.push({ message: `no name for ${r.chainId}`, path: ["_entities", index, "name"] });
          return { __typename: r.__typename, chainId: r.chainId, name: null, contracts: [{ name: "BetVault" }] };
        }
        if (r.chainId % 3 === 0) return null;
        return { __typename: r.__typename, chainId: r.chainId, name: `net${r.chainId}`, contracts: [{ name: "BetVault", at: { block: r.chainId } }] };
      });
      return { data: { _entities: entities }, ...(errors.length ? { errors } : {}) };
    },
  };
}

const request = (representations: Representation[], failAll = false) =>
  ({
    request: {
      query: "query($representations: [_Any!]!) { _entities(representations: $representations) { __typename } }",
      variables: { representations, failAll },
    },
    kind: "INCOMING_OPERATION",
  }) as unknown as GraphQLDataSourceProcessOptions;

const representationList = fc.array(fc.record({ __typename: fc.constantFrom("NetworkConfig", "Bet"), chainId: fc.integer({ min: 1, max: 16 }) }), {
  minLength: 0,
  maxLength: 40,
});

describe("entity fetches with repeated representations", () => {
  it("answer as the subgraph answers the full list, which sees each distinct representation once", async () => {
    await fc.assert(
      fc.asyncProperty(representationList, fc.boolean(), async (representations, failAll) => {
        const direct = await fakeSubgraph([]).process(request(representations, failAll));
        const seen: Representation[][] = [];
        const deduped = await dedupeRepresentations(fakeSubgraph(seen)).process(request(representations, failAll));
        expect(JSON.stringify(deduped)).toBe(JSON.stringify(direct));
        const distinct = new Set(representations.map((r) => JSON.stringify(r)));
        expect(seen.flat().map((r) => JSON.stringify(r))).toEqual([...distinct]);
      }),
      { numRuns: 300 },
    );
  });

  it("hands each position its own entity objects, so the gateway's merge into one leaves the others alone", async () => {
    const repeated = Array.from({ length: 4 }, () => ({ __typename: "NetworkConfig", chainId: 1 }));
    const answer = await dedupeRepresentations(fakeSubgraph([])).process(request(repeated));
    const entities = (answer.data as { _entities: { contracts: { at: { block: number } }[] }[] })._entities;
    entities[0]!.contracts[0]!.at.block = 99;
    expect(entities.slice(1).map((e) => e.contracts[0]!.at.block)).toEqual([1, 1, 1]);
  });

  it("leaves a client's own variable named `representations` alone: only an entity fetch ($representations: [_Any!]!) is deduplicated", async () => {
    const seen: { representations: unknown }[] = [];
    const echo: GraphQLDataSource = {
      async process(options) {
        const ids = (options.request.variables?.representations ?? []) as string[];
        seen.push({ representations: ids });
        return { data: { betResults: ids.map((betId) => ({ betId })) } };
      },
    };
    const clientOperation = {
      request: {
        query: "query($representations: [UInt256!]!) { betResults(chainId: 1, betIds: $representations) { betId } }",
        variables: { representations: ["1", "1", "2"] },
      },
    } as unknown as GraphQLDataSourceProcessOptions;
    const answer = await dedupeRepresentations(echo).process(clientOperation);
    expect(seen[0]!.representations).toEqual(["1", "1", "2"]);
    expect(answer.data).toEqual({ betResults: [{ betId: "1" }, { betId: "1" }, { betId: "2" }] });
  });

  it("passes requests without repeats, or without representations, through untouched", async () => {
    const seen: Representation[][] = [];
    const source = dedupeRepresentations(fakeSubgraph(seen));
    const distinct = [
      { __typename: "NetworkConfig", chainId: 1 },
      { __typename: "NetworkConfig", chainId: 2 },
    ];
    const options = request(distinct);
    await source.process(options);
    expect(seen[0]).toBe(distinct);
    const plain = { request: { query: "{ networkConfigs { name } }" } } as unknown as GraphQLDataSourceProcessOptions;
    const passThrough = await dedupeRepresentations({ process: async (o) => ({ data: { same: o === plain } }) }).process(plain);
    expect(passThrough.data).toEqual({ same: true });
  });
});
