import {
  BREAK,
  execute,
  getNamedType,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLScalarType,
  isInputObjectType,
  isLeafType,
  isListType,
  isNonNullType,
  typeFromAST,
  type GraphQLField,
  type GraphQLLeafType,
  type GraphQLOutputType,
  getVariableValues,
  GraphQLError,
  Kind,
  visit,
  type DocumentNode,
  type ExecutionResult,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from "graphql";
import type { ApolloServerPlugin, BaseContext } from "@apollo/server";
import { answerBeforeExecutionStep } from "../../core/early-answer.ts";
import type { ExecutorSeam } from "../../core/schema.ts";
import { compileQuery, isCompiledQuery, type CompiledQuery } from "graphql-jit";

// The subgraphs' executor: each operation is compiled once into JavaScript (graphql-jit) and run
// from a bounded cache, instead of graphql-js walking the document for every field of every
// response. graphql-js completing ~2 000 leaves of 100 proofs per answer was the largest share of a
// results subgraph request after the SQL (BENCHMARKS.md, issue 12).
//
// Apollo Server has no executor option for a plain schema; its `gateway` option (ExecutorSeam:
// `load()` gives the schema and an executor) is the seam. Apollo Server still parses, validates,
// runs the plugins and formats errors (core/errors.ts) as before: only execution moves. What stays
// on graphql-js, so that answers are the ones graphql-js gives: operations graphql-jit cannot
// compile, anything but a query, introspection (`__schema`, `__type`), variables inside list or
// object literals (hasNestedVariable) and the errors of variables the compiled query refuses
// (graphql-js coerces those again, for its own messages). Variables are coerced once, by the
// compiled query (graphql-js's generic pass cost as much again), except in an operation with an
// input-object variable, where graphql-js checks them first. Lists of leaves are compiled as one
// leaf each (leafListShadows below); one that does not fit its type is answered by graphql-js too.

/** How requests were executed since start: a test and /metrics-free debugging read it. */
export interface ExecutorStats {
  /** Requests run by a compiled query. */
  compiledRuns: number;
  /** Requests run by graphql-js (first sight, not compilable, not a query, introspection, bad variables). */
  fallbackRuns: number;
  /** Compilations (an operation's second arrival), including the ones that fell back. */
  compilations: number;
  /** Second arrivals run on graphql-js because the minute's compilation budget was spent (compiled on a later arrival). */
  compilationsDeferred: number;
}

export interface CompiledExecutor {
  gateway: ExecutorSeam;
  /** Apollo Server's plugin that runs each request before the execution step (see createCompiledExecutor): the server's plugins must list it, last. */
  plugin: ApolloServerPlugin<BaseContext>;
  stats: ExecutorStats;
}

const FALLBACK = Symbol("run on graphql-js");
/** Seen once: compiled when it comes again, so a stream of one-off operations never pays a compilation (~1 ms). */
const SEEN_ONCE = Symbol("seen once");
/**
 * A compiled operation. graphql-jit coerces variables as graphql-js does except input objects (it
 * takes an array for one, for instance): an operation with an input-object variable has its
 * variables checked by graphql-js first, as every operation's once were.
 */
interface Compiled {
  query: CompiledQuery;
  variablesByGraphqlJs: boolean;
}
type Runnable = Compiled | typeof FALLBACK;

/** What a run needs of a request, as either seam gives it. */
interface RunRequest {
  /** Apollo Server's hash of the query text (set before any plugin or executor sees the request). */
  queryHash: string | undefined;
  operationName: string | null;
  document: DocumentNode;
  operation: OperationDefinitionNode | undefined;
  context: object;
  variables: Record<string, unknown>;
  /** The operation name the request asked for (graphql-js picks the operation by it). */
  requestedOperation: string | null | undefined;
}
type Entry = Runnable | typeof SEEN_ONCE;

/** Whether a selection asks for `__schema` or `__type` (introspection stays on graphql-js). */
function introspects(selectionSet: SelectionSetNode, fragments: Map<string, SelectionSetNode>, seen = new Set<string>()): boolean {
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) {
      if (selection.name.value === "__schema" || selection.name.value === "__type") return true;
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      if (introspects(selection.selectionSet, fragments, seen)) return true;
    } else if (!seen.has(selection.name.value)) {
      seen.add(selection.name.value);
      const fragment = fragments.get(selection.name.value);
      if (fragment && introspects(fragment, fragments, seen)) return true;
    }
  }
  return false;
}

