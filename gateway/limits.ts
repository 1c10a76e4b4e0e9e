import type { ApolloServerPlugin, GraphQLRequest } from "@apollo/server";
import {
  GraphQLError,
  getNamedType,
  getNullableType,
  isCompositeType,
  isListType,
  isObjectType,
  isInterfaceType,
  isEnumType,
  isInputObjectType,
  isUnionType,
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
import { checkBetIdCount, checkPageSize, MAX_BETS_PER_TRANSACTION } from "../core/arguments.ts";
import { ErrorCode, InputError } from "../core/errors.ts";

// Query limits of the contract, measured on the parsed operation before any subgraph is asked:
// argument ranges first (BAD_USER_INPUT naming the argument, whatever the cost), then depth
// (fields nested in fields), aliases, and cost. The cost model prices what the service does, not
// how many names a query spells out (docs/reference/limits.md#query-cost):
// - a scalar or enum leaf costs 1 where the (fragment-expanded) query selects it, not per row: it is
//   a column of a row already read;
// - every object costs 1 each time it is returned, a `Bet` BET_WEIGHT (its rows in two subgraphs);
// - a list multiplies what it contains by its size: `first`, the number of distinct `betIds`, the
//   connection's `first` for `edges`/`nodes`, UNBOUNDED_LIST_SIZE for small lists no argument bounds;
// - each database statement a field runs costs FIELD_COST, a `totalCount` that no counter serves
//   (a `game` or placed-time filter counts the wallet's rows) FILTERED_COUNT_COST, and a page under
//   a filter no single index serves in page order SCAN_PAGE_COST; `bets` (every wallet) pays
//   TABLE_SCAN_COST / TABLE_COUNT_COST instead when no player filter bounds that work to one wallet.
// Introspection stays open and does not count towards depth, but is priced like the rest by what it
// returns: its lists are as long as the schema's own (every type, then the fields of a type on
// average, and so on), so one full introspection fits the budget and many aliased copies do not.

export interface QueryLimits {
  maxDepth: number;
  maxAliases: number;
  maxCost: number;
}

export const DEFAULT_QUERY_LIMITS: QueryLimits = { maxDepth: 8, maxAliases: 30, maxCost: 5000 };

/** Lists whose size no argument states (networks, contracts, health checks) are small. */
const UNBOUNDED_LIST_SIZE = 10;
/** Connection fields whose size is the `first` of the field that returned the connection. */
const CONNECTION_LISTS = new Set(["edges", "nodes"]);
/** A bet is a row in history and one in results (joined by the gateway). */
const BET_WEIGHT = 3;
/** Database statements run per call of a field, beyond the objects it returns. */
const FIELD_COST: Record<string, number> = {
  "Query.playerBets": 10,
  "Query.bets": 10,
  "Query.betsByTransaction": 5,
  "Query.betResults": 5,
  "Query.pendingBetCount": 5,
  // One statement: the counter rows, plus each network's settled bets of its last `confirmations`
  // blocks (not final yet) read through an index: more than a counter, never a game's history.
  "Query.fairnessStats": 20,
  "Query.betResult": 1,
  "Query.networkConfigs": 1,
  "BetConnection.totalCount": 1,
};
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
/** Default page size of a connection field without `first`. */
const DEFAULT_PAGE = 20;

export interface OperationMeasure {
  depth: number;
  aliases: number;
  cost: number;
}

class LimitExceeded extends Error {
  constructor(
    readonly limit: "depth" | "aliases" | "cost",
    readonly max: number,
    readonly value: number,
  ) {
    super(`${limit} ${value} exceeds the limit of ${max}`);
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

/**
 * The distinct ids of a field's `betIds` list (as given: "7" and "07" count twice), or undefined
 * without one. The answer repeats a repeated id from one read (subgraphs/results), so it is priced
 * once: 100 copies of one id cost what one does.
 */
export function distinctBetIds(field: FieldNode, variables: Record<string, unknown>): string[] | undefined {
  const ids = betIdsArgument(field, variables);
  return ids ? [...new Set(ids.map(String))] : undefined;
}

/** A field's `betIds` list as given (repeats included), or undefined without one. */
export function betIdsArgument(field: FieldNode, variables: Record<string, unknown>): unknown[] | undefined {
  const ids = argument(field, "betIds", variables);
  return Array.isArray(ids) ? ids : undefined;
}

function argument(field: FieldNode, name: string, variables: Record<string, unknown>): unknown {
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

/** Sizes of the introspection lists of a schema: how many of each a full introspection returns, per parent. */
function introspectionListSizes(schema: GraphQLSchema): Map<string, number> {
  const types = Object.values(schema.getTypeMap());
  let fields = 0;
  let args = 0;
  let enumValues = 0;
  let inputFields = 0;
  let related = 0;
  for (const type of types) {
    if (isObjectType(type) || isInterfaceType(type)) {
      const own = Object.values(type.getFields());
      fields += own.length;
      args += own.reduce((sum, field) => sum + field.args.length, 0);
      related += type.getInterfaces().length;
    } else if (isEnumType(type)) enumValues += type.getValues().length;
    else if (isInputObjectType(type)) inputFields += Object.keys(type.getFields()).length;
    else if (isUnionType(type)) related += type.getTypes().length;
  }
  const directives = schema.getDirectives();
  const per = (total: number, over: number) => Math.max(1, Math.ceil(total / Math.max(1, over)));
  return new Map([
    ["__Schema.types", types.length],
    ["__Schema.directives", directives.length],
    ["__Type.fields", per(fields, types.length)],
    ["__Type.enumValues", per(enumValues, types.length)],
    ["__Type.inputFields", per(inputFields, types.length)],
    ["__Type.interfaces", per(related, types.length)],
    ["__Type.possibleTypes", per(related, types.length)],
    ["__Field.args", per(args, fields)],
    [
      "__Directive.args",
      per(
        directives.reduce((sum, d) => sum + d.args.length, 0),
        directives.length,
      ),
    ],
  ]);
}
const introspectionSizes = new WeakMap<GraphQLSchema, Map<string, number>>();
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

interface ConnectionScope {
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
  /** Points per object returned. */
  weight: number;
  named: GraphQLNamedType;
  /** A connection-returning field: what the connection's totalCount costs. */
  connection?: { countCost: number };
}

/**
 * The price model of one field (docs/reference/limits.md#query-cost), shared by the estimate
 * before the operation runs (measureOperation) and the settlement after it (gateway/actual-cost.ts).
 */
export function priceField(
  parent: GraphQLNamedType,
  selection: FieldNode,
  definition: GraphQLField<unknown, unknown>,
  values: Record<string, unknown>,
  connection: { countCost: number } | undefined,
): FieldPrice {
  const coordinate = `${parent.name}.${selection.name.value}`;
  const filterArgument = argument(selection, "filter", values);
  const filter = filterOf(filterArgument);
  const explorer = coordinate === "Query.bets" ? explorerFilterCost(filterArgument) : undefined;
  let statement = FIELD_COST[coordinate] ?? 0;
  if (coordinate === "BetConnection.totalCount" && connection?.countCost) statement = connection.countCost;
  if (coordinate === "Query.playerBets" && filter.scans) statement = SCAN_PAGE_COST;
  if (explorer?.page) statement = explorer.page;
  const named = getNamedType(definition.type);
  const countCost = explorer ? explorer.count : filter.game || filter.timeRange ? FILTERED_COUNT_COST : 0;
  return {
    statement,
    composite: isCompositeType(named),
    list: isListType(getNullableType(definition.type)),
    weight: named.name === "Bet" ? BET_WEIGHT : 1,
    named,
    ...(definition.args.some((a) => a.name === "first") ? { connection: { countCost } } : {}),
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
  const sizes = introspectionSizes.get(schema) ?? introspectionListSizes(schema);
  introspectionSizes.set(schema, sizes);
  const measure: OperationMeasure = { depth: 0, aliases: 0, cost: 0 };
  const charge = (amount: number) => {
    measure.cost += amount;
    if (measure.cost > limits.maxCost) throw new LimitExceeded("cost", limits.maxCost, measure.cost);
  };

  const pageSize = (field: FieldNode): number => {
    const first = argument(field, "first", values);
    return typeof first === "number" ? Math.max(1, first) : DEFAULT_PAGE;
  };
  const listSize = (field: FieldNode, connection: ConnectionScope | undefined): number => {
    const ids = distinctBetIds(field, values);
    if (ids) return Math.max(1, ids.length);
    if (field.name.value === "betsByTransaction") return MAX_BETS_PER_TRANSACTION;
    if (CONNECTION_LISTS.has(field.name.value) && connection) return connection.size;
    return UNBOUNDED_LIST_SIZE;
  };

  const walk = (selectionSet: SelectionSetNode, parent: GraphQLNamedType, depth: number, multiplier: number, connection: ConnectionScope | undefined) => {
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FRAGMENT_SPREAD) {
        const fragment = fragments.get(selection.name.value);
        const type = fragment && schema.getType(fragment.typeCondition.name.value);
        if (fragment && type) walk(fragment.selectionSet, type, depth, multiplier, connection);
        continue;
      }
      if (selection.kind === Kind.INLINE_FRAGMENT) {
        const type = selection.typeCondition ? schema.getType(selection.typeCondition.name.value) : parent;
        if (type) walk(selection.selectionSet, type, depth, multiplier, connection);
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
        const size = isListType(getNullableType(definition.type)) ? (sizes.get(`${parent.name}.${name}`) ?? UNBOUNDED_LIST_SIZE) : 1;
        const instances = multiplier * size;
        charge(Math.ceil(instances / INTROSPECTION_OBJECTS_PER_UNIT));
        walk(selection.selectionSet, getNamedType(definition.type), fieldDepth, instances, connection);
        continue;
      }
      const price = priceField(parent, selection, definition, values, connection);
      // 1 for the selection itself (once, whatever the list sizes: it is a column of rows already
      // paid for); this is also what bounds a fragment bomb of leaves.
      charge(1 + multiplier * price.statement);
      if (!price.composite) continue; // a leaf, or a list of leaves: columns of a row already read
      const instances = multiplier * (price.list ? listSize(selection, connection) : 1);
      charge(instances * price.weight);
      if (!selection.selectionSet) continue;
      // A connection's edges/nodes are as long as the `first` of the field that returned it.
      const scope = price.connection ? { size: pageSize(selection), countCost: price.connection.countCost } : connection;
      walk(selection.selectionSet, price.named, fieldDepth, instances, scope);
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
              extensions: { code: ErrorCode.QueryTooComplex, limit: error.limit, max: error.max, value: error.value, http: { status: 400 } },
            });
          }
        },
      };
    },
  };
}
