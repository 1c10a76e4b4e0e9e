import {
  getNamedType,
  isInterfaceType,
  isObjectType,
  Kind,
  SchemaMetaFieldDef,
  TypeMetaFieldDef,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLNamedType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  visit,
} from "graphql";
import { asksOnlyTotalCount } from "../core/selection.ts";
import { pricesOf } from "./cost-directives.ts";
import { argument, type ConnectionScope, effectiveVariables, idKey, INTROSPECTION_OBJECTS_PER_UNIT, priceField } from "./limits.ts";

// What an operation really cost, once it has run: the price model of gateway/limits.ts (priceField)
// applied to the answer instead of to the arguments. Where the estimate multiplies by `first` or by
// the number of ids asked, this counts the objects the answer holds; a field's statements are
// charged once per parent object it was asked on (the times it ran). So a `first: 100` page that
// returned 3 bets is charged for 3. Walks the answer once, beside the selection that shaped it.

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);

/** The objects a field returned under every parent, flattened out of any lists. */
function objectsOf(parents: readonly Json[], key: string): Json[] {
  const found: Json[] = [];
  const collect = (value: unknown) => {
    if (Array.isArray(value)) for (const item of value) collect(item);
    else if (isObject(value)) found.push(value);
  };
  for (const parent of parents) collect(parent[key]);
  return found;
}

/** An answer to a list of ids (one entry per id, in order) without the entries of an id already answered: each object is paid for once. */
function firstOfEachId(parents: readonly Json[], key: string, ids: readonly unknown[]): Json[] {
  const firstAt = new Map<string, number>();
  ids.forEach((id, i) => {
    const text = idKey(id);
    if (!firstAt.has(text)) firstAt.set(text, i);
  });
  const kept = parents.map((parent) => {
    const list = parent[key];
    return Array.isArray(list) ? { [key]: list.filter((_, i) => firstAt.get(idKey(ids[i])) === i) } : parent;
  });
  return objectsOf(kept, key);
}

const objectKeys = new WeakMap<DocumentNode, ReadonlySet<string>>();

/**
 * The response keys of every field of the document with a selection set: all actualCost reads of
 * an answer (gateway/json-skeleton.ts keeps only those of a forwarded answer).
 */
export function objectKeysOf(document: DocumentNode): ReadonlySet<string> {
  let keys = objectKeys.get(document);
  if (!keys) {
    const found = new Set<string>();
    visit(document, {
      Field(node) {
        if (node.selectionSet) found.add(node.alias?.value ?? node.name.value);
      },
    });
    keys = found;
    objectKeys.set(document, keys);
  }
  return keys;
}

/**
 * The actual cost of an operation whose answer holds `data`. The answer is what the operation's
 * own selection produced, so the walk is as bounded as the estimate that let it run.
 */
export function actualCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variables: Record<string, unknown>,
  data: Json,
): number {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  const fragmentsByName = Object.fromEntries(fragments);
  const values = effectiveVariables(operation, variables);
  const prices = pricesOf(schema);
  let cost = 0;

  const walk = (selectionSet: SelectionSetNode, parent: GraphQLNamedType, parents: readonly Json[], connection: ConnectionScope | undefined) => {
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FRAGMENT_SPREAD) {
        const fragment = fragments.get(selection.name.value);
        const type = fragment && schema.getType(fragment.typeCondition.name.value);
        if (fragment && type) walk(fragment.selectionSet, type, parents, connection);
        continue;
      }
      if (selection.kind === Kind.INLINE_FRAGMENT) {
        const type = selection.typeCondition ? schema.getType(selection.typeCondition.name.value) : parent;
        if (type) walk(selection.selectionSet, type, parents, connection);
        continue;
      }
      const name = selection.name.value;
      const key = selection.alias?.value ?? name;
      const meta = name === "__schema" ? SchemaMetaFieldDef : name === "__type" ? TypeMetaFieldDef : undefined;
      const definition = meta ?? (isObjectType(parent) || isInterfaceType(parent) ? parent.getFields()[name] : undefined);
      if (name.startsWith("__") || parent.name.startsWith("__") || !definition) {
        // Introspection: as estimated, 1 per selection and 1 per INTROSPECTION_OBJECTS_PER_UNIT objects, here as returned.
        cost += 1;
        if (!selection.selectionSet || !definition) continue;
        const objects = objectsOf(parents, key);
        cost += Math.ceil(objects.length / INTROSPECTION_OBJECTS_PER_UNIT);
        walk(selection.selectionSet, getNamedType(definition.type), objects, connection);
        continue;
      }
      const price = priceField(parent, selection, definition, values, connection, prices);
      // A connection asked only its totalCount reads no page (subgraphs/history): its count is charged below, its page not at all.
      const pageRead = !price.connection || !asksOnlyTotalCount({ fieldNodes: [selection], fragments: fragmentsByName });
      cost += 1 + (pageRead ? parents.length * price.statement : 0);
      if (!price.composite || !selection.selectionSet) continue;
      const ids = price.idList ? argument(selection, price.idList, values) : undefined;
      const objects = Array.isArray(ids) ? firstOfEachId(parents, key, ids) : objectsOf(parents, key);
      cost += objects.length * price.weight;
      walk(selection.selectionSet, price.named, objects, price.connection);
    }
  };

  const root =
    operation.operation === "query" ? schema.getQueryType() : operation.operation === "mutation" ? schema.getMutationType() : schema.getSubscriptionType();
  if (root) walk(operation.selectionSet, root, [data], undefined);
  return cost;
}
