import { type FieldNode, type FragmentDefinitionNode, type GraphQLResolveInfo, Kind, type SelectionSetNode } from "graphql";
import type { PageJoins } from "./data.ts";

// What a page's query selects of its bets decides what the page statement joins (data.ts betPage):
// a wallet page with its networks' settings and its results is then one statement.

/**
 * Every field selected in `sets`, through fragments and inline fragments (each fragment once per
 * path); `unknownFragment` when a spread names no fragment of the document.
 */
function fieldsIn(sets: readonly SelectionSetNode[], fragments: Record<string, FragmentDefinitionNode>): { fields: FieldNode[]; unknownFragment: boolean } {
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

/** The selection sets of the fields called `name` in `sets`, through fragments and inline fragments. */
function fieldsNamed(sets: readonly SelectionSetNode[], name: string, fragments: Record<string, FragmentDefinitionNode>): SelectionSetNode[] {
  return fieldsIn(sets, fragments)
    .fields.filter((field) => field.name.value === name)
    .map((field) => field.selectionSet ?? { kind: Kind.SELECTION_SET, selections: [] });
}

/**
 * What a connection field's bets (`nodes`, `edges { node }`) select that a page statement can read
 * beside them: `result`, and the network's `name` or `confirmations`. @skip and @include are not
 * weighed: a join the answer does not use costs a little, and changes nothing in it.
 */
export function pageJoinsOf(info: Pick<GraphQLResolveInfo, "fieldNodes" | "fragments">): PageJoins {
  // A caller outside an operation (bench/scale-explain.ts captures the statement) has no field nodes.
  const connection = (info.fieldNodes ?? []).flatMap((node: FieldNode) => (node.selectionSet ? [node.selectionSet] : []));
  const fragments = info.fragments ?? {};
  const bets = [...fieldsNamed(connection, "nodes", fragments), ...fieldsNamed(fieldsNamed(connection, "edges", fragments), "node", fragments)];
  const network = fieldsNamed(bets, "network", fragments);
  return {
    network: fieldsNamed(network, "name", fragments).length > 0 || fieldsNamed(network, "confirmations", fragments).length > 0,
    result: fieldsNamed(bets, "result", fragments).length > 0,
  };
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
