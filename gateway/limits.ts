import type { ApolloServerPlugin, GraphQLRequest } from "@apollo/server";
import {
  GraphQLError,
  getNamedType,
  getNullableType,
  isCompositeType,
  isListType,
  isObjectType,
  isInterfaceType,
  Kind,
  SchemaMetaFieldDef,
  TypeMetaFieldDef,
  valueFromASTUntyped,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from "graphql";
import { checkBetIdCount, checkPageSize } from "../core/arguments.ts";
import { ErrorCode, InputError } from "../core/errors.ts";
import { pricesOf, type ListSize, type SchemaPrices } from "./cost-directives.ts";
import { INTROSPECTION_LIST_SIZE, introspectionListSizes } from "./introspection-sizes.ts";

// Query limits of the contract, measured on the parsed operation before any subgraph is asked:
// argument ranges first (BAD_USER_INPUT naming the argument, whatever the cost), then depth
// (fields nested in fields) and nesting (fragments too), aliases, and cost. The cost model prices what the service does, not
// how many names a query spells out (docs/reference/limits.md#query-cost). Its prices are the
// subgraphs' own, declared in their SDL and read from the supergraph served (gateway/cost-directives.ts):
// - a scalar or enum leaf costs 1 where the (fragment-expanded) query selects it, not per row: it is
//   a column of a row already read;
// - every object costs its type's `@cost` (default 1) each time it is returned;
// - a list multiplies what it contains by its size, from the field's `@listSize`: the value of a
//   slicing argument (or its default), else `assumedSize`; a connection's `sizedFields` (`edges`,
//   `nodes`) take the size of the field that returned the connection;
// - each call of a field costs the field's `@cost` (the database statements it runs), plus the
//   `@cost` of each argument given.
// What the directives cannot say stays here, named: prices that depend on the shape of a filter
// (FILTER_SHAPE_PRICES), lists as long as the distinct ids of a list argument (ID_LIST_ARGUMENTS),
// and introspection, which stays open and does not count towards depth, but is priced like the rest
// by what it returns: its lists are as long as the schema's own (every type, then the fields of a
// type on average, and so on), so one full introspection fits the budget and many aliased copies do not.

export interface QueryLimits {
  maxDepth: number;
  maxAliases: number;
  maxCost: number;
}

export const DEFAULT_QUERY_LIMITS: QueryLimits = { maxDepth: 8, maxAliases: 30, maxCost: 5000 };

/**
 * Selections nested in selections (fields, inline fragments and fragment spreads alike) per level of
 * depth: 24 at the default depth of 8. Depth counts fields only, so fragments nested in fragments
 * were unbounded: 195 nested `... @include(if: true) {` kept Apollo's query planner ~50-90 ms for
 * 10 points. A full introspection query nests 15.
 */
const NESTING_PER_DEPTH = 3;

/**
 * A list of objects without a size in the schema (a supergraph `schema:check` would refuse,
 * scripts/schema-list-sizes.ts): priced as long as the contract's largest page.
 */
const UNSIZED_LIST_SIZE = 100;
/** The field of a connection that counts its rows: the filter rules below price it. */
const COUNT_FIELD = "totalCount";
/** A totalCount under a `game` or placed-time filter counts the wallet's matching rows (no counter serves it). */
const FILTERED_COUNT_COST = 500;
/** A page no single index serves in page order (a placed-time range, several statuses, two
 * narrowing filters; see `filterOf`): it may read much of the wallet's history; priced like a count. */
const SCAN_PAGE_COST = 200;
/** Introspection objects are a few names each: four cost 1, so a full introspection takes about a
 * quarter of the default budget and a handful of aliased copies exceed it. */
export const INTROSPECTION_OBJECTS_PER_UNIT = 4;
/** A `bets` page or count that no index serves and no player filter bounds: it may read every bet. */
const TABLE_SCAN_COST = 2000;
const TABLE_COUNT_COST = 2000;

export interface OperationMeasure {
  depth: number;
  aliases: number;
  cost: number;
}

type Limit = "depth" | "nesting" | "aliases" | "cost";

class LimitExceeded extends Error {
  readonly details: { limit: Limit; max: number; value: number };
  constructor(limit: Limit, max: number, value: number) {
    super(`${limit} ${value} exceeds the limit of ${max}`);
    this.details = { limit, max, value };
  }
}

/** The operation's variables with the defaults of its variable definitions filled in. */
export function effectiveVariables(operation: OperationDefinitionNode, variables: Record<string, unknown>): Record<string, unknown> {
  const effective: Record<string, unknown> = {};
  for (const definition of operation.variableDefinitions ?? []) {
    if (definition.defaultValue) effective[definition.variable.name.value] = valueFromASTUntyped(definition.defaultValue, {});
  }
  return { ...effective, ...variables };
}

/** The value of a field's argument, variables resolved; undefined when not given. */
export function argument(field: FieldNode, name: string, variables: Record<string, unknown>): unknown {
  const node = field.arguments?.find((a) => a.name.value === name)?.value;
  return node ? valueFromASTUntyped(node, variables) : undefined;
}

/** Field nodes of the operation and of every fragment it reaches, each fragment once. */
function* fieldsOf(document: DocumentNode, operation: OperationDefinitionNode): Generator<FieldNode> {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  const visited = new Set<string>();
  const pending: SelectionSetNode[] = [operation.selectionSet];
  for (let set = pending.pop(); set; set = pending.pop()) {
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) {
        yield selection;
        if (selection.selectionSet) pending.push(selection.selectionSet);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        pending.push(selection.selectionSet);
      } else if (!visited.has(selection.name.value)) {
        visited.add(selection.name.value);
        const fragment = fragments.get(selection.name.value);
        if (fragment) pending.push(fragment.selectionSet);
      }
    }
  }
}

