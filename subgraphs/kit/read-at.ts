// What an answer was read at, and "not before block N" (docs/reference/graphql.md#consistent-reads),
// in one place for every subgraph and every query: before any resolver runs, the request's
// database is settled and its indexed heads (IndexingCursor) are read there, once.
//
//   - The database: the one the read router picked for the request (kit/subgraph.ts), unless the
//     operation asks for a minimum block per chain (its `minBlock` arguments, or the gateway's
//     MIN_BLOCK_HEADER for the whole client request): then a replica whose checked head reaches it
//     (core/read-replicas.ts), else the primary. Heads only grow, so a head read before the data
//     statements is a lower bound of what they see: an answer is never older than what it says.
//   - The heads: those this process read last on that database while they are young enough
//     (kit/indexed-heads.ts: no statement per request in steady state); read afresh when they are
//     below the minimum, or when the operation asks for `readAt` itself.
//   - A minimum that the chosen server has not indexed: the primary is asked (a replica may lag
//     behind its last check's view of the primary); if the primary has not indexed it either, the
//     request is refused with NOT_YET_INDEXED before any data is read.
//   - The heads are the request's `readAt` (Query.readAt reads them) and go back to the gateway in
//     the answer's `extensions.readAt`; the gateway answers the lowest per chain over its subgraph
//     calls. IndexingStatus.indexedBlock is read by the networks subgraph beside its data, so it is
//     at least readAt (equal unless a block was indexed during the request).
import type { ApolloServerPlugin, BaseContext } from "@apollo/server";
import { GraphQLError, type OperationDefinitionNode } from "graphql";
import { NotYetIndexedError } from "../../core/errors.ts";
import { MIN_BLOCK_HEADER, mergeMinBlocks, minBlocksOf, parseMinBlocks, type MinBlocks } from "../../core/min-block.ts";
import type { Database } from "../../core/db.ts";
import type { IndexingCursor } from "../../prisma/generated/client.ts";
import type { SubgraphDeps } from "./deps.ts";
import { IndexedHeads } from "./indexed-heads.ts";

/** The indexed heads one subgraph request read at, filled before its resolvers run. */
export interface ReadAt {
  cursors: IndexingCursor[] | undefined;
}

/** One chain's indexed head as answers carry it (extensions.readAt, Query.readAt). */
export interface BlockPointer {
  chainId: number;
  block: string;
  hash: string;
}

/** How long a client refused with NOT_YET_INDEXED should wait before asking again, at least. */
export const NOT_YET_INDEXED_RETRY_SECONDS = 2;

export function blockPointers(cursors: readonly IndexingCursor[]): BlockPointer[] {
  return [...cursors]
    .sort((a, b) => (a.chainId < b.chainId ? -1 : a.chainId > b.chainId ? 1 : 0))
    .map((cursor) => ({ chainId: Number(cursor.chainId), block: cursor.indexedBlock.toString(), hash: cursor.indexedBlockHash }));
}

/** The first chain of `minimum` that `cursors` have not indexed to, with the head they have. */
function missing(cursors: readonly IndexingCursor[], minimum: MinBlocks): { chainId: bigint; minBlock: bigint; indexedBlock: bigint } | undefined {
  for (const [chainId, minBlock] of minimum) {
    const indexedBlock = cursors.find((cursor) => cursor.chainId === chainId)?.indexedBlock ?? -1n;
    if (indexedBlock < minBlock) return { chainId, minBlock, indexedBlock };
  }
  return undefined;
}

/**
 * An error thrown before execution is answered with HTTP 500 unless it says otherwise: a refusal of
 * the request (BAD_USER_INPUT) is an ordinary GraphQL answer, which a gateway passes on as is.
 */
function answeredAsRefusal(error: unknown): never {
  if (!(error instanceof GraphQLError)) throw error;
  throw new GraphQLError(error.message, { originalError: error, extensions: { ...error.extensions, http: { status: 200 } } });
}

