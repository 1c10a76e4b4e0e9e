import { isEnumType, isInputObjectType, isInterfaceType, isIntrospectionType, isObjectType, isSpecifiedScalarType, type GraphQLSchema } from "graphql";

// Clients read the schema through introspection, GET /schema.graphql and their codegen's comments:
// every element they can meet says what it is. Run by `npm run schema:check` on the API schema.

const blank = (description: string | null | undefined) => !description?.trim();

/**
 * Every type, field, argument, enum value and input field of `schema` without a description, as
 * `kind Path` lines (e.g. `argument Query.playerBets(first:)`), in schema order. Built-in
 * scalars and introspection types are GraphQL's own and described by it.
 */
export function undescribedElements(schema: GraphQLSchema): string[] {
  const missing: string[] = [];
  for (const type of Object.values(schema.getTypeMap())) {
    if (isIntrospectionType(type) || isSpecifiedScalarType(type)) continue;
    if (blank(type.description)) missing.push(`type ${type.name}`);
    if (isObjectType(type) || isInterfaceType(type)) {
      for (const field of Object.values(type.getFields())) {
        if (blank(field.description)) missing.push(`field ${type.name}.${field.name}`);
        for (const arg of field.args) if (blank(arg.description)) missing.push(`argument ${type.name}.${field.name}(${arg.name}:)`);
      }
    } else if (isInputObjectType(type)) {
      for (const field of Object.values(type.getFields())) if (blank(field.description)) missing.push(`input field ${type.name}.${field.name}`);
    } else if (isEnumType(type)) {
      for (const value of type.getValues()) if (blank(value.description)) missing.push(`enum value ${type.name}.${value.name}`);
    }
  }
  return missing;
}
