import {
  getNamedType,
  getNullableType,
  GraphQLError,
  isLeafType,
  isListType,
  Kind,
  type GraphQLInputType,
  type ValidationContext,
  type ASTVisitor,
} from "graphql";

// The gateway's API schema keeps the subgraphs' scalars without their parsing (each subgraph
// checks its own arguments), so graphql-js accepts any literal where one is expected: a list or an
// object literal included. Apollo's query planner then walks such a literal, nested list within
// list, in time that doubles with each level (22 levels: ~0.9 s; 30: the process stuck), for a
// request priced like any other. None of this schema's scalars or enums is ever written as a list
// or an object, so such a literal is refused here, before anything plans it.

/**
 * A validation rule: a list or object literal where the argument's type expects a scalar or an
 * enum (`betIds: [["1"]]` for `[UInt256!]!`) is a GRAPHQL_VALIDATION_FAILED error naming the type,
 * and nothing under it is visited.
 */
export function LeafLiteralShapes(context: ValidationContext): ASTVisitor {
  // The type expected where the literal stands: TypeInfo has already entered a list (its input
  // type is then the list's item type), and never enters an object before its fields.
  const refuse = (kind: string, type: GraphQLInputType | null | undefined) => {
    if (!type) return undefined;
    const expected = getNullableType(type);
    if (isListType(expected) || !isLeafType(expected)) return undefined;
    context.reportError(new GraphQLError(`Expected a value of type ${getNamedType(type).name}, found ${kind}`));
    return false;
  };
  return {
    [Kind.LIST]: () => refuse("a list", context.getParentInputType()),
    [Kind.OBJECT]: () => refuse("an object", context.getInputType()),
  };
}
