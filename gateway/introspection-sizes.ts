import { isEnumType, isInputObjectType, isInterfaceType, isObjectType, isUnionType, type GraphQLSchema } from "graphql";

// How long the introspection lists of a schema are, for the query cost (gateway/limits.ts):
// introspection is priced by what it returns, and its lists are as long as the schema's own.

/** An introspection list the schema gives no length for. */
export const INTROSPECTION_LIST_SIZE = 10;

const sizes = new WeakMap<GraphQLSchema, Map<string, number>>();

/** How many of each introspection list a full introspection of `schema` returns, per parent ("__Type.fields"); counted once per schema. */
export function introspectionListSizes(schema: GraphQLSchema): Map<string, number> {
  let known = sizes.get(schema);
  if (!known) {
    known = countListSizes(schema);
    sizes.set(schema, known);
  }
  return known;
}

/** Sizes of the introspection lists of a schema: how many of each a full introspection returns, per parent. */
function countListSizes(schema: GraphQLSchema): Map<string, number> {
  const types = Object.values(schema.getTypeMap());
  let fields = 0;
  let args = 0;
  let enumValues = 0;
  let inputFields = 0;
  let related = 0;
  for (const type of types) {
    if (isObjectType(type) || isInterfaceType(type)) {
      const own = Object.values(type.getFields());
      fields += own.length;
      args += own.reduce((sum, field) => sum + field.args.length, 0);
      related += type.getInterfaces().length;
    } else if (isEnumType(type)) enumValues += type.getValues().length;
    else if (isInputObjectType(type)) inputFields += Object.keys(type.getFields()).length;
    else if (isUnionType(type)) related += type.getTypes().length;
  }
  const directives = schema.getDirectives();
  const per = (total: number, over: number) => Math.max(1, Math.ceil(total / Math.max(1, over)));
  return new Map([
    ["__Schema.types", types.length],
    ["__Schema.directives", directives.length],
    ["__Type.fields", per(fields, types.length)],
    ["__Type.enumValues", per(enumValues, types.length)],
    ["__Type.inputFields", per(inputFields, types.length)],
    ["__Type.interfaces", per(related, types.length)],
    ["__Type.possibleTypes", per(related, types.length)],
    ["__Field.args", per(args, fields)],
    [
      "__Directive.args",
      per(
        directives.reduce((sum, d) => sum + d.args.length, 0),
        directives.length,
      ),
    ],
  ]);
}
