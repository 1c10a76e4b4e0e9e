import { type FieldNode, type FragmentDefinitionNode, Kind, type OperationDefinitionNode, parse } from "graphql";

/** The resolve info of the document's first root field (or its first `fields` root fields, merged as one), as far as a selection walker reads it. */
export function infoOf(query: string, fields = 1) {
  const document = parse(query);
  const operation = document.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)!;
  const fragments = Object.fromEntries(
    document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((d) => [d.name.value, d]),
  );
  return { fieldNodes: operation.selectionSet.selections.slice(0, fields) as FieldNode[], fragments };
}