/**
 * The contract's argument ranges (`first` 1..100, at most 100 `betIds`), with the subgraphs' own
 * messages, checked on the operation before its cost is: an out-of-range argument is
 * BAD_USER_INPUT naming it, never QUERY_TOO_COMPLEX. Linear in the document's size.
 */
export function checkArgumentRanges(document: DocumentNode, operation: OperationDefinitionNode, variables: Record<string, unknown>): void {
  const values = effectiveVariables(operation, variables);
  for (const field of fieldsOf(document, operation)) {
    const first = argument(field, "first", values);
    if (typeof first === "number") checkPageSize(first);
    const ids = argument(field, "betIds", values);
    if (Array.isArray(ids)) checkBetIdCount(ids.length);
  }
}

/**
 * What a `filter` argument narrows by: a game, a placed-time range, and whether one index serves
 * the page in page order. The wallet's indexes lead with one of chainId, a status or game; a
 * time range, several statuses or two of those narrowings make the database read the wallet's
 * rows of one index until the page fills — all of them when few match.
 */
function filterOf(filter: unknown): { game: boolean; timeRange: boolean; scans: boolean } {
  if (!filter || typeof filter !== "object") return { game: false, timeRange: false, scans: false };
  const { game, placedFrom, placedTo, chainId, status } = filter as Record<string, unknown>;
  const statuses = status == null ? 0 : Array.isArray(status) ? status.length : 1;
  const timeRange = placedFrom != null || placedTo != null;
  const narrowings = [chainId != null, statuses > 0, game != null].filter(Boolean).length;
  return { game: game != null, timeRange, scans: timeRange || statuses > 1 || narrowings > 1 };
}

/**
 * What a `bets` filter costs beyond FIELD_COST: its page (0 when one index serves it in page
 * order: no filter, or one of chainId / one status / game / player / token, each with or without
 * a placed-time range) and its totalCount (0 when counters serve it: only chainId / status, with
 * or without player). A player filter bounds whatever is read to that wallet's rows.
 */
function explorerFilterCost(filter: unknown): { page: number; count: number } {
  const given = filter && typeof filter === "object" ? (filter as Record<string, unknown>) : {};
  const { chainId, status, game, player, token, placedFrom, placedTo } = given;
  const statuses = status == null ? 0 : Array.isArray(status) ? status.length : 1;
  const timeRange = placedFrom != null || placedTo != null;
  const narrowings = [chainId != null, statuses > 0, game != null, player != null, token != null].filter(Boolean).length;
  const oneWallet = player != null;
  const served = statuses <= 1 && narrowings <= 1;
  const counted = game == null && token == null && !timeRange;
  return {
    page: served ? 0 : oneWallet ? SCAN_PAGE_COST : TABLE_SCAN_COST,
    count: counted ? 0 : oneWallet ? FILTERED_COUNT_COST : TABLE_COUNT_COST,
  };
}

