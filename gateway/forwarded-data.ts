import type { FormattedExecutionResult } from "graphql";
import { stringifyAnswer } from "../core/http.ts";
import { currentRequestScope } from "../core/request-scope.ts";

// An operation one subgraph answers whole (gateway/single-subgraph.ts) is answered with that
// subgraph's `data`, unchanged: the gateway's body would be the subgraph's bytes of `data` written
// again by JSON.stringify of their parsed copy (112 KB for betResults(100) with proofs). The bytes
// a subgraph sent for its `data` are kept here, by the parsed object, and written as they came.
// An answer whose data is anything else — the query plan's shaping, a rewritten `readAt` field —
// holds another object and is serialised as usual, so nothing may change a parsed data object in
// place (gateway/read-at.ts replaces it instead).
//
// Apollo Server needs the answer as a string, and the string is what the response cache stores;
// but written to the socket, a string is measured, flattened and encoded to UTF-8 again (profiled
// on betResults(100): the largest share of the gateway's own work after the write itself). So
// the answer's bytes are also put together from the subgraph's own bytes, kept for the request in
// its scope, and the HTTP front writes those (core/http.ts renderedBytesOf) instead of encoding the string.

/** What is kept of a subgraph's `data`: its text, and its UTF-8 bytes when the body's were at hand. */
interface KeptData {
  text: string;
  bytes: Buffer | undefined;
}

const keptOf = new WeakMap<object, KeptData>();

const DATA = '{"data":';
const DATA_BYTES = Buffer.from(DATA);

/** Where `data` ends in a subgraph's body `{"data":…}` or `{"data":…,"extensions":…}`, and what follows it. */
function dataEndOf(body: string, extensions: unknown): { end: number; tail: string; newline: boolean } | undefined {
  if (!body.startsWith(DATA)) return undefined;
  const newline = body.endsWith("\n");
  const end = newline ? body.length - 1 : body.length;
  const tail = extensions === undefined ? "}" : `,"extensions":${JSON.stringify(extensions)}}`;
  if (end - tail.length <= DATA.length || body.slice(end - tail.length, end) !== tail) return undefined;
  return { end: end - tail.length, tail, newline };
}

/**
 * The bytes of `data` in a subgraph's body `{"data":…}` or `{"data":…,"extensions":…}` (Apollo
 * Server's order, a newline at the end or not), when the body is exactly that: `extensions` is the
 * parsed extensions member, checked byte for byte against the body's end.
 */
export function dataBytesOf(body: string, extensions: unknown): string | undefined {
  const found = dataEndOf(body, extensions);
  return found && body.slice(DATA.length, found.end);
}

/**
 * Keeps the bytes a subgraph sent for `data` (its body parsed into `answer`), when its body is
 * nothing but data and extensions. `bytes`: the body's bytes, when `body` is exactly their UTF-8.
 */
export function keepDataBytes(answer: { data?: unknown; errors?: unknown; extensions?: unknown }, body: string, bytes?: Buffer): void {
  const { data, errors, extensions } = answer;
  if (typeof data !== "object" || data === null || errors !== undefined) return;
  const found = dataEndOf(body, extensions);
  if (!found) return;
  // `{"data":` is 8 bytes; what follows the data is the tail's UTF-8 and the newline.
  const dataBytes = bytes?.subarray(DATA_BYTES.length, bytes.length - (found.newline ? 1 : 0) - Buffer.byteLength(found.tail));
  keptOf.set(data, { text: body.slice(DATA.length, found.end), bytes: dataBytes });
}

/**
 * Apollo Server's `stringifyResult` (what its default, `JSON.stringify(value) + "\n"`, writes, byte
 * for byte): with the subgraph's own bytes for a `data` it sent, when the answer has no errors.
 */
export function stringifyResult(value: FormattedExecutionResult): string {
  const kept = value.data && value.errors === undefined ? keptOf.get(value.data) : undefined;
  if (kept === undefined) return stringifyAnswer(value);
  const end = value.extensions === undefined ? "}\n" : `,"extensions":${JSON.stringify(value.extensions)}}\n`;
  const text = `${DATA}${kept.text}${end}`;
  const scope = currentRequestScope();
  if (kept.bytes && scope) scope.renderedAnswer = { text, bytes: Buffer.concat([DATA_BYTES, kept.bytes, Buffer.from(end)]) };
  return text;
}
