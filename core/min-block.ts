// "Not before block N" (docs/reference/graphql.md#consistent-reads): a query's `minBlock`
// arguments, per chain the highest block asked for. The gateway reads them from the client's
// operation and sends them with every subgraph call of that request (MIN_BLOCK_HEADER), so that a
// subgraph answering only an entity fetch (`Bet.result`) reads from a database as new as the one
// that answered the root field; a subgraph reads them from its own operation too (a direct call).
import { getArgumentValues } from "graphql/execution/values.js";
import { ErrorCode } from "./errors.ts";
import { GraphQLError, Kind, TypeInfo, visit, visitWithTypeInfo, type DocumentNode, type GraphQLSchema, type OperationDefinitionNode } from "graphql";

/** The lowest indexed block per chain id a request may be answered at. */
export type MinBlocks = Map<bigint, bigint>;

/** The header carrying a gateway request's MinBlocks to the subgraphs: `chainId:block,chainId:block`. */
export const MIN_BLOCK_HEADER = "x-min-block";

/** The argument name on every query that takes one. */
export const MIN_BLOCK_ARGUMENT = "minBlock";

/** Entries one `minBlock` argument may hold (one per network is all a query needs); more is BAD_USER_INPUT. */
export const MAX_MIN_BLOCKS = 16;

const ENTRY = /^([1-9][0-9]{0,15}):(0|[1-9][0-9]{0,77})$/;

/** Raises `into` to every entry of `from` (the highest block per chain wins). */
export function mergeMinBlocks(into: MinBlocks, from: Iterable<readonly [bigint, bigint]>): MinBlocks {
  for (const [chainId, block] of from) if ((into.get(chainId) ?? -1n) < block) into.set(chainId, block);
  return into;
}

export function formatMinBlocks(minBlocks: MinBlocks): string {
  return [...minBlocks]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([chainId, block]) => `${chainId}:${block}`)
    .join(",");
}

/** The header's MinBlocks; entries that are not `chainId:block` are ignored (only a gateway sets it). */
export function parseMinBlocks(header: string | string[] | undefined): MinBlocks {
  const minBlocks: MinBlocks = new Map();
  const value = Array.isArray(header) ? header.join(",") : header;
  if (!value) return minBlocks;
  for (const part of value.split(",")) {
    const match = ENTRY.exec(part.trim());
    if (match) mergeMinBlocks(minBlocks, [[BigInt(match[1]!), BigInt(match[2]!)]]);
  }
  return minBlocks;
}

/**
 * The `minBlock` arguments of an operation's fields (wherever they are selected), coerced as the
 * executor will coerce them. An argument that does not coerce is left out here: validation or
 * execution refuses it with BAD_USER_INPUT. More than MAX_MIN_BLOCKS entries: throws BAD_USER_INPUT.
 */
export function minBlocksOf(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variables: Record<string, unknown> | undefined,
): MinBlocks {
  const minBlocks: MinBlocks = new Map();
  // Most operations never name it: no walk for them.
  const source = operation.loc?.source.body;
  if (source !== undefined && !source.includes(MIN_BLOCK_ARGUMENT)) return minBlocks;
  const typeInfo = new TypeInfo(schema);
  const ofOperation: DocumentNode = {
    ...document,
    definitions: document.definitions.filter((d) => d.kind !== Kind.OPERATION_DEFINITION || d === operation),
  };
  visit(
    ofOperation,
    visitWithTypeInfo(typeInfo, {
      Field(node) {
        if (!node.arguments?.some((argument) => argument.name.value === MIN_BLOCK_ARGUMENT)) return;
        const field = typeInfo.getFieldDef();
        if (!field) return;
        let values: Record<string, unknown>;
        try {
          values = getArgumentValues(field, node, variables ?? {});
        } catch {
          return;
        }
        const given = values[MIN_BLOCK_ARGUMENT];
        if (!Array.isArray(given)) return;
        if (given.length > MAX_MIN_BLOCKS) {
          // Refused before execution: a request mistake (HTTP 400), not a server failure.
          throw new GraphQLError(`minBlock takes at most ${MAX_MIN_BLOCKS} entries (one per network), got ${given.length}`, {
            extensions: { code: ErrorCode.BadUserInput, argumentName: MIN_BLOCK_ARGUMENT, http: { status: 400 } },
          });
        }
        for (const entry of given as { chainId?: unknown; block?: unknown }[]) {
          // The gateway's schema does not check scalars: what is not well formed is the subgraph's to refuse.
          const chainId = typeof entry.chainId === "number" && Number.isSafeInteger(entry.chainId) && entry.chainId > 0 ? BigInt(entry.chainId) : undefined;
          const block = typeof entry.block === "string" && /^(0|[1-9][0-9]{0,77})$/.test(entry.block) ? BigInt(entry.block) : undefined;
          if (chainId !== undefined && block !== undefined) mergeMinBlocks(minBlocks, [[chainId, block]]);
        }
      },
    }),
  );
  return minBlocks;
}
