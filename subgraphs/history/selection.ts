import { type FieldNode, type FragmentDefinitionNode, type GraphQLResolveInfo, Kind, type SelectionSetNode } from "graphql";
import type { PageJoins } from "./data.ts";

// What a page's query selects of its bets decides what the page statement joins (data.ts betPage):
// a wallet page with its networks' settings and its results is then one statement.

/** The selection sets of the fields called `name` in `sets`, through fragments and inline fragments. */
function fieldsNamed(sets: readonly SelectionSetNode[], name: string, fragments: Record<string, FragmentDefinitionNode>): SelectionSetNode[] {
  const found: SelectionSetNode[] = [];
  const visit = (set: SelectionSetNode, seen: Set<string>) => {
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) {
        if (selection.name.value === name) found.push(selection.selectionSet ?? { kind: Kind.SELECTION_SET, selections: [] });
      } else if (selection.kind === Kind.INLINE_FRAGMENT) visit(selection.selectionSet, seen);
      else if (!seen.has(selection.name.value)) {
        const fragment = fragments[selection.name.value];
        if (fragment) visit(fragment.selectionSet, new Set([...seen, selection.name.value]));
      }
    }
  };
  for (const set of sets) visit(set, new Set());
  return found;
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
  const fragments = info.fragments ?? {};
  const only = (set: SelectionSetNode, seen: Set<string>): boolean =>
    set.selections.every((selection) => {
      if (selection.kind === Kind.FIELD) return selection.name.value === "totalCount" || selection.name.value === "__typename";
      if (selection.kind === Kind.INLINE_FRAGMENT) return only(selection.selectionSet, seen);
      if (seen.has(selection.name.value)) return true;
      const fragment = fragments[selection.name.value];
      return fragment ? only(fragment.selectionSet, new Set([...seen, selection.name.value])) : false;
    });
  const nodes = info.fieldNodes ?? [];
  return nodes.length > 0 && nodes.every((node: FieldNode) => node.selectionSet !== undefined && only(node.selectionSet, new Set()));
}
