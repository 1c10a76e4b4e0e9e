import type { FormattedExecutionResult } from "graphql";
import { stringifyAnswer } from "../core/http.ts";
import { currentRequestScope } from "../core/request-scope.ts";
import { jsonSkeleton } from "./json-skeleton.ts";

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

// What is kept for a data object is held by that object itself (a slot under a symbol, which
// JSON.stringify, spreading, enumeration and copies never see), not in a WeakMap: V8's scavenges
// hold a WeakMap's values whatever their keys (its values are strong roots of the young
// generation), and each answer's subgraph body kept there (110 KB for betResults(100)) was promoted
// to the old generation: ~100 KB promoted per answer in the separate-process gateway (issue 24,
// --trace-gc-nvp); forwarded-data.test.ts measures it.
const KEPT = Symbol("the subgraph's bytes of this data");
const SKELETON = Symbol("the skeleton of this data");

type Slots = { [KEPT]?: KeptData; [SKELETON]?: unknown };

/** Sets a slot of `data` (not enumerable: copies of the data do not carry it). */
function setSlot(data: object, slot: typeof KEPT | typeof SKELETON, value: unknown): void {
  Object.defineProperty(data, slot, { value, configurable: true, enumerable: false, writable: true });
}

const DATA = '{"data":';
const DATA_BYTES = Buffer.from(DATA);

/** Where `data` ends in a subgraph's body `{"data":…}` or `{"data":…,"extensions":…}` (the index after it). */
function dataEndOf(body: string, extensions: unknown): number | undefined {
  if (!body.startsWith(DATA)) return undefined;
  const newline = body.endsWith("\n");
  const end = newline ? body.length - 1 : body.length;
  const tail = extensions === undefined ? "}" : `,"extensions":${JSON.stringify(extensions)}}`;
  if (end - tail.length <= DATA.length || body.slice(end - tail.length, end) !== tail) return undefined;
  return end - tail.length;
}

/**
 * The bytes of `data` in a subgraph's body `{"data":…}` or `{"data":…,"extensions":…}` (Apollo
 * Server's order, a newline at the end or not), when the body is exactly that: `extensions` is the
 * parsed extensions member, checked byte for byte against the body's end.
 */
export function dataBytesOf(body: string, extensions: unknown): string | undefined {
  const end = dataEndOf(body, extensions);
  return end === undefined ? undefined : body.slice(DATA.length, end);
}

/**
 * Keeps the bytes a subgraph sent for `data` (its body parsed into `answer`), when its body is
 * nothing but data and extensions. `bytes`: the body's bytes, when `body` is exactly their UTF-8.
 */
export function keepDataBytes(answer: { data?: unknown; errors?: unknown; extensions?: unknown }, body: string, bytes?: Buffer): void {
  const { data, errors, extensions } = answer;
  if (typeof data !== "object" || data === null || errors !== undefined) return;
  const end = dataEndOf(body, extensions);
  if (end !== undefined) keepData(data, body, end, bytes);
}

/** Keeps `data`'s text, `body` from `{"data":` to `end`, and its bytes when `bytes` is the body's UTF-8. */
function keepData(data: object, body: string, end: number, bytes: Buffer | undefined): void {
  // `{"data":` is 8 bytes; what follows the data (the tail and any newline) is the rest of the body's UTF-8.
  setSlot(data, KEPT, { text: body.slice(DATA.length, end), bytes: bytes?.subarray(DATA_BYTES.length, bytes.length - Buffer.byteLength(body.slice(end))) });
}

// Nor is the `data` of such an answer parsed (112 KB for betResults(100) with proofs): the
// subgraph's body is scanned once (gateway/json-skeleton.ts), which proves it is `{"data":{…}}` or
// `{"data":{…},"extensions":{…}}` and nothing else (no errors), and keeps the objects the actual
// cost counts (gateway/actual-cost.ts: costViewOf). The answer's `data` is then an object that
// parses the subgraph's text of it the first time anything reads it (a `readAt` field rewritten,
// gateway/read-at.ts): what reads it sees what JSON.parse gives, and the hot path never does.

/** Requests whose answer without errors is the gateway's answer, as it came (gateway/single-subgraph.ts). */
const wholeAnswers = new WeakSet<object>();

/** Marks a subgraph request whose answer, when it has no errors, is the gateway's answer as it came. */
export function answeredWhole<T extends object>(request: T): T {
  wholeAnswers.add(request);
  return request;
}

