import type { GraphQLResolveInfo } from "graphql";

/**
 * Whether the operation being resolved can select a field named `field`: false only when its
 * document's text never names it (a field is selected by its name, aliased or not, and a name has
 * no other spelling), so that a resolver can leave out what nothing will read. A document without
 * its text (built without locations) may select anything.
 */
export function mayAskFor(info: Partial<Pick<GraphQLResolveInfo, "operation">>, field: string): boolean {
  // A caller outside an operation (bench/scale-explain.ts captures a page's statement) has none.
  const source = info.operation?.loc?.source.body;
  return source === undefined || source.includes(field);
}
