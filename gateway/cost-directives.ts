import {
  getNamedType,
  getNullableType,
  isCompositeType,
  isInterfaceType,
  isListType,
  isObjectType,
  Kind,
  parse,
  valueFromASTUntyped,
  type ConstDirectiveNode,
  type DocumentNode,
  type GraphQLSchema,
} from "graphql";
import type { Logger } from "../core/logger.ts";
import { apiSchemaOf } from "../core/schema.ts";

// The prices the subgraphs declare in their SDL with Federation 2.9's demand-control directives
// (@cost, @listSize; the IBM cost specification as Apollo Router and Hive Gateway read it), as the
// supergraph carries them after composition. The API schema Apollo builds drops them, so they are
// read from the supergraph's own text, once per schema version, and kept beside that very API schema
// object: cost analysis always prices with the schema it validated the operation against.
// How gateway/limits.ts applies them: docs/reference/limits.md#prices-in-the-schema.

/** A field's @listSize, as declared. */
export interface ListSize {
  assumedSize?: number;
  slicingArguments?: readonly string[];
  sizedFields?: readonly string[];
}

export interface SchemaPrices {
  /** `@cost(weight:)` of object and interface types: points per object of that type returned (default 1). */
  typeWeights: ReadonlyMap<string, number>;
  /** `@cost(weight:)` of fields by coordinate (`Type.field`): points per call of the field (default 0). */
  fieldWeights: ReadonlyMap<string, number>;
  /** `@cost(weight:)` of arguments by coordinate (`Type.field(argument:)`): points per call when the argument is given. */
  argumentWeights: ReadonlyMap<string, number>;
  /** `@listSize` of fields by coordinate. */
  listSizes: ReadonlyMap<string, ListSize>;
}

const COST_SPEC = "https://specs.apollo.dev/cost/";

/**
 * The names the supergraph gives @cost and @listSize: its `@link` to the cost spec may import them
 * (possibly renamed) or leave them namespaced (`@cost` for the spec's own name, `@cost__listSize`).
 */
function directiveNames(document: DocumentNode): { cost: string; listSize: string } {
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.SCHEMA_DEFINITION && definition.kind !== Kind.SCHEMA_EXTENSION) continue;
    for (const link of definition.directives ?? []) {
      const args = Object.fromEntries((link.arguments ?? []).map((a) => [a.name.value, valueFromASTUntyped(a.value)]));
      if (link.name.value !== "link" || typeof args.url !== "string" || !args.url.startsWith(COST_SPEC)) continue;
      const feature = typeof args.as === "string" ? args.as : "cost";
      const imported = new Map<string, string>();
      for (const entry of Array.isArray(args.import) ? args.import : []) {
        if (typeof entry === "string") imported.set(entry, entry);
        else if (entry && typeof entry === "object" && "name" in entry) imported.set(String(entry.name), String("as" in entry ? entry.as : entry.name));
      }
      const name = (directive: string) => (imported.get(directive) ?? (directive === "@cost" ? `@${feature}` : `@${feature}__${directive.slice(1)}`)).slice(1);
      return { cost: name("@cost"), listSize: name("@listSize") };
    }
  }
  return { cost: "cost", listSize: "listSize" };
}

function argumentsOf(directive: ConstDirectiveNode): Record<string, unknown> {
  return Object.fromEntries((directive.arguments ?? []).map((a) => [a.name.value, valueFromASTUntyped(a.value)]));
}

const strings = (value: unknown): string[] | undefined => (Array.isArray(value) ? value.map(String) : undefined);

/** The @cost and @listSize a (supergraph) SDL declares. */
export function schemaPricesOf(supergraphSdl: string): SchemaPrices {
  const document = parse(supergraphSdl);
  const names = directiveNames(document);
  const typeWeights = new Map<string, number>();
  const fieldWeights = new Map<string, number>();
  const argumentWeights = new Map<string, number>();
  const listSizes = new Map<string, ListSize>();
  const weightOf = (directives: readonly ConstDirectiveNode[] | undefined) => {
    const cost = directives?.find((d) => d.name.value === names.cost);
    const weight = cost ? Number(argumentsOf(cost).weight) : undefined;
    return weight !== undefined && Number.isFinite(weight) ? weight : undefined;
  };
  for (const definition of document.definitions) {
    if (
      definition.kind !== Kind.OBJECT_TYPE_DEFINITION &&
      definition.kind !== Kind.OBJECT_TYPE_EXTENSION &&
      definition.kind !== Kind.INTERFACE_TYPE_DEFINITION &&
      definition.kind !== Kind.INTERFACE_TYPE_EXTENSION
    )
      continue;
    const type = definition.name.value;
    const typeWeight = weightOf(definition.directives);
    if (typeWeight !== undefined) typeWeights.set(type, typeWeight);
    for (const field of definition.fields ?? []) {
      const coordinate = `${type}.${field.name.value}`;
      const fieldWeight = weightOf(field.directives);
      if (fieldWeight !== undefined) fieldWeights.set(coordinate, fieldWeight);
      for (const argument of field.arguments ?? []) {
        const argumentWeight = weightOf(argument.directives);
        if (argumentWeight !== undefined) argumentWeights.set(`${coordinate}(${argument.name.value}:)`, argumentWeight);
      }
      const listSize = field.directives?.find((d) => d.name.value === names.listSize);
      if (!listSize) continue;
      const args = argumentsOf(listSize);
      listSizes.set(coordinate, {
        ...(typeof args.assumedSize === "number" ? { assumedSize: args.assumedSize } : {}),
        ...(strings(args.slicingArguments) ? { slicingArguments: strings(args.slicingArguments) } : {}),
        ...(strings(args.sizedFields) ? { sizedFields: strings(args.sizedFields) } : {}),
      });
    }
  }
  return { typeWeights, fieldWeights, argumentWeights, listSizes };
}