export function isAnsweredWhole(request: object): boolean {
  return wholeAnswers.has(request);
}

/** What the actual cost walks for `data`: the skeleton of forwarded data (the same counts), else the data itself. */
export function costViewOf(data: Record<string, unknown>): Record<string, unknown> {
  return ((data as Slots)[SKELETON] as Record<string, unknown> | undefined) ?? data;
}

/**
 * An object that is the parse of `text` to whatever reads it, parsed on the first read. Reading,
 * spreading and enumerating are forwarded; freezing, `structuredClone` or defining a
 * non-configurable property would break the Proxy's invariants, and nothing does them to an answer's data.
 */
function parsedOnRead(text: string): Record<string, unknown> {
  let parsed: Record<string, unknown> | undefined;
  const real = () => (parsed ??= JSON.parse(text) as Record<string, unknown>);
  // The slots (setSlot) live on the target, read without parsing; everything else is the parse's.
  return new Proxy<Record<string, unknown>>(
    {},
    {
      get: (target, key) => (key === KEPT || key === SKELETON ? Reflect.get(target, key) : Reflect.get(real(), key)),
      has: (_target, key) => Reflect.has(real(), key),
      ownKeys: () => Reflect.ownKeys(real()),
      getOwnPropertyDescriptor: (_target, key) => Reflect.getOwnPropertyDescriptor(real(), key),
      set: (_target, key, value) => Reflect.set(real(), key, value),
      deleteProperty: (_target, key) => Reflect.deleteProperty(real(), key),
      defineProperty: (target, key, descriptor) =>
        key === KEPT || key === SKELETON ? Reflect.defineProperty(target, key, descriptor) : Reflect.defineProperty(real(), key, descriptor),
    },
  );
}

const EXTENSIONS = ',"extensions":';

/**
 * A subgraph's answer read without parsing its data, when its body is exactly `{"data":{…}}` or
 * `{"data":{…},"extensions":{…}}` (a newline at the end or not) as JSON.parse reads it; undefined
 * for anything else (errors, data null, other members, not JSON), which is parsed as usual.
 * `keys`: the response keys of the operation's composite fields (objectKeysOf, gateway/actual-cost.ts).
 * `bytes`: the body's bytes, when `body` is exactly their UTF-8.
 */
export function readWithoutData(
  body: string,
  bytes: Buffer | undefined,
  keys: ReadonlySet<string>,
): { data: Record<string, unknown>; extensions?: Record<string, unknown> } | undefined {
  if (!body.startsWith(`${DATA}{`)) return undefined;
  const close = body.endsWith("\n") ? body.length - 1 : body.length;
  // Scanned without the newline: a text with no control character at all is scanned faster.
  const scanned = jsonSkeleton(close < body.length ? body.slice(0, close) : body, keys, DATA.length);
  if (!scanned) return undefined;
  let extensions: Record<string, unknown> | undefined;
  if (scanned.end !== close - 1 || body.charCodeAt(close - 1) !== 0x7d) {
    if (!body.startsWith(EXTENSIONS, scanned.end) || body.charCodeAt(close - 1) !== 0x7d) return undefined;
    const parsed = parseJson(body.slice(scanned.end + EXTENSIONS.length, close - 1));
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return undefined;
    extensions = parsed as Record<string, unknown>;
  }
  const data = parsedOnRead(body.slice(DATA.length, scanned.end));
  keepData(data, body, scanned.end, bytes);
  setSlot(data, SKELETON, scanned.skeleton);
  return extensions === undefined ? { data } : { data, extensions };
}

/** The JSON value of `text`, or undefined when it is not JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Apollo Server's `stringifyResult` (what its default, `JSON.stringify(value) + "\n"`, writes, byte
 * for byte): with the subgraph's own bytes for a `data` it sent, when the answer has no errors.
 */
export function stringifyResult(value: FormattedExecutionResult): string {
  const kept = value.data && value.errors === undefined ? (value.data as Slots)[KEPT] : undefined;
  if (kept === undefined) return stringifyAnswer(value);
  const end = value.extensions === undefined ? "}\n" : `,"extensions":${JSON.stringify(value.extensions)}}\n`;
  const text = `${DATA}${kept.text}${end}`;
  const scope = currentRequestScope();
  if (kept.bytes && scope) scope.renderedAnswer = { text, bytes: Buffer.concat([DATA_BYTES, kept.bytes, Buffer.from(end)]) };
  return text;
}
