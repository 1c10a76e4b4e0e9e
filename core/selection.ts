import { type FieldNode, type FragmentDefinitionNode, type GraphQLResolveInfo, Kind, type SelectionSetNode } from "graphql";

// What a field's selection asks, read the same way by the subgraph that decides which statements
// run (subgraphs/history) and by the gateway that charges them (gateway/actual-cost.ts): one owner,
// so the price of an answer follows what its resolver actually read.

/**
 * Every field selected in `sets`, through fragments and inline fragments (each fragment once per
 * path); `unknownFragment` when a spread names no fragment of the document.
 */
export function fieldsIn(
  sets: readonly SelectionSetNode[],
  fragments: Record<string, FragmentDefinitionNode>,
): { fields: FieldNode[]; unknownFragment: boolean } {
  const fields: FieldNode[] = [];
  let unknownFragment = false;
  const visit = (set: SelectionSetNode, seen: Set<string>) => {
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) fields.push(selection);
      else if (selection.kind === Kind.INLINE_FRAGMENT) visit(selection.selectionSet, seen);
      else if (!seen.has(selection.name.value)) {
        const fragment = fragments[selection.name.value];
        if (fragment) visit(fragment.selectionSet, new Set([...seen, selection.name.value]));
        else unknownFragment = true;
      }
    }
  };
  for (const set of sets) visit(set, new Set());
  return { fields, unknownFragment };
}

/**
 * Whether a connection field selects nothing but `totalCount` (and `__typename`), through fragments:
 * then its page is never read, so no statement reads it (issue 21: nine aliased counts each read a
 * page of their own, nine pool connections at once). Without field nodes (a captured statement): false.
 */
export function asksOnlyTotalCount(info: Pick<GraphQLResolveInfo, "fieldNodes" | "fragments">): boolean {
  const nodes = info.fieldNodes ?? [];
  if (nodes.length === 0 || nodes.some((node: FieldNode) => node.selectionSet === undefined)) return false;
  const { fields, unknownFragment } = fieldsIn(
    nodes.map((node: FieldNode) => node.selectionSet!),
    info.fragments ?? {},
  );
  return !unknownFragment && fields.every((field) => field.name.value === "totalCount" || field.name.value === "__typename");
}