/** Operations that read no data: introspection and federation's `_service` (the gateway's schema checks). */
function readsNoData(operation: OperationDefinitionNode): boolean {
  return operation.selectionSet.selections.every(
    (selection) => selection.kind === "Field" && (selection.name.value.startsWith("__") || selection.name.value === "_service"),
  );
}

/** Whether the operation asks for Query.readAt: a client polling the head is answered with the head as it is now. */
function asksForReadAt(operation: OperationDefinitionNode): boolean {
  return operation.selectionSet.selections.some(
    (selection) =>
      (selection.kind === "Field" && selection.name.value === "readAt") ||
      (selection.kind === "InlineFragment" && selection.selectionSet.selections.some((inner) => inner.kind === "Field" && inner.name.value === "readAt")),
  );
}

/**
 * The plugin that settles each request's database and reads its heads (see above). `rebuild` makes
 * the request's context again over another database (its DataLoaders read where it says); it runs
 * before any resolver, so nothing has read from the first one yet.
 */
export function readAtPlugin<TContext extends BaseContext>(options: {
  /** The primary (deps.db): what a replica that has not indexed a minimum is replaced with. */
  primary: Database;
  reads: SubgraphDeps["reads"];
  /** The request's own deps: its database, read pin and ReadAt. */
  depsOf(context: TContext): SubgraphDeps & { readAt: ReadAt };
  rebuild(context: TContext, db: Database): void;
  /** How long heads read on a database are answered at without reading them again (kit/indexed-heads.ts). */
  headsTtlMs?: number;
}): ApolloServerPlugin<TContext> {
  /** Per database (the primary, each replica): the heads this subgraph read there last. */
  const headsOf = new Map<Database, IndexedHeads>();
  /** Heads of `db` that reach `minimum`, held ones when they do (and `fresh` is not asked), else read now. */
  const headsAt = async (db: Database, minimum: MinBlocks, fresh: boolean): Promise<IndexingCursor[]> => {
    const heads = headsOf.get(db) ?? new IndexedHeads(db, options.headsTtlMs);
    headsOf.set(db, heads);
    if (fresh) return heads.read();
    const held = await heads.current();
    return missing(held, minimum) ? heads.read() : held;
  };
  return {
    async requestDidStart() {
      return {
        async didResolveOperation(context) {
          const { operation } = context;
          if (!operation || readsNoData(operation)) return;
          const deps = options.depsOf(context.contextValue);
          const minimum = mergeMinBlocks(
            parseMinBlocks(context.request.http?.headers.get(MIN_BLOCK_HEADER)),
            minBlocksOf(context.schema, context.document, operation, context.request.variables),
          );
          // An unknown chain in minBlock is malformed input, as everywhere else.
          for (const chainId of minimum.keys()) await deps.networks.require(Number(chainId), "minBlock").catch(answeredAsRefusal);
          let db = minimum.size > 0 && options.reads ? options.reads.pick(deps.readPin, minimum) : deps.db;
          const fresh = asksForReadAt(operation);
          let cursors = await headsAt(db, minimum, fresh);
          if (missing(cursors, minimum) && db !== options.primary) {
            db = options.primary;
            cursors = await headsAt(db, minimum, fresh);
          }
          const gap = missing(cursors, minimum);
          if (gap) throw new NotYetIndexedError({ ...gap, retryAfterSeconds: NOT_YET_INDEXED_RETRY_SECONDS });
          if (db !== deps.db) options.rebuild(context.contextValue, db);
          options.depsOf(context.contextValue).readAt.cursors = cursors;
          // The router's floor is raised where it was before readAt existed (the networks subgraph's
          // IndexingStatus, read beside the other subgraphs' data): raised here, before the data,
          // a reset replayed during the request showed a head from before it with data from after
          // (bin/read-replicas.test.ts "follows a reset down").
          if (minimum.size > 0) options.reads?.observe(cursors, deps.readPin);
        },
        async willSendResponse({ response, contextValue }) {
          const cursors = options.depsOf(contextValue).readAt.cursors;
          if (!cursors || response.body.kind !== "single") return;
          const result = response.body.singleResult;
          result.extensions = { ...result.extensions, readAt: blockPointers(cursors) };
        },
      };
    },
  };
}
