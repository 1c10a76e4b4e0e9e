import { readFileSync } from "node:fs";
import {
  buildClientSchema,
  buildSchema,
  getIntrospectionQuery,
  isScalarType,
  isSpecifiedScalarType,
  printSchema,
  type GraphQLNamedType,
  type GraphQLScalarType,
  type GraphQLSchema,
  type IntrospectionQuery,
} from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiSchemaOf } from "../core/schema.ts";
import { undescribedElements } from "../scripts/schema-descriptions.ts";
import { startTestStack, type TestStack } from "../test/stack.ts";

// What a client sees of the schema on a running gateway — the SDL download and introspection —
// carries every description of the subgraphs' SDL and the custom scalars' @specifiedBy links.

const committed = apiSchemaOf(readFileSync("supergraph.graphql", "utf8"));
const customScalars = (schema: GraphQLSchema) =>
  Object.values(schema.getTypeMap()).filter((type: GraphQLNamedType): type is GraphQLScalarType => isScalarType(type) && !isSpecifiedScalarType(type));

let t: TestStack;
beforeAll(async () => {
  t = await startTestStack({ bets: 4 });
});
afterAll(async () => {
  await t?.close();
});

function expectDescribed(schema: GraphQLSchema) {
  expect(undescribedElements(schema)).toEqual([]);
  expect(printSchema(schema)).toBe(printSchema(committed));
  const scalars = customScalars(schema);
  expect(scalars.map((s) => s.name).sort()).toEqual(["Address", "Bytes32", "ChainId", "UInt256"]);
  for (const scalar of scalars) expect(scalar.specifiedByURL, scalar.name).toBe(`docs/reference/scalars.md#${scalar.name.toLowerCase()}`);
  expect(schema.getType("BetStatus")?.toConfig()).toMatchObject({ values: { REFUNDED: { description: expect.stringMatching(/deadline/) } } });
}

describe("the schema clients download", () => {
  it("GET /schema.graphql carries every description and the scalars' @specifiedBy", async () => {
    const response = await fetch(`${t.url}/schema.graphql`);
    expect(response.status).toBe(200);
    const sdl = await response.text();
    expect(sdl).toContain('scalar UInt256 @specifiedBy(url: "docs/reference/scalars.md#uint256")');
    expectDescribed(buildSchema(sdl));
  });

  it("introspection carries the same descriptions and specifiedByURL", async () => {
    const { data, errors } = await t.gql<IntrospectionQuery>(getIntrospectionQuery({ descriptions: true, specifiedByUrl: true }));
    expect(errors).toBeUndefined();
    expectDescribed(buildClientSchema(data!));
  });
});