/**
 * A field answered under the key `__proto__` (an alias or the name): graphql-jit builds results as
 * object literals, where that key sets the prototype instead of a field; graphql-js keeps it.
 */
function hasProtoKey(document: DocumentNode): boolean {
  let found = false;
  visit(document, {
    Field(node) {
      if ((node.alias ?? node.name).value === "__proto__") found = true;
      return found ? BREAK : undefined;
    },
  });
  return found;
}

/**
 * A variable inside a list or object literal (`betIds: ["1", $b]`): graphql-jit passes its value on
 * unchecked, a null where the item is non-null included (validation allows it when the variable
 * has a default); graphql-js refuses the argument.
 */
function hasNestedVariable(document: DocumentNode): boolean {
  let found = false;
  visit(document, {
    Variable(_node, _key, _parent, _path, ancestors) {
      if (ancestors.some((ancestor) => "kind" in ancestor && (ancestor.kind === Kind.LIST || ancestor.kind === Kind.OBJECT))) found = true;
      return found ? BREAK : undefined;
    },
  });
  return found;
}

/** Whether a variable of the operation is of an input object type, or a list of one. */
function hasInputObjectVariable(schema: GraphQLSchema, operation: OperationDefinitionNode): boolean {
  return (operation.variableDefinitions ?? []).some((definition) => {
    const type = typeFromAST(schema, definition.type);
    return type !== undefined && isInputObjectType(getNamedType(type));
  });
}

/**
 * graphql-jit reports errors as its own objects (no `nodes`, `extensions` undefined when the cause
 * has none): rebuilt here as graphql-js's, as `locatedError` makes them, so that Apollo Server and
 * core/errors.ts see the same error either way.
 */
function asGraphQLError(error: GraphQLError): GraphQLError {
  const original = error.originalError ?? undefined;
  if (original instanceof GraphQLError && Array.isArray(original.path)) return original;
  const rebuilt = new GraphQLError(error.message, { path: error.path, originalError: original });
  (rebuilt as { locations: GraphQLError["locations"] }).locations = error.locations?.length ? error.locations : undefined;
  return rebuilt;
}

/** The message a leaf list's serializer fails with when graphql-js must answer instead (see below). */
const LEAF_LIST_FALLBACK = "leaf list not in its type: answered by graphql-js (2f0c6c1e)";

/** The leaf of a non-null list of non-null leaves, any depth ([X!]!, [[X!]!]!), with the depth. */
function leafListOf(type: GraphQLOutputType): { leaf: GraphQLLeafType; depth: number } | undefined {
  let depth = 0;
  let current: GraphQLOutputType = type;
  while (isNonNullType(current) && isListType(current.ofType)) {
    current = current.ofType.ofType;
    depth++;
  }
  if (depth === 0 || !isNonNullType(current) || !isLeafType(current.ofType)) return undefined;
  return { leaf: current.ofType, depth };
}

/** The array as its leaves serialize, the same array when they serialize to themselves; throws when one does not fit. */
function serializeLeafList(value: unknown, leaf: GraphQLLeafType, depth: number): unknown[] {
  if (!Array.isArray(value)) throw new Error(LEAF_LIST_FALLBACK);
  let out: unknown[] | undefined;
  for (let i = 0; i < value.length; i++) {
    const item: unknown = value[i];
    let serialized: unknown;
    try {
      serialized = depth > 1 ? serializeLeafList(item, leaf, depth - 1) : item == null ? undefined : leaf.serialize(item);
    } catch {
      serialized = undefined;
    }
    if (serialized == null || (typeof serialized === "number" && Number.isNaN(serialized))) throw new Error(LEAF_LIST_FALLBACK);
    if (serialized !== item) {
      out ??= value.slice(0, i);
    }
    if (out) out.push(serialized);
  }
  return out ?? value;
}

/**
 * A list of UInt256 as the database keeps it for a field listed in `storeCheckedLists`: arrays to
 * the field's depth, of strings of at most 77 characters. The database has already refused any
 * string there that is not a canonical decimal (the CHECK of migration
 * `*_result_proof_numbers_checked`), and 77 digits cannot exceed 2^256-1, so such a list is served
 * as it is: checking its numbers again was ~7 % of a betResults(100) answer's CPU. Anything else
 * (a number of 78 digits or more, a value of another type, another shape) takes the UInt256
 * serializer as every other list does.
 */