/** What a `playerBets` filter costs beyond the field's `@cost`: a page no index serves in order, a count no counter serves. */
function walletFilterCost(filterArgument: unknown): { page: number; count: number } {
  const filter = filterOf(filterArgument);
  return { page: filter.scans ? SCAN_PAGE_COST : 0, count: filter.game || filter.timeRange ? FILTERED_COUNT_COST : 0 };
}

/**
 * Prices that depend on the shape of a field's `filter` argument, which `@cost` cannot say: `page`
 * (when not 0) replaces the field's `@cost`, `count` (when not 0) the `@cost` of the returned
 * connection's totalCount. Keyed by the field's coordinate.
 */
const FILTER_SHAPE_PRICES: Readonly<Record<string, (filter: unknown) => { page: number; count: number }>> = {
  "Query.playerBets": walletFilterCost,
  "Query.bets": explorerFilterCost,
};

/**
 * Lists as long as the distinct values of a list argument (a repeated id is read once), which
 * `@listSize` cannot say: composition takes only Int slicing arguments. The field's `@listSize`
 * (`assumedSize`) is then its upper bound, what a reader of the directives alone charges.
 */
/**
 * What makes two values of an id list argument the same id: its text. Variables are any JSON, and
 * String() throws on some objects (`{ "toString": false }`); the subgraph refuses those anyway.
 */
export const idKey = (id: unknown): string => (typeof id === "string" ? id : (JSON.stringify(id) ?? ""));

export const ID_LIST_ARGUMENTS: ReadonlyMap<string, string> = new Map([["Query.betResults", "betIds"]]);

/** The fields a connection-returning field sizes (`sizedFields`), and what its totalCount costs. */
export interface ConnectionScope {
  sizedFields: ReadonlySet<string>;
  size: number;
  /** What its totalCount costs when no counter serves it; 0 when one does. */
  countCost: number;
}

/** What one (non-introspection) field is priced at, whatever the sizes of the lists around it. */
export interface FieldPrice {
  /** Points per call of the field (per parent object): the database statements it runs. */
  statement: number;
  /** Whether it returns objects (priced per object returned) rather than leaves (columns). */
  composite: boolean;
  list: boolean;
  /** The estimated length of the list it returns (1 when not a list). */
  size: number;
  /** Points per object returned. */
  weight: number;
  named: GraphQLNamedType;
  /** A field whose `@listSize` sizes fields of the object it returns: the scope of that object's fields. */
  connection?: ConnectionScope;
  /** The list argument whose distinct values the answer holds, one entry per value (ID_LIST_ARGUMENTS). */
  idList?: string;
}

/** The size a `@listSize` gives: the largest slicing argument given (or its default), else `assumedSize`. */
function declaredSize(
  listSize: ListSize,
  selection: FieldNode,
  definition: GraphQLField<unknown, unknown>,
  values: Record<string, unknown>,
): number | undefined {
  const sliced = (listSize.slicingArguments ?? []).flatMap((name) => {
    const given = argument(selection, name, values);
    const value = typeof given === "number" ? given : definition.args.find((a) => a.name === name)?.defaultValue;
    return typeof value === "number" ? [Math.max(1, value)] : [];
  });
  return sliced.length > 0 ? Math.max(...sliced) : listSize.assumedSize;
}

/** What a field's price owes to the schema and the document alone, whatever the variables and the lists around it. */
interface StaticPrice {
  prices: SchemaPrices;
  parent: GraphQLNamedType;
  /** The field's `@cost`, and the `@cost` of the arguments the selection gives. */
  fieldWeight: number;
  argumentWeight: number;
  shape: ((filter: unknown) => { page: number; count: number }) | undefined;
  named: GraphQLNamedType;
  composite: boolean;
  list: boolean;
  weight: number;
  listSize: ListSize | undefined;
  sizedFields: ReadonlySet<string> | undefined;
  idList: string | undefined;
}
// By selection node: Apollo Server keeps the parsed document of a repeated operation, so each of its requests reads these nodes.
const staticPrices = new WeakMap<FieldNode, StaticPrice>();