const pricesBySchema = new WeakMap<GraphQLSchema, SchemaPrices>();

/** Keeps the prices of a supergraph beside the API schema built from it (what cost analysis is handed). */
export function attachPrices(apiSchema: GraphQLSchema, supergraphSdl: string): GraphQLSchema {
  pricesBySchema.set(apiSchema, schemaPricesOf(supergraphSdl));
  return apiSchema;
}

/** The API schema of a supergraph, its prices attached (tests and tools; the gateway follows its own loads). */
export function pricedApiSchemaOf(supergraphSdl: string): GraphQLSchema {
  return attachPrices(apiSchemaOf(supergraphSdl), supergraphSdl);
}

/** The prices of an API schema; every schema the gateway serves has them (followSupergraphPrices). */
export function pricesOf(schema: GraphQLSchema): SchemaPrices {
  const prices = pricesBySchema.get(schema);
  if (!prices) throw new Error("no prices for this schema: build it with pricedApiSchemaOf, or follow the gateway's loads with followSupergraphPrices");
  return prices;
}

/**
 * Attaches the prices of every supergraph the gateway loads (the first one and every update) to its
 * API schema, and says which lists have no size: a supergraph that did not pass schema:check (one
 * from elsewhere than this repository's composition) prices each as the largest page.
 */
export function followSupergraphPrices(
  gateway: { onSchemaLoadOrUpdate(callback: (schema: { apiSchema: GraphQLSchema; coreSupergraphSdl: string }) => void): unknown },
  logger: Pick<Logger, "warn">,
): void {
  gateway.onSchemaLoadOrUpdate(({ apiSchema, coreSupergraphSdl }) => {
    const unsized = unsizedListFields(attachPrices(apiSchema, coreSupergraphSdl), pricesOf(apiSchema));
    if (unsized.length > 0) logger.warn({ unsized }, "supergraph has lists of objects without @listSize: each is priced as the largest page");
  });
}

/**
 * List fields of the API schema that return objects and have no size: no `@listSize` of their own
 * with an `assumedSize` or `slicingArguments`, and not sized by every field that returns their type
 * (`sizedFields`). Lists of scalars and enums need none: they are columns of a row already paid for.
 */
export function unsizedListFields(apiSchema: GraphQLSchema, prices: SchemaPrices): string[] {
  // Type name -> for each field returning it, the fields its @listSize sizes.
  const sizedBy = new Map<string, Set<string>[]>();
  for (const type of Object.values(apiSchema.getTypeMap())) {
    if (!(isObjectType(type) || isInterfaceType(type)) || type.name.startsWith("__")) continue;
    for (const field of Object.values(type.getFields())) {
      const returned = getNamedType(field.type).name;
      const sized = new Set(prices.listSizes.get(`${type.name}.${field.name}`)?.sizedFields ?? []);
      sizedBy.set(returned, [...(sizedBy.get(returned) ?? []), sized]);
    }
  }
  const unsized: string[] = [];
  for (const type of Object.values(apiSchema.getTypeMap())) {
    if (!(isObjectType(type) || isInterfaceType(type)) || type.name.startsWith("__")) continue;
    for (const field of Object.values(type.getFields())) {
      if (!isListType(getNullableType(field.type)) || !isCompositeType(getNamedType(field.type))) continue;
      const own = prices.listSizes.get(`${type.name}.${field.name}`);
      if (own?.assumedSize !== undefined || (own?.slicingArguments?.length ?? 0) > 0) continue;
      const parents = sizedBy.get(type.name) ?? [];
      if (parents.length > 0 && parents.every((sized) => sized.has(field.name))) continue;
      unsized.push(`${type.name}.${field.name}`);
    }
  }
  return unsized;
}
