import type { ApolloServerPlugin } from "@apollo/server";
import type { DocumentNode, FragmentDefinitionNode, OperationDefinitionNode, SelectionSetNode } from "graphql";

/** Whether an operation asks for `health` at its root (through fragments too): never cached anywhere. */
export function asksHealth(operation: OperationDefinitionNode | undefined, document: DocumentNode | undefined): boolean {
  // Most operations never name it: no walk (nor fragment map) for them.
  const source = document?.loc?.source.body;
  if (source !== undefined && !source.includes("health")) return false;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document?.definitions ?? []) if (definition.kind === "FragmentDefinition") fragments.set(definition.name.value, definition);
  const seen = new Set<string>();
  const visit = (set: SelectionSetNode): boolean =>
    set.selections.some((s) => {
      if (s.kind === "Field") return s.name.value === "health";
      if (s.kind === "InlineFragment") return visit(s.selectionSet);
      const fragment = fragments.get(s.name.value);
      if (!fragment || seen.has(s.name.value)) return false;
      seen.add(s.name.value);
      return visit(fragment.selectionSet);
    });
  return operation ? visit(operation.selectionSet) : false;
}

/**
 * Apollo computes `Cache-Control` from the subgraphs' hints. Two things it cannot know: the
 * health subgraph runs in process (no hints travel), and an answer with no policy must still
 * tell a CDN not to keep it. Both get `no-store`.
 */
export function cachePolicyPlugin(): ApolloServerPlugin {
  return {
    async requestDidStart() {
      return {
        async willSendResponse({ response, operation, document }) {
          if (asksHealth(operation, document) || !response.http.headers.has("cache-control")) response.http.headers.set("cache-control", "no-store");
        },
      };
    },
  };
}