function staticPriceOf(parent: GraphQLNamedType, selection: FieldNode, definition: GraphQLField<unknown, unknown>, prices: SchemaPrices): StaticPrice {
  const known = staticPrices.get(selection);
  if (known?.prices === prices && known.parent === parent) return known;
  const coordinate = `${parent.name}.${selection.name.value}`;
  let argumentWeight = 0;
  for (const given of selection.arguments ?? []) argumentWeight += prices.argumentWeights.get(`${coordinate}(${given.name.value}:)`) ?? 0;
  const named = getNamedType(definition.type);
  const listSize = prices.listSizes.get(coordinate);
  const price: StaticPrice = {
    prices,
    parent,
    fieldWeight: prices.fieldWeights.get(coordinate) ?? 0,
    argumentWeight,
    shape: FILTER_SHAPE_PRICES[coordinate],
    named,
    composite: isCompositeType(named),
    list: isListType(getNullableType(definition.type)),
    weight: prices.typeWeights.get(named.name) ?? 1,
    listSize,
    sizedFields: listSize?.sizedFields ? new Set(listSize.sizedFields) : undefined,
    idList: ID_LIST_ARGUMENTS.get(coordinate),
  };
  staticPrices.set(selection, price);
  return price;
}

/**
 * The price model of one field (docs/reference/limits.md#query-cost), shared by the estimate
 * before the operation runs (measureOperation) and the settlement after it (gateway/actual-cost.ts).
 * `scope` is the connection the parent object is (when a field of its parent sizes it).
 */
export function priceField(
  parent: GraphQLNamedType,
  selection: FieldNode,
  definition: GraphQLField<unknown, unknown>,
  values: Record<string, unknown>,
  scope: ConnectionScope | undefined,
  prices: SchemaPrices,
): FieldPrice {
  const name = selection.name.value;
  const known = staticPriceOf(parent, selection, definition, prices);
  const { listSize, idList } = known;
  const shape = known.shape?.(argument(selection, "filter", values));
  let statement = known.fieldWeight;
  if (name === COUNT_FIELD && scope?.countCost) statement = scope.countCost;
  if (shape?.page) statement = shape.page;
  statement += known.argumentWeight;
  const ids = idList ? argument(selection, idList, values) : undefined;
  let size = 1;
  if (known.list) {
    if (Array.isArray(ids)) size = Math.max(1, new Set(ids.map(idKey)).size);
    else if (listSize && !listSize.sizedFields) size = declaredSize(listSize, selection, definition, values) ?? UNSIZED_LIST_SIZE;
    else if (scope?.sizedFields.has(name)) size = scope.size;
    else size = UNSIZED_LIST_SIZE;
  }
  return {
    statement,
    composite: known.composite,
    list: known.list,
    size,
    weight: known.weight,
    named: known.named,
    ...(listSize && known.sizedFields
      ? {
          connection: {
            sizedFields: known.sizedFields,
            size: declaredSize(listSize, selection, definition, values) ?? UNSIZED_LIST_SIZE,
            countCost: shape?.count ?? 0,
          },
        }
      : {}),
    ...(idList ? { idList } : {}),
  };
}

/**
 * Measures an operation, stopping as soon as a limit is passed: the walk never does more work
 * than the limits allow, so fragment bombs cannot turn the measurement itself into the attack.
 */
