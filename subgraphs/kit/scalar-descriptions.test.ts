import { Kind } from "graphql";
import { describe, expect, it } from "vitest";
import { scalarResolvers } from "../../core/scalars.ts";
import { buildFederatedSchema, loadSdl } from "../../core/schema.ts";
import { SUBGRAPHS } from "../registry.ts";

// A subgraph serves its SDL's descriptions: @apollo/subgraph copies a resolver scalar's own
// properties over the SDL's type, so a description set on the implementation would replace the
// contract's text (and the gateway, composed from the SDL files, would say something else).
describe("scalar descriptions", () => {
  it("come from each subgraph's SDL, not from the scalar implementations", () => {
    let checked = 0;
    for (const entry of SUBGRAPHS) {
      const typeDefs = loadSdl(new URL(`../../${entry.sdl}`, import.meta.url));
      const schema = buildFederatedSchema(typeDefs, scalarResolvers);
      for (const definition of typeDefs.definitions) {
        if (definition.kind !== Kind.SCALAR_TYPE_DEFINITION) continue;
        expect(schema.getType(definition.name.value)?.description, `${entry.name} ${definition.name.value}`).toBe(definition.description?.value);
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(10); // networks and history 4 each, results 2
  });
});
