import type { FormattedExecutionResult } from "graphql";

// An operation one subgraph answers whole (gateway/single-subgraph.ts) is answered with that
// subgraph's `data`, unchanged: the gateway's body would be the subgraph's bytes of `data` written
// again by JSON.stringify of their parsed copy (112 KB for betResults(100) with proofs). The bytes
// a subgraph sent for its `data` are kept here, by the parsed object, and written as they came.
// An answer whose data is anything else — the query plan's shaping, a rewritten `readAt` field —
// holds another object and is serialised as usual, so nothing may change a parsed data object in
// place (gateway/read-at.ts replaces it instead).

const bytesOf = new WeakMap<object, string>();

const DATA = '{"data":';

/**
 * The bytes of `data` in a subgraph's body `{"data":…}` or `{"data":…,"extensions":…}` (Apollo
 * Server's order, a newline at the end or not), when the body is exactly that: `extensions` is the
 * parsed extensions member, checked byte for byte against the body's end.
 */
export function dataBytesOf(body: string, extensions: unknown): string | undefined {
  if (!body.startsWith(DATA)) return undefined;
  const end = body.endsWith("\n") ? body.length - 1 : body.length;
  const tail = extensions === undefined ? "}" : `,"extensions":${JSON.stringify(extensions)}}`;
  if (end - tail.length <= DATA.length || body.slice(end - tail.length, end) !== tail) return undefined;
  return body.slice(DATA.length, end - tail.length);
}

/** Keeps the bytes a subgraph sent for `data` (its body parsed into `answer`), when its body is nothing but data and extensions. */
export function keepDataBytes(answer: { data?: unknown; errors?: unknown; extensions?: unknown }, body: string): void {
  const { data, errors, extensions } = answer;
  if (typeof data !== "object" || data === null || errors !== undefined) return;
  const bytes = dataBytesOf(body, extensions);
  if (bytes !== undefined) bytesOf.set(data, bytes);
}

/**
 * Apollo Server's `stringifyResult` (what its default, `JSON.stringify(value) + "\n"`, writes, byte
 * for byte): with the subgraph's own bytes for a `data` it sent, when the answer has no errors.
 */
export function stringifyResult(value: FormattedExecutionResult): string {
  const bytes = value.data && value.errors === undefined ? bytesOf.get(value.data) : undefined;
  if (bytes === undefined) return `${JSON.stringify(value)}\n`;
  return value.extensions === undefined ? `${DATA}${bytes}}\n` : `${DATA}${bytes},"extensions":${JSON.stringify(value.extensions)}}\n`;
}