function isStoreCheckedList(value: unknown, depth: number): boolean {
  if (!Array.isArray(value)) return false;
  for (let i = 0; i < value.length; i++) {
    const item: unknown = value[i];
    if (depth > 1 ? !isStoreCheckedList(item, depth - 1) : typeof item !== "string" || item.length === 0 || item.length > 77) return false;
  }
  return true;
}

/**
 * graphql-jit completes a list item by item, with two closures and a handler call per item (about
 * 2 000 items in a betResults(100) answer's proofs). A non-null list of non-null leaves is compiled
 * instead as one leaf whose serializer checks every item with the leaf's own serializer and hands
 * the array back as is when every item serializes to itself. When an item does not fit (null, not
 * a leaf value, a list that is not an array), the whole operation is answered by graphql-js, which
 * reports the error at the item's own path. The shadow types exist only while compiling.
 */
function leafListShadows(
  schema: GraphQLSchema,
  storeCheckedLists: ReadonlySet<string>,
): { field: GraphQLField<unknown, unknown>; shadow: GraphQLOutputType }[] {
  const shadows = [];
  for (const type of Object.values(schema.getTypeMap())) {
    if (!(type instanceof GraphQLObjectType) || type.name.startsWith("__")) continue;
    for (const field of Object.values(type.getFields())) {
      const list = leafListOf(field.type);
      if (!list) continue;
      const { leaf, depth } = list;
      const storeChecked = storeCheckedLists.has(`${type.name}.${field.name}`);
      if (storeChecked && leaf.name !== "UInt256") throw new Error(`storeCheckedLists: ${type.name}.${field.name} is not a list of UInt256`);
      const scalar = new GraphQLScalarType({
        name: `${leaf.name}_list${depth}_of_${type.name}_${field.name}`,
        serialize: storeChecked
          ? (value) => (isStoreCheckedList(value, depth) ? value : serializeLeafList(value, leaf, depth))
          : (value) => serializeLeafList(value, leaf, depth),
      });
      shadows.push({ field, shadow: new GraphQLNonNull(scalar) });
    }
  }
  return shadows;
}

/**
 * A gateway for Apollo Server that serves `schema` with compiled queries: an operation is compiled
 * the second time it comes (the first runs on graphql-js), `maxOperations` kept, least recently
 * used dropped.
 */
