/** A copy of a JSON value (a subgraph's answer): objects and arrays new, leaves shared. The gateway merges into what it receives, so two callers never get one object. */
export function copyJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(copyJson);
  if (value !== null && typeof value === "object") {
    const copy: Record<string, unknown> = {};
    for (const [key, field] of Object.entries(value)) copy[key] = copyJson(field);
    return copy;
  }
  return value;
}
