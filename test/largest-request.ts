import {
  getNamedType,
  getNullableType,
  isCompositeType,
  isEnumType,
  isInputObjectType,
  isListType,
  isObjectType,
  isScalarType,
  type GraphQLArgument,
  type GraphQLInputType,
  type GraphQLNamedType,
  type GraphQLSchema,
} from "graphql";
import { MAX_MIN_BLOCKS } from "../core/min-block.ts";

// The largest request the contract documents, built from the schema itself: every field of every
// type reachable from a root field, and every argument at its documented maximum (page size 100,
// 100 ids, every filter field set). A schema change adds its fields here without a test edit.

export const DOCUMENTED_MAX_PAGE = 100;
export const DOCUMENTED_MAX_IDS = 100;
const WALLET = "0x000000000000000000000000000000000000dead";

/** A literal of the given input type at its documented maximum (lists: 100 elements). */
function maximalValue(type: GraphQLInputType, name: string, chainId: number): string {
  const nullable = getNullableType(type);
  if (isListType(nullable)) {
    const named = getNamedType(nullable.ofType as GraphQLInputType);
    // Enum lists: every value once; id lists: 100 distinct ids.
    if (isEnumType(named))
      return `[${named
        .getValues()
        .map((v) => v.name)
        .join(", ")}]`;
    if (named.name === "UInt256") return `[${Array.from({ length: DOCUMENTED_MAX_IDS }, (_, i) => `"${i + 1}"`).join(", ")}]`;
    // minBlock: its documented maximum of entries, each a block every database has indexed.
    if (isInputObjectType(named) && name === "minBlock")
      return `[${Array.from({ length: MAX_MIN_BLOCKS }, () => maximalValue(named, name, chainId)).join(", ")}]`;
    throw new Error(`no documented maximum for list argument ${name}`);
  }
  if (isInputObjectType(nullable)) {
    const fields = Object.values(nullable.getFields()).map((f) => `${f.name}: ${maximalValue(f.type, f.name, chainId)}`);
    return `{ ${fields.join(", ")} }`;
  }
  if (isEnumType(nullable)) return nullable.getValues()[0]!.name;
  if (!isScalarType(nullable)) throw new Error(`no maximal value for ${String(type)}`);
  switch (nullable.name) {
    case "Int":
      if (name === "first") return String(DOCUMENTED_MAX_PAGE);
      throw new Error(`no documented maximum for Int argument ${name}`);
    case "ChainId":
      return String(chainId);
    case "Address":
      return JSON.stringify(WALLET);
    case "Bytes32":
      return JSON.stringify(`0x${"ab".repeat(32)}`);
    case "UInt256":
      return name === "placedTo" ? '"99999999999"' : '"1"';
    case "String":
      return name === "after" ? "" : '"dice"';
    default:
      throw new Error(`no maximal value for scalar ${nullable.name}`);
  }
}

function argumentsOf(args: readonly GraphQLArgument[], chainId: number): string {
  const given = args.map((a) => [a.name, maximalValue(a.type, a.name, chainId)] as const).filter(([, v]) => v !== "");
  return given.length > 0 ? `(${given.map(([n, v]) => `${n}: ${v}`).join(", ")})` : "";
}

/** Every field of `type`, recursively; fields with arguments inside types take their maxima too. */
function selectionOf(type: GraphQLNamedType, chainId: number, path: readonly string[]): string {
  if (!isObjectType(type)) throw new Error(`${type.name} is not an object type`);
  if (path.includes(type.name)) throw new Error(`cycle through ${type.name}: the largest request is unbounded`);
  const fields = Object.values(type.getFields()).map((field) => {
    const named = getNamedType(field.type);
    const args = argumentsOf(field.args, chainId);
    return isCompositeType(named) ? `${field.name}${args} { ${selectionOf(named, chainId, [...path, type.name])} }` : `${field.name}${args}`;
  });
  return fields.join(" ");
}

/** One query per root field, each selecting everything at the documented maximum arguments. */
export function largestDocumentedRequests(schema: GraphQLSchema, chainId: number): Record<string, string> {
  const query = schema.getQueryType();
  if (!query) throw new Error("schema without a Query type");
  const requests: Record<string, string> = {};
  for (const field of Object.values(query.getFields())) {
    const named = getNamedType(field.type);
    const selection = isCompositeType(named) ? ` { ${selectionOf(named, chainId, ["Query"])} }` : "";
    requests[field.name] = `{ ${field.name}${argumentsOf(field.args, chainId)}${selection} }`;
  }
  return requests;
}
