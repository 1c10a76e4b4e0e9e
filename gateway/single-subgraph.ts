import type { ExecutorSeam, SeamExecutor, SeamRequestContext } from "../core/schema.ts";
import { federationMetadata, Supergraph, type Schema } from "@apollo/federation-internals";
import type { GraphQLDataSource } from "@apollo/gateway";
import { GraphQLDataSourceRequestKind } from "@apollo/gateway/dist/datasources/types.js";
import { answeredWhole } from "./forwarded-data.ts";
import {
  getNamedType,
  GraphQLObjectType,
  isObjectType,
  Kind,
  TypeInfo,
  visit,
  visitWithTypeInfo,
  type DocumentNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from "graphql";

// An operation that one subgraph can answer whole — every field it selects is one that subgraph
// resolves itself (its own, or @shareable and so resolved by it and others: the history subgraph
// answers a wallet page with its bets' networks and results), on object types only — needs no
// query plan: the gateway's plan would be one fetch of the same
// selections, and shaping the answer would copy the subgraph's result field by field into the same
// shape. Such an operation (betResults, networkConfigs, a wallet page) goes to the subgraph
// as the client wrote it, and its answer is the gateway's answer. Profiled on betResults(100), the
// plan's shaping walk over 100 proofs was the largest share of the gateway's own CPU.
//
// Anything else takes the query plan: a document of several operations, fields of two subgraphs,
// interfaces or unions, introspection, directives other than @skip/@include, a graph the caller
// keeps planned (the health graph, answered in the gateway itself). An answer that carries errors
// is handed to the plan as its fetch's answer, so that errors are shaped, named and nulled exactly
// as federation does.

const PLAIN_DIRECTIVES = new Set(["skip", "include"]);

/**
 * For each object type and field of the API schema: the subgraphs that resolve it on their own —
 * every one of them for a @shareable field. Not a subgraph where the field is @external: even one
 * it @provides, since that holds only under the providing field, which this map does not follow
 * (such an operation takes the plan).
 */
export type FieldOwners = Map<string, Map<string, readonly string[]>>;

/** `plannedOnly`: graphs whose answer the gateway never forwards as is (one it answers itself). */
export function fieldOwnersOf(supergraphSdl: string, plannedOnly: ReadonlySet<string>): FieldOwners {
  const owners: FieldOwners = new Map();
  for (const subgraph of Supergraph.build(supergraphSdl).subgraphs()) {
    if (plannedOnly.has(subgraph.name)) continue;
    addOwnFields(owners, subgraph.name, subgraph.schema);
  }
  return owners;
}

function addOwnFields(owners: FieldOwners, graph: string, schema: Schema): void {
  const metadata = federationMetadata(schema);
  const requires = metadata?.requiresDirective();
  for (const type of schema.objectTypes()) {
    if (type.name.startsWith("_")) continue; // _Service, _Entity machinery
    const fields = owners.get(type.name) ?? new Map<string, readonly string[]>();
    owners.set(type.name, fields);
    for (const field of type.fields()) {
      if (metadata?.isFieldExternal(field)) continue;
      if (requires && field.appliedDirectivesOf(requires).length > 0) continue;
      fields.set(field.name, [...(fields.get(field.name) ?? []), graph]);
    }
  }
}

/** The one subgraph that resolves every field of the operation by itself, if there is one. */
export function singleOwnerOf(schema: GraphQLSchema, owners: FieldOwners, document: DocumentNode, operation: OperationDefinitionNode): string | undefined {
  if (operation.operation !== "query") return undefined;
  // The owner is sent the whole document and validates every operation in it: a document of
  // several operations (GraphiQL sends the editor's content) may name another subgraph's fields.
  if (document.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION).length !== 1) return undefined;
  let candidates: readonly string[] | undefined;
  let eligible = true;
  const typeInfo = new TypeInfo(schema);
  // Fragments are visited where they are defined: every fragment of the document is checked, used or not.
  const documentOfOperation: DocumentNode = {
    ...document,
    definitions: document.definitions.filter((d) => d.kind !== Kind.OPERATION_DEFINITION || d === operation),
  };
  visit(
    documentOfOperation,
    visitWithTypeInfo(typeInfo, {
      Directive(node) {
        if (!PLAIN_DIRECTIVES.has(node.name.value)) eligible = false;
      },
      InlineFragment() {
        const type = typeInfo.getType();
        if (type && !isObjectType(getNamedType(type))) eligible = false;
      },
      FragmentDefinition() {
        const type = typeInfo.getType();
        if (!type || !isObjectType(getNamedType(type))) eligible = false;
      },
      Field(node) {
        if (!eligible) return false;
        const name = node.name.value;
        const parent = typeInfo.getParentType();
        if (!(parent instanceof GraphQLObjectType)) {
          eligible = false;
          return false;
        }
        if (name === "__typename") return undefined;
        const graphs = name.startsWith("__") ? undefined : owners.get(parent.name)?.get(name);
        candidates = graphs ? (candidates ?? graphs).filter((graph) => graphs.includes(graph)) : [];
        if (candidates.length === 0) eligible = false;
        return undefined;
      },
    }),
  );
  return eligible && candidates && candidates.length > 0 ? candidates[0] : undefined;
}

