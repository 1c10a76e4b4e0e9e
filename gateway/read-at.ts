// What an answer was read at, at the gateway (docs/reference/graphql.md#consistent-reads). Each
// subgraph says in its answer's `extensions.readAt` the indexed head per chain it read at
// (subgraphs/kit/read-at.ts); the gateway answers, in `extensions.readAt` and in any `readAt`
// field the client selected, the lowest per chain over the subgraph calls of the request: every
// part of the answer includes that block. The operation's `minBlock` arguments go with every
// subgraph call (MIN_BLOCK_HEADER), so that an entity fetch reads from a database as new as the
// root field's. An answer the response cache keeps is stored with its readAt: a replay says the
// head it was computed at.
import type { ApolloServerPlugin } from "@apollo/server";
import { Kind, type DocumentNode, type FragmentDefinitionNode, type SelectionSetNode } from "graphql";
import { ErrorCode } from "../core/errors.ts";
import { formatMinBlocks, MIN_BLOCK_HEADER, minBlocksOf } from "../core/min-block.ts";
import { currentRequestScope } from "../core/request-scope.ts";

interface Pointer {
  chainId: number;
  block: string;
  hash: string;
}

/** Adds the request's minBlock header to a subgraph call's headers (before they key shared calls in flight). */
export function addMinBlockHeader(headers: Record<string, string>): void {
  const minBlocks = currentRequestScope()?.minBlocks;
  if (minBlocks && minBlocks.size > 0) headers[MIN_BLOCK_HEADER] = formatMinBlocks(new Map(minBlocks));
}

function isPointer(value: unknown): value is Pointer {
  if (typeof value !== "object" || value === null) return false;
  const { chainId, block, hash } = value as Record<string, unknown>;
  return (
    typeof chainId === "number" && Number.isSafeInteger(chainId) && typeof block === "string" && /^(0|[1-9][0-9]*)$/.test(block) && typeof hash === "string"
  );
}

/** Folds a subgraph answer's `extensions.readAt` into the request's (the lowest block per chain). */
export function recordReadAt(answer: { extensions?: Record<string, unknown> | null } | undefined): void {
  const given = answer?.extensions?.readAt;
  const scope = currentRequestScope();
  if (!scope || !Array.isArray(given)) return;
  scope.readAt ??= new Map();
  for (const pointer of given) {
    if (!isPointer(pointer)) continue;
    const chainId = BigInt(pointer.chainId);
    const block = BigInt(pointer.block);
    const known = scope.readAt.get(chainId);
    if (!known || block < known.block) scope.readAt.set(chainId, { block, hash: pointer.hash });
  }
}

function pointersOf(readAt: ReadonlyMap<bigint, { block: bigint; hash: string }>): Pointer[] {
  return [...readAt]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([chainId, { block, hash }]) => ({ chainId: Number(chainId), block: block.toString(), hash }));
}

/** The pointers shaped as the client's selection of a `readAt` field asks (aliases, __typename). */
function project(pointers: readonly Pointer[], selectionSet: SelectionSetNode | undefined, fragments: Map<string, FragmentDefinitionNode>): unknown[] {
  return pointers.map((pointer) => {
    const item: Record<string, unknown> = {};
    const fill = (set: SelectionSetNode | undefined) => {
      for (const selection of set?.selections ?? []) {
        if (selection.kind === Kind.FIELD) {
          const name = selection.name.value;
          const key = selection.alias?.value ?? name;
          if (name === "__typename") item[key] = "BlockPointer";
          else if (name === "chainId" || name === "block" || name === "hash") item[key] = pointer[name];
        } else if (selection.kind === Kind.INLINE_FRAGMENT) fill(selection.selectionSet);
        else fill(fragments.get(selection.name.value)?.selectionSet);
      }
    };
    fill(selectionSet);
    return item;
  });
}

/**
 * The answer's data with each root `readAt` field (one subgraph's heads) replaced by the request's:
 * a new object when one is there (the subgraph's bytes of the old one are never written for it,
 * gateway/forwarded-data.ts), else `data` itself.
 */
function withReadAtFields(
  data: Record<string, unknown>,
  document: DocumentNode,
  root: SelectionSetNode,
  pointers: readonly Pointer[],
): Record<string, unknown> {
  // Most operations never select it: no walk (nor fragment map) for them.
  const source = document.loc?.source.body;
  if (source !== undefined && !source.includes("readAt")) return data;
  const fragments = new Map(document.definitions.filter((d) => d.kind === Kind.FRAGMENT_DEFINITION).map((d) => [d.name.value, d]));
  let rewritten: Record<string, unknown> | undefined;
  const visit = (set: SelectionSetNode | undefined) => {
    for (const selection of set?.selections ?? []) {
      if (selection.kind === Kind.FIELD) {
        const key = selection.alias?.value ?? selection.name.value;
        if (selection.name.value !== "readAt" || !Array.isArray(data[key])) continue;
        rewritten ??= { ...data };
        rewritten[key] = project(pointers, selection.selectionSet, fragments);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) visit(selection.selectionSet);
      else visit(fragments.get(selection.name.value)?.selectionSet);
    }
  };
  visit(root);
  return rewritten ?? data;
}

/** The gateway's plugin: minBlock into the request scope before any subgraph call, readAt into the answer. */
export function readAtPlugin(): ApolloServerPlugin {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ schema, document, operation, request }) {
          const scope = currentRequestScope();
          if (!scope || !operation) return;
          const minBlocks = minBlocksOf(schema, document, operation, request.variables);
          if (minBlocks.size > 0) scope.minBlocks = minBlocks;
        },
        async willSendResponse({ response, document, operation }) {
          if (response.body.kind !== "single") return;
          const result = response.body.singleResult;
          const refusal = result.errors?.find((error) => error.extensions?.code === ErrorCode.NotYetIndexed);
          const retryAfter = refusal?.extensions?.retryAfterSeconds;
          if (typeof retryAfter === "number") response.http.headers.set("retry-after", String(retryAfter));
          const readAt = currentRequestScope()?.readAt;
          if (!readAt || readAt.size === 0) return;
          const pointers = pointersOf(readAt);
          if (result.data && document && operation) result.data = withReadAtFields(result.data, document, operation.selectionSet, pointers);
          // Before the cost extension (gateway/points-budget.ts writes it last, and strips it from what is cached).
          result.extensions = { readAt: pointers, ...result.extensions };
        },
      };
    },
  };
}