export function createCompiledExecutor(
  schema: GraphQLSchema,
  options: {
    maxOperations?: number;
    maxCompilationsPerMinute?: number;
    now?: () => number;
    /**
     * `Type.field` of lists of UInt256 whose strings the database has checked to be canonical
     * decimals when they were written (isStoreCheckedList): served as read.
     */
    storeCheckedLists?: ReadonlySet<string>;
  } = {},
): CompiledExecutor {
  const maxOperations = options.maxOperations ?? 500;
  const maxCompilationsPerMinute = options.maxCompilationsPerMinute ?? 120;
  const now = options.now ?? Date.now;
  const cache = new Map<string, Entry>();
  const shadows = leafListShadows(schema, options.storeCheckedLists ?? new Set());
  // Compilation is synchronous: the shadow types are in place for it alone (nothing else runs).
  function compile(document: DocumentNode, operationName: string | undefined) {
    const originals = shadows.map(({ field, shadow }) => {
      const original = field.type;
      field.type = shadow;
      return original;
    });
    try {
      return compileQuery(schema, document, operationName);
    } finally {
      shadows.forEach(({ field }, i) => {
        field.type = originals[i] as GraphQLOutputType;
      });
    }
  }
  const stats: ExecutorStats = { compiledRuns: 0, fallbackRuns: 0, compilations: 0, compilationsDeferred: 0 };
  // A client sending ever-new operations twice each would otherwise make this process compile
  // (~1 ms each) as fast as it asks, and push popular operations out of the cache: compilations
  // are counted per minute, and past the budget an operation stays on graphql-js until later.
  let windowStart = Number.NEGATIVE_INFINITY;
  let compilationsInWindow = 0;

  function mayCompile(): boolean {
    const time = now();
    if (time - windowStart >= 60_000) {
      windowStart = time;
      compilationsInWindow = 0;
    }
    if (compilationsInWindow >= maxCompilationsPerMinute) return false;
    compilationsInWindow++;
    return true;
  }

  function entryFor(requestContext: RunRequest, operation: OperationDefinitionNode): Runnable {
    const key = `${requestContext.queryHash ?? ""}:${requestContext.operationName ?? ""}`;
    const cached = cache.get(key);
    if (cached === undefined) {
      remember(key, SEEN_ONCE);
      return FALLBACK;
    }
    if (cached !== SEEN_ONCE) {
      cache.delete(key);
      cache.set(key, cached);
      return cached;
    }
    if (!mayCompile()) {
      stats.compilationsDeferred++;
      return FALLBACK;
    }
    stats.compilations++;
    let entry: Runnable = FALLBACK;
    const fragments = new Map(
      requestContext.document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d.selectionSet] as const] : [])),
    );
    if (
      operation.operation === "query" &&
      !introspects(operation.selectionSet, fragments) &&
      !hasProtoKey(requestContext.document) &&
      !hasNestedVariable(requestContext.document)
    ) {
      try {
        const compiled = compile(requestContext.document, requestContext.operationName ?? undefined);
        if (isCompiledQuery(compiled)) entry = { query: compiled, variablesByGraphqlJs: hasInputObjectVariable(schema, operation) };
      } catch {
        // Not compilable: graphql-js runs it.
      }
    }
    cache.delete(key);
    remember(key, entry);
    return entry;
  }

  function remember(key: string, entry: Entry): void {
    cache.set(key, entry);
    if (cache.size > maxOperations) cache.delete(cache.keys().next().value as string);
  }

  /** One request, run compiled or on graphql-js: the executor's whole answer. */
  async function run(request: RunRequest): Promise<ExecutionResult> {
    const { operation, document, context, variables } = request;
    // What graphql-js answers, and its errors for the variables: each path below that leaves the
    // compiled query ends in one of them, counted as a fallback run.
    const onGraphqlJs = () => {
      stats.fallbackRuns++;
      return execute({ schema, document, contextValue: context, variableValues: variables, operationName: request.requestedOperation });
    };
    const variableErrors = (definitions: OperationDefinitionNode["variableDefinitions"]) => {
      const { errors } = getVariableValues(schema, definitions ?? [], variables, { maxErrors: 50 });
      if (errors) stats.fallbackRuns++;
      return errors;
    };
    const entry = operation ? entryFor(request, operation) : FALLBACK;
    if (entry === FALLBACK || !operation) return onGraphqlJs();
    if (entry.variablesByGraphqlJs) {
      const errors = variableErrors(operation.variableDefinitions);
      if (errors) return { errors };
    }
    const result: ExecutionResult = await entry.query.query(undefined, context, variables);
    if (result.data === undefined) {
      // The compiled query refused its variables before running (its only answer without data):
      // graphql-js coerces them again for its own errors; should it accept them, it runs the query.
      const errors = variableErrors(operation.variableDefinitions);
      return errors ? { errors } : onGraphqlJs();
    }
    if (result.errors?.some((error) => error.message === LEAF_LIST_FALLBACK)) return onGraphqlJs();
    stats.compiledRuns++;
    return result.errors ? { errors: result.errors.map(asGraphQLError), data: result.data } : result;
  }

  /** A run of what either seam gives of a request (the plugin's request context, or the executor's), with its context value. */
  const runOf = (
    request: Partial<Pick<RunRequest, "queryHash">> &
      Pick<RunRequest, "operationName" | "document" | "operation"> & { request: { variables?: Record<string, unknown>; operationName?: string | null } },
    context: object,
  ) =>
    run({
      queryHash: request.queryHash,
      operationName: request.operationName,
      document: request.document,
      operation: request.operation,
      context,
      variables: request.request.variables ?? {},
      requestedOperation: request.request.operationName,
    });
  // Every request is run before Apollo Server's execution step (core/early-answer.ts says why):
  // an answer with errors, or a throw, is handed on to that step as it was.
  const early = answerBeforeExecutionStep((request) => runOf(request, request.contextValue));
  const executor = early.executor((requestContext) => runOf(requestContext, requestContext.context));
  const plugin = early.plugin;

  const gateway: ExecutorSeam = {
    async load() {
      return { executor };
    },
    onSchemaLoadOrUpdate(callback) {
      callback({ apiSchema: schema, coreSupergraphSdl: "" });
      return () => {};
    },
    async stop() {
      cache.clear();
    },
  };
  return { gateway, plugin, stats };
}
