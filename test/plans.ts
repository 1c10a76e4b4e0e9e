// EXPLAIN (FORMAT JSON) plans as the plan tests read them: a node tree, flattened to find the
// index a statement reads and how many rows it discards.

export interface PlanNode {
  "Node Type": string;
  "Index Name"?: string;
  "Rows Removed by Filter"?: number;
  "Actual Rows"?: number;
  Plans?: PlanNode[];
}

/** The node and every node below it, depth first. */
export function nodesOf(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodesOf)];
}
