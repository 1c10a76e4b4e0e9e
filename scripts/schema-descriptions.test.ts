import { readFileSync } from "node:fs";
import { buildSchema } from "graphql";
import { describe, expect, it } from "vitest";
import { apiSchemaOf } from "../core/schema.ts";
import { undescribedElements } from "./schema-descriptions.ts";

describe("undescribedElements", () => {
  it("reports every undescribed type, field, argument, enum value and input field, and nothing described", () => {
    const schema = buildSchema(`
      "Described."
      type Query {
        "Described."
        described("Described." id: ID!): Thing
        bare(id: ID!, "Described." also: Int): Thing
      }
      type Thing {
        "Described."
        name: String
        size: Int
      }
      "Described."
      enum Colour {
        "Described."
        RED
        GREEN
      }
      input Filter {
        "Described."
        colour: Colour
        name: String
      }
      "Described."
      scalar Amount
      scalar Blank
      """
      """
      interface Node { "Described." id: ID! }
      "Described."
      type Extra { "  " filter(f: Filter, a: Amount, b: Blank): Node }
    `);
    expect(undescribedElements(schema)).toEqual([
      "field Query.bare",
      "argument Query.bare(id:)",
      "type Thing",
      "field Thing.size",
      "enum value Colour.GREEN",
      "type Filter",
      "input field Filter.name",
      "type Blank",
      "type Node",
      "field Extra.filter",
      "argument Extra.filter(f:)",
      "argument Extra.filter(a:)",
      "argument Extra.filter(b:)",
    ]);
  });

  it("finds nothing undescribed in the committed supergraph", () => {
    expect(undescribedElements(apiSchemaOf(readFileSync("supergraph.graphql", "utf8")))).toEqual([]);
  });
});
