import { GraphQLError, Kind, type ASTVisitor, type ValidationContext } from "graphql";

// The API is read-only: its schema has a query root and no mutation or subscription root (live
// updates are Socket.IO's). graphql-js 16 does not check that an operation's root type exists, so
// `mutation { __typename }` passed validation and failed in Apollo's query planner as HTTP 500.

/**
 * A validation rule: an operation whose root type the schema lacks is a GRAPHQL_VALIDATION_FAILED
 * error (graphql-js 17 names the same check KnownOperationTypesRule).
 */
export function QueriesOnly(context: ValidationContext): ASTVisitor {
  const schema = context.getSchema();
  return {
    [Kind.OPERATION_DEFINITION](node) {
      const root =
        node.operation === "mutation" ? schema.getMutationType() : node.operation === "subscription" ? schema.getSubscriptionType() : schema.getQueryType();
      if (root) return undefined;
      context.reportError(new GraphQLError(`This API has no ${node.operation} operations: it answers queries only`, { nodes: node }));
      return false;
    },
  };
}
