import { type FieldNode, type FragmentDefinitionNode, type GraphQLResolveInfo, Kind, type SelectionSetNode } from "graphql";
import { fieldsIn } from "../../core/selection.ts";
import type { PageJoins } from "./data.ts";

// What a page's query selects of its bets decides what the page statement joins (data.ts betPage):
// a wallet page with its networks' settings and its results is then one statement.

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
