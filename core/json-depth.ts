// How deep a parsed JSON value nests, measured without recursion. Request bodies and GET
// parameters are parsed by JSON.parse (iterative, any depth), but almost everything after it
// (JSON.stringify to a subgraph, graphql-js's coercion, the cache key) recurses: a value nested
// tens of thousands deep within MAX_BODY_BYTES overflows the stack there. No input of the schema
// nests more than a handful of levels, so a request deeper than MAX_JSON_DEPTH is refused at the door.

/** The deepest nesting of arrays and objects a request may carry (the body, or a GET parameter). */
export const MAX_JSON_DEPTH = 32;

/** True when `value` nests arrays/objects deeper than `max` levels (a scalar is depth 0). */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const pending: [unknown, number][] = [[value, 0]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [node, depth] = next;
    if (typeof node !== "object" || node === null) continue;
    if (depth + 1 > max) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) pending.push([child, depth + 1]);
  }
  return false;
}
