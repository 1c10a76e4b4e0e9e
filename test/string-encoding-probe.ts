// Run in a fresh Node process by core/schema.test.ts: builds every schema the service builds (each
// subgraph's, the health subgraph's, the gateway's API schema from the committed supergraph), then
// prints, as one JSON line, every field name that JSON written by this process would carry as a
// two-byte string, and every enum value the schema would answer as one. V8 keeps one copy of each
// property name, the first one made: a name parsed from two-byte SDL text taints every later JSON
// answer that carries it, however its bytes arrived (a subgraph's answer parsed by the gateway
// included). A fresh process, because a test runner's worker has already made these names.
import { readFileSync } from "node:fs";
import { serialize } from "node:v8";
import { isEnumType, isInterfaceType, isObjectType, type GraphQLSchema } from "graphql";
import { healthTypeDefs } from "../gateway/health/schema.ts";
import { apiSchemaOf, buildFederatedSchema, loadSdl } from "../core/schema.ts";
import { SUBGRAPHS } from "../subgraphs/registry.ts";

/** V8's serializer tags a string by how it is stored: one tag for one-byte, another for two-byte. */
const tagOf = (text: string): number => serialize(text)[2] ?? -1;
const ONE_BYTE = tagOf("ab");
if (ONE_BYTE === tagOf("a\u2014")) throw new Error("cannot tell one-byte from two-byte strings here");
const isTwoByte = (text: string): boolean => tagOf(text) !== ONE_BYTE;

const schemas: [string, GraphQLSchema][] = [];
for (const entry of SUBGRAPHS) {
  // As defineSubgraph (subgraphs/kit/subgraph.ts) does: its SDL file through loadSdl, its resolver map.
  const { resolvers } = (await import(`../subgraphs/${entry.name}/resolvers/index.ts`)) as { resolvers: object };
  schemas.push([entry.name, buildFederatedSchema(loadSdl(new URL(`../${entry.sdl}`, import.meta.url)), resolvers)]);
}
schemas.push(["health", buildFederatedSchema(healthTypeDefs, {})]);
schemas.push(["supergraph", apiSchemaOf(readFileSync(new URL("../supergraph.graphql", import.meta.url), "utf8"))]);

const twoByte: string[] = [];
for (const [owner, schema] of schemas) {
  for (const type of Object.values(schema.getTypeMap())) {
    if (type.name.startsWith("__")) continue;
    if (isObjectType(type) || isInterfaceType(type)) {
      for (const name of Object.keys(type.getFields())) {
        // What a gateway does with a subgraph's answer: parse one-byte bytes, write JSON again.
        if (isTwoByte(JSON.stringify(JSON.parse(`{"${name}":0}`)))) twoByte.push(`${owner}: ${type.name}.${name}`);
      }
    } else if (isEnumType(type)) {
      for (const value of type.getValues()) {
        if (isTwoByte(JSON.stringify([type.serialize(value.value)]))) twoByte.push(`${owner}: ${type.name}.${value.name}`);
      }
    }
  }
}
process.stdout.write(`${JSON.stringify({ schemas: schemas.length, twoByte })}\n`);
