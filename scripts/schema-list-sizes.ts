import { pricedApiSchemaOf, pricesOf, unsizedListFields } from "../gateway/cost-directives.ts";

// schema:check's list-size rule: every list of objects clients can ask for says how long it is
// (`@listSize`), so the gateway prices it from the schema (docs/guides/adding-a-field.md#5-price-it).

/** One finding per list of objects without a size in a composed supergraph; empty when every list has one. */
export function listSizeFindings(supergraphSdl: string): string[] {
  const schema = pricedApiSchemaOf(supergraphSdl);
  return unsizedListFields(schema, pricesOf(schema)).map(
    (coordinate) =>
      `unsized list: ${coordinate} returns a list of objects without a size: give it @listSize(assumedSize: N) or @listSize(slicingArguments: [...]) in its subgraph's SDL, or list it in the sizedFields of every field that returns its type`,
  );
}