export function measureOperation(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variables: Record<string, unknown>,
  limits: QueryLimits,
): OperationMeasure {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  const values = effectiveVariables(operation, variables);
  const prices = pricesOf(schema);
  const sizes = introspectionListSizes(schema);
  const measure: OperationMeasure = { depth: 0, aliases: 0, cost: 0 };
  const charge = (amount: number) => {
    measure.cost += amount;
    if (measure.cost > limits.maxCost) throw new LimitExceeded("cost", limits.maxCost, measure.cost);
  };

  const maxNesting = NESTING_PER_DEPTH * limits.maxDepth;
  const walk = (
    selectionSet: SelectionSetNode,
    parent: GraphQLNamedType,
    depth: number,
    multiplier: number,
    connection: ConnectionScope | undefined,
    nesting = 0,
  ) => {
    for (const selection of selectionSet.selections) {
      const level = nesting + 1;
      if (level > maxNesting) throw new LimitExceeded("nesting", maxNesting, level);
      if (selection.kind === Kind.FRAGMENT_SPREAD) {
        const fragment = fragments.get(selection.name.value);
        const type = fragment && schema.getType(fragment.typeCondition.name.value);
        if (fragment && type) walk(fragment.selectionSet, type, depth, multiplier, connection, level);
        continue;
      }
      if (selection.kind === Kind.INLINE_FRAGMENT) {
        const type = selection.typeCondition ? schema.getType(selection.typeCondition.name.value) : parent;
        if (type) walk(selection.selectionSet, type, depth, multiplier, connection, level);
        continue;
      }
      if (selection.alias && ++measure.aliases > limits.maxAliases) throw new LimitExceeded("aliases", limits.maxAliases, measure.aliases);
      const introspection = selection.name.value.startsWith("__") || parent.name.startsWith("__");
      const name = selection.name.value;
      const meta = name === "__schema" ? SchemaMetaFieldDef : name === "__type" ? TypeMetaFieldDef : undefined;
      const definition = meta ?? (isObjectType(parent) || isInterfaceType(parent) ? parent.getFields()[name] : undefined);
      const fieldDepth = introspection ? depth : depth + 1;
      if (fieldDepth > measure.depth) {
        measure.depth = fieldDepth;
        if (fieldDepth > limits.maxDepth) throw new LimitExceeded("depth", limits.maxDepth, fieldDepth);
      }
      if (introspection || !definition) {
        charge(1);
        if (!selection.selectionSet || !definition) continue;
        const size = isListType(getNullableType(definition.type)) ? (sizes.get(`${parent.name}.${name}`) ?? INTROSPECTION_LIST_SIZE) : 1;
        const instances = multiplier * size;
        charge(Math.ceil(instances / INTROSPECTION_OBJECTS_PER_UNIT));
        walk(selection.selectionSet, getNamedType(definition.type), fieldDepth, instances, connection, level);
        continue;
      }
      const price = priceField(parent, selection, definition, values, connection, prices);
      // 1 for the selection itself (once, whatever the list sizes: it is a column of rows already
      // paid for); this is also what bounds a fragment bomb of leaves.
      charge(1 + multiplier * price.statement);
      if (!price.composite) continue; // a leaf, or a list of leaves: columns of a row already read
      const instances = multiplier * price.size;
      charge(instances * price.weight);
      if (!selection.selectionSet) continue;
      // A connection's sized fields (edges, nodes) are as long as the field that returned it says.
      walk(selection.selectionSet, price.named, fieldDepth, instances, price.connection, level);
    }
  };

  const root =
    operation.operation === "query" ? schema.getQueryType() : operation.operation === "mutation" ? schema.getMutationType() : schema.getSubscriptionType();
  if (root) walk(operation.selectionSet, root, 0, 1, undefined);
  return measure;
}

const measured = new WeakMap<GraphQLRequest, OperationMeasure>();

/**
 * The measure queryLimitsPlugin took of a request's operation (it passed every limit), so the
 * points budget (gateway/points-budget.ts) charges that very cost without walking it again;
 * undefined when the request has no operation or was refused.
 */
export function measuredOperation(request: GraphQLRequest): OperationMeasure | undefined {
  return measured.get(request);
}

/** Refuses an operation over any limit with QUERY_TOO_COMPLEX naming the limit and the value. */
export function queryLimitsPlugin(limits: QueryLimits): ApolloServerPlugin {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ schema, document, operation, request }) {
          if (!operation) {
            // The gateway's planner would otherwise fail on it as an internal error (HTTP 500).
            const named = request.operationName ? `no operation named ${JSON.stringify(request.operationName.slice(0, 64))}` : "several operations";
            throw new GraphQLError(`The document has ${named}: operationName must name one of its operations`, {
              extensions: { code: "BAD_REQUEST", http: { status: 400 } },
            });
          }
          try {
            checkArgumentRanges(document, operation, request.variables ?? {});
          } catch (error) {
            if (!(error instanceof InputError)) throw error;
            // A request error (no data): HTTP 400, as for the other limits.
            throw new GraphQLError(error.message, { extensions: { ...error.extensions, http: { status: 400 } } });
          }
          try {
            measured.set(request, measureOperation(schema, document, operation, request.variables ?? {}, limits));
          } catch (error) {
            if (!(error instanceof LimitExceeded)) throw error;
            throw new GraphQLError(`Query is too complex: ${error.message}`, {
              extensions: { code: ErrorCode.QueryTooComplex, ...error.details, http: { status: 400 } },
            });
          }
        },
      };
    },
  };
}