type SubgraphAnswer = Awaited<ReturnType<GraphQLDataSource["process"]>>;

/**
 * Routes operations one subgraph answers whole straight to that subgraph's data source, the rest
 * through the federation gateway's own executor (ApolloGateway). `source` wraps each data source as
 * the gateway builds it; `gateway` wraps the federation gateway for Apollo Server.
 *
 * An answer with errors (or a subgraph that does not answer) is handed to the query plan as its
 * fetch's answer — replayed, not asked again — so its errors are named, pathed and nulled exactly as
 * federation does, and the subgraph runs (and logs) the operation once.
 */
export function createSingleSubgraphRouting(options: { plannedOnly: ReadonlySet<string> }) {
  const sources = new Map<string, GraphQLDataSource>();
  const replays = new WeakMap<object, { service: string; answer: Promise<SubgraphAnswer> }>();
  let schema: GraphQLSchema | undefined;
  let owners: FieldOwners = new Map();
  let ownerByDocument = new WeakMap<DocumentNode, Map<string, string | null>>();

  const ownerOf = (context: SeamRequestContext): string | undefined => {
    if (!schema || context.schema !== schema) return undefined; // mid-reload: plan it
    const key = context.operationName ?? "";
    const byName = ownerByDocument.get(context.document) ?? new Map<string, string | null>();
    ownerByDocument.set(context.document, byName);
    let owner = byName.get(key);
    if (owner === undefined) {
      owner = singleOwnerOf(schema, owners, context.document, context.operation) ?? null;
      byName.set(key, owner);
    }
    return owner ?? undefined;
  };

  return {
    source(name: string, inner: GraphQLDataSource): GraphQLDataSource {
      sources.set(name, inner);
      return {
        process(options) {
          const replay = "incomingRequestContext" in options ? replays.get(options.incomingRequestContext) : undefined;
          if (replay?.service === name && "incomingRequestContext" in options) {
            replays.delete(options.incomingRequestContext);
            return replay.answer;
          }
          return inner.process(options);
        },
      };
    },

    gateway(federation: ExecutorSeam): ExecutorSeam {
      // Kept in step with every supergraph the gateway loads (hot reloads included).
      federation.onSchemaLoadOrUpdate(({ apiSchema, coreSupergraphSdl }) => {
        owners = fieldOwnersOf(coreSupergraphSdl, options.plannedOnly);
        ownerByDocument = new WeakMap();
        schema = apiSchema;
      });
      return {
        onSchemaLoadOrUpdate: (callback) => federation.onSchemaLoadOrUpdate(callback),
        stop: () => federation.stop(),
        async load(options) {
          const { executor } = await federation.load(options);
          if (!executor) return { executor };
          const direct: SeamExecutor = async (context) => {
            const owner = ownerOf(context);
            const source = owner ? sources.get(owner) : undefined;
            if (!owner || !source || !context.source) return executor(context);
            const answer = source.process({
              kind: GraphQLDataSourceRequestKind.INCOMING_OPERATION,
              // Its answer without errors is this operation's: its data need not be parsed (gateway/forwarded-data.ts).
              request: answeredWhole({ query: context.source, variables: context.request.variables, operationName: context.request.operationName }),
              incomingRequestContext: context,
              context: context.context,
              document: context.document,
            } as Parameters<GraphQLDataSource["process"]>[0]);
            const settled = await answer.then(
              (value) => value,
              () => undefined,
            );
            if (settled?.data && !settled.errors?.length) return { data: settled.data };
            replays.set(context, { service: owner, answer });
            try {
              return await executor(context);
            } finally {
              replays.delete(context);
            }
          };
          return { executor: direct };
        },
      };
    },
  };
}
