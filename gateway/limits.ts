import type { ApolloServerPlugin } from "@apollo/server";
import {
  GraphQLError,
  getNamedType,
  getNullableType,
  isListType,
  isObjectType,
  isInterfaceType,
  Kind,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValueNode,
} from "graphql";
import { ErrorCode } from "../core/errors.ts";

// Query limits of the contract, measured on the parsed operation before any subgraph is asked:
// depth (fields nested in fields), aliases, and cost: every field costs 1 each time it will be
// resolved, and a list field costs its page size and multiplies what it contains by it.
// Introspection stays cheap and open: its fields cost 1 each and do not count towards depth.

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

export interface OperationMeasure {
  depth: number;
  aliases: number;
  cost: number;
}

class LimitExceeded extends Error {
  constructor(readonly limit: "depth" | "aliases" | "cost", readonly max: number, readonly value: number) {
    super(`${limit} ${value} exceeds the limit of ${max}`);
  }
}

function valueOf(node: ValueNode | undefined, variables: Record<string, unknown>): unknown {
  if (!node) return undefined;
  switch (node.kind) {
    case Kind.VARIABLE:
      return variables[node.name.value];
    case Kind.INT:
      return Number(node.value);
    case Kind.LIST:
      return node.values;
    default:
      return undefined;
  }
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
  const measure: OperationMeasure = { depth: 0, aliases: 0, cost: 0 };

  const sizeOf = (field: FieldNode, definition: GraphQLField<unknown, unknown>, connectionSize: number | undefined): number => {
    const argument = (name: string) => {
      const given = valueOf(field.arguments?.find((a) => a.name.value === name)?.value, variables);
      return given ?? definition.args.find((a) => a.name === name)?.defaultValue;
    };
    const first = argument("first");
    if (typeof first === "number") return Math.max(1, first);
    const ids = argument("betIds");
    if (Array.isArray(ids)) return Math.max(1, ids.length);
    if (CONNECTION_LISTS.has(field.name.value) && connectionSize !== undefined) return connectionSize;
    return UNBOUNDED_LIST_SIZE;
  };

  const walk = (selectionSet: SelectionSetNode, parent: GraphQLNamedType, depth: number, multiplier: number, connectionSize: number | undefined) => {
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FRAGMENT_SPREAD) {
        const fragment = fragments.get(selection.name.value);
        const type = fragment && schema.getType(fragment.typeCondition.name.value);
        if (fragment && type) walk(fragment.selectionSet, type, depth, multiplier, connectionSize);
        continue;
      }
      if (selection.kind === Kind.INLINE_FRAGMENT) {
        const type = selection.typeCondition ? schema.getType(selection.typeCondition.name.value) : parent;
        if (type) walk(selection.selectionSet, type, depth, multiplier, connectionSize);
        continue;
      }
      if (selection.alias && ++measure.aliases > limits.maxAliases) throw new LimitExceeded("aliases", limits.maxAliases, measure.aliases);
      const introspection = selection.name.value.startsWith("__") || parent.name.startsWith("__");
      const definition = isObjectType(parent) || isInterfaceType(parent) ? parent.getFields()[selection.name.value] : undefined;
      const isList = definition !== undefined && isListType(getNullableType(definition.type));
      const size = isList && !introspection ? sizeOf(selection, definition, connectionSize) : 1;
      measure.cost += introspection ? 1 : multiplier * size;
      if (measure.cost > limits.maxCost) throw new LimitExceeded("cost", limits.maxCost, measure.cost);
      const fieldDepth = introspection ? depth : depth + 1;
      if (fieldDepth > measure.depth) {
        measure.depth = fieldDepth;
        if (fieldDepth > limits.maxDepth) throw new LimitExceeded("depth", limits.maxDepth, fieldDepth);
      }
      if (!selection.selectionSet || !definition) continue;
      // A connection's edges/nodes are as long as the `first` of the field that returned it.
      const childConnectionSize = definition.args.some((a) => a.name === "first") ? sizeOf(selection, definition, undefined) : connectionSize;
      walk(selection.selectionSet, getNamedType(definition.type), fieldDepth, multiplier * size, childConnectionSize);
    }
  };

  const root = operation.operation === "query" ? schema.getQueryType() : operation.operation === "mutation" ? schema.getMutationType() : schema.getSubscriptionType();
  if (root) walk(operation.selectionSet, root, 0, 1, undefined);
  return measure;
}

/** Refuses an operation over any limit with QUERY_TOO_COMPLEX naming the limit and the value. */
export function queryLimitsPlugin(limits: QueryLimits): ApolloServerPlugin {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ schema, document, operation, request }) {
          if (!operation) return;
          try {
            measureOperation(schema, document, operation, request.variables ?? {}, limits);
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
