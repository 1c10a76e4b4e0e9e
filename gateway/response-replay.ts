import { createHash, randomUUID } from "node:crypto";
import type { HTTPGraphQLRequest } from "@apollo/server";
import type { ContentEncoding } from "../core/compression.ts";
import type { AnswerBeforeGraphQL, CompleteAnswer, SentEncoding } from "../core/http.ts";
import type { DataGeneration, ResponseCacheStore } from "./response-cache.ts";

// The response cache's byte path. Apollo's response cache plugin (gateway/response-cache.ts, the
// one owner of what may be kept) still parses, validates and plans every request before it finds
// a hit, then parses the stored JSON and serialises the answer again. Here, the bytes Apollo Server
// wrote for an answer that owner kept are stored beside its entry, compressed representations
// included, and replayed before Apollo Server is entered: a hit is one store read and one write.
//
// The key is what decides the answer, read from the request exactly as Apollo Server reads it:
// the query's SHA-256 (the APQ hash, so a hash-only request finds what its text stored), the
// operation name, the variables as sent (not canonicalised: the same variables in another order
// are another key, a miss), the Accept header (it chooses the content type) and the data
// generation. GET and POST read the same fields. Anything this reader is unsure of — another
// method, a GET with a Content-Type, repeated or malformed parameters, unknown extensions, a hash
// that does not match the text — has no key and goes to Apollo Server, whose rules then apply.

/** Store keys of replayable bytes (the plugin's own entries are `fqc:…`). */
const PREFIX = "bytes:";
const ENTRY_VERSION = 1;
const SHA256_HEX = /^[0-9a-f]{64}$/;

/** How long an answer the rules owner kept may be replayed, and under which operation it is counted. */
export interface Replayable {
  /** When the answer was computed (ms since the epoch): `Age` counts from here. */
  cacheTime: number;
  /** Its merged maxAge in seconds: the entry lives exactly as long. */
  maxAge: number;
  /** The operation's resolved name, for the request metrics. */
  operation: string | null;
}

interface Entry extends Replayable {
  v: typeof ENTRY_VERSION;
  /** This write's own id: a decoding is reused only for the write it was made from. */
  id: string;
  status: number;
  /** Apollo Server's headers for the answer, without `x-cache` and `age` (set per answer). */
  headers: [string, string][];
  /** The body compressed, base64, by encoding. */
  encoded: Partial<Record<ContentEncoding, string>>;
}

type Json = Record<string, unknown>;
const isRecord = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value) && !Buffer.isBuffer(value);

/** A field that is absent, null, or an object (Apollo Server's `variables` / `extensions`); false: anything else. */
function optionalRecord(value: unknown): Json | undefined | false {
  if (value === undefined || value === null) return undefined;
  return isRecord(value) ? value : false;
}

/** A JSON object search parameter given at most once; false: repeated, not JSON, or not an object. */
function searchRecord(params: URLSearchParams, name: string): Json | undefined | false {
  const values = params.getAll(name);
  if (values.length === 0) return undefined;
  if (values.length > 1) return false;
  try {
    return optionalRecord(JSON.parse(values[0]!) as unknown) ?? false;
  } catch {
    return false;
  }
}

function searchString(params: URLSearchParams, name: string): string | undefined | false {
  const values = params.getAll(name);
  return values.length > 1 ? false : values[0];
}

/** The GraphQL fields of a request as Apollo Server reads them (runHttpQuery), or undefined when unsure. */
function fieldsOf(request: HTTPGraphQLRequest): { query?: string; operationName?: string; variables?: Json; extensions?: Json } | undefined {
  if (request.method === "GET") {
    if (request.headers.get("content-type") !== undefined) return undefined;
    const params = new URLSearchParams(request.search);
    const query = searchString(params, "query");
    const operationName = searchString(params, "operationName");
    const variables = searchRecord(params, "variables");
    const extensions = searchRecord(params, "extensions");
    if (query === false || operationName === false || variables === false || extensions === false) return undefined;
    return { query, operationName, variables, extensions };
  }
  if (request.method !== "POST" || !isRecord(request.body) || Object.keys(request.body).length === 0) return undefined;
  const { query, operationName } = request.body;
  const variables = optionalRecord(request.body.variables);
  const extensions = optionalRecord(request.body.extensions);
  if (variables === false || extensions === false) return undefined;
  if (query !== undefined && query !== null && typeof query !== "string") return undefined;
  if (operationName !== undefined && operationName !== null && typeof operationName !== "string") return undefined;
  return { query: query ?? undefined, operationName: operationName ?? undefined, variables, extensions };
}

/** The persisted query hash a request carries: undefined (none), a lowercase SHA-256, or false (anything else). */
function persistedHash(extensions: Json | undefined): string | undefined | false {
  if (!extensions) return undefined;
  const names = Object.keys(extensions);
  if (names.length === 0) return undefined;
  if (names.length !== 1 || names[0] !== "persistedQuery") return false;
  const persisted = extensions.persistedQuery;
  if (!isRecord(persisted) || Object.keys(persisted).length !== 2 || persisted.version !== 1) return false;
  const hash = persisted.sha256Hash;
  return typeof hash === "string" && SHA256_HEX.test(hash) ? hash : false;
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/**
 * The replay key of a request under a data generation, or undefined: not replayable, Apollo Server
 * answers it. Two requests with one key read the same query, operation name, variables and Accept.
 */
export function replayKeyOf(request: HTTPGraphQLRequest, generation: string): string | undefined {
  const fields = fieldsOf(request);
  if (!fields) return undefined;
  const hash = persistedHash(fields.extensions);
  if (hash === false) return undefined;
  const document = fields.query !== undefined ? sha256(fields.query) : hash;
  // No query at all, or a hash Apollo Server would refuse as not the text's.
  if (document === undefined || (hash !== undefined && hash !== document)) return undefined;
  const accept = request.headers.get("accept") ?? "";
  return sha256(JSON.stringify([generation, document, fields.operationName ?? null, fields.variables ?? {}, accept]));
}

function encodeEntry(entry: Entry, body: string): string {
  return `${JSON.stringify(entry)}\n${body}`;
}

/** An entry, its header line and its body, or undefined for anything this version did not write. */
function decodeEntry(text: string): { entry: Entry; head: string; body: string } | undefined {
  const end = text.indexOf("\n");
  if (end < 0) return undefined;
  try {
    const entry = JSON.parse(text.slice(0, end)) as Entry;
    if (
      entry?.v !== ENTRY_VERSION ||
      !Number.isFinite(entry.cacheTime) ||
      !Number.isFinite(entry.maxAge) ||
      !Array.isArray(entry.headers) ||
      typeof entry.id !== "string"
    )
      return undefined;
    return { entry, head: text.slice(0, end + 1), body: text.slice(end + 1) };
  } catch {
    return undefined;
  }
}

/** An entry as a hit writes it: the body as bytes, compressed representations decoded when first asked. */
interface Decoded {
  /**
   * The stored text's header line (with the newline, holding the write's id) and its body's
   * length: a hit uses this decoding only while the store still answers that very write.
   */
  head: string;
  bodyChars: number;
  entry: Entry;
  body: Buffer;
  encoded: Partial<Record<ContentEncoding, Buffer>>;
  size: number;
}

/**
 * Decoded entries by replay key, least recently used first, bounded in bytes. Writing a Buffer
 * instead of a 100 KB string (encoded to UTF-8 on every write) is most of what a hit costs.
 * It is only a decoding of what the store holds, never a second cache: every hit still reads the
 * store and uses the memo only when the store returns the text it was decoded from. Its size
 * counts the header line, the body bytes and the compressed bytes it holds.
 */
class DecodedMemo {
  private readonly entries = new Map<string, Decoded>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  get(key: string, text: string): Decoded | undefined {
    const found = this.entries.get(key);
    if (!found) return undefined;
    this.entries.delete(key);
    if (text.length !== found.head.length + found.bodyChars || !text.startsWith(found.head)) {
      this.bytes -= found.size;
      return undefined;
    }
    this.entries.set(key, found);
    return found;
  }

  set(key: string, decoded: Decoded): void {
    const old = this.entries.get(key);
    if (old) {
      this.entries.delete(key);
      this.bytes -= old.size;
    }
    if (decoded.size > this.maxBytes) return;
    this.entries.set(key, decoded);
    this.bytes += decoded.size;
    for (const [oldest, entry] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= entry.size;
    }
  }

  /** Adds a compressed representation decoded on a hit. */
  grow(key: string, decoded: Decoded, encoding: ContentEncoding, bytes: Buffer): void {
    decoded.encoded[encoding] = bytes;
    decoded.size += bytes.length;
    if (this.entries.get(key) === decoded) this.bytes += bytes.length;
  }
}

/** Default bound of the decoded entries kept in process (bytes of bodies and compressed bodies). */
export const DEFAULT_REPLAY_MEMO_BYTES = 32 * 1024 * 1024;

/** Headers set per answer, never stored: the cache's own, and the client's budget (gateway/points-budget.ts). */
const PER_ANSWER = new Set(["x-cache", "age", "ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"]);

export interface ResponseReplayOptions {
  store: ResponseCacheStore;
  /** Without one the generation is constant; while it is unknown nothing is replayed or stored. */
  generation?: DataGeneration;
  /** What the rules owner decided about the answer Apollo Server just gave: replayable, or not (undefined). */
  decisionFor(request: HTTPGraphQLRequest): Replayable | undefined;
  /** A computed body as it may be stored (e.g. without its request's own cost); default: as written. */
  storable?: (body: string) => string;
  /** Called for each replayed answer (metrics). */
  onReplay?(operation: string | null, seconds: number): void;
  /** Bound of the decoded entries kept in process; default DEFAULT_REPLAY_MEMO_BYTES, 0: none (every hit decodes). */
  memoBytes?: number;
  now?: () => number;
}

/**
 * The byte path as core/http.ts's AnswerBeforeGraphQL: `answer` replays stored bytes (`X-Cache:
 * HIT`, `Age`), `answered` stores what Apollo Server wrote when the rules owner kept the answer,
 * and adds compressed representations as clients ask for them. A store that fails or is away is
 * a miss (the Redis store answers undefined at once).
 */
export function createResponseReplay(options: ResponseReplayOptions): AnswerBeforeGraphQL {
  const { store, generation } = options;
  const now = options.now ?? Date.now;
  /** Keys of requests that went to Apollo Server, computed before it ran (an answer computed across a generation change lands under the old one). */
  const pending = new WeakMap<HTTPGraphQLRequest, string>();
  /** What each replayed answer came from, to add a compressed representation. */
  const replayed = new WeakMap<CompleteAnswer, { key: string; decoded: Decoded }>();
  const memo = new DecodedMemo(options.memoBytes ?? DEFAULT_REPLAY_MEMO_BYTES);

  const decode = (key: string, text: string): Decoded | undefined => {
    const remembered = memo.get(key, text);
    if (remembered) return remembered;
    const stored = decodeEntry(text);
    if (!stored) return undefined;
    const body = Buffer.from(stored.body, "utf8");
    const decoded: Decoded = {
      head: stored.head,
      bodyChars: stored.body.length,
      entry: stored.entry,
      body,
      encoded: {},
      size: stored.head.length + body.length,
    };
    memo.set(key, decoded);
    return decoded;
  };

  const keep = (key: string, entry: Omit<Entry, "id">, body: string) => {
    // The stored text changes, so the memo's decoding of the old one is dropped at the next hit.
    const ttl = Math.floor(entry.maxAge - (now() - entry.cacheTime) / 1000);
    if (ttl <= 0) return;
    store.set(PREFIX + key, encodeEntry({ ...entry, id: randomUUID() }, body), { ttl }).catch(() => undefined);
  };

  return {
    async answer(request) {
      const started = now();
      const current = generation ? generation.current() : "";
      if (current === undefined) return undefined;
      const key = replayKeyOf(request, current);
      if (key === undefined) return undefined;
      let text: string | undefined;
      try {
        text = await store.get(PREFIX + key);
      } catch {
        text = undefined;
      }
      const decoded = text === undefined ? undefined : decode(key, text);
      const ageMs = decoded ? now() - decoded.entry.cacheTime : 0;
      if (!decoded || ageMs >= decoded.entry.maxAge * 1000) {
        pending.set(request, key);
        return undefined;
      }
      const { entry } = decoded;
      const answer: CompleteAnswer = {
        status: entry.status,
        headers: [...entry.headers, ["age", String(Math.max(0, Math.round(ageMs / 1000)))], ["x-cache", "HIT"]],
        body: decoded.body,
        encoded: (encoding) => {
          const known = decoded.encoded[encoding];
          if (known) return known;
          const base64 = entry.encoded[encoding];
          if (base64 === undefined) return undefined;
          const bytes = Buffer.from(base64, "base64");
          memo.grow(key, decoded, encoding, bytes);
          return bytes;
        },
      };
      replayed.set(answer, { key, decoded });
      options.onReplay?.(entry.operation, (now() - started) / 1000);
      return answer;
    },

    answered(request, answer, sent: SentEncoding, from) {
      if (from === "before") {
        const source = replayed.get(answer);
        const entry = source?.decoded.entry;
        if (source && entry && sent && entry.encoded[sent.encoding] === undefined) {
          // A representation first asked for on a hit: kept beside the others for the next ones.
          keep(source.key, { ...entry, encoded: { ...entry.encoded, [sent.encoding]: sent.bytes.toString("base64") } }, source.decoded.body.toString("utf8"));
        }
        return;
      }
      const key = pending.get(request);
      const decision = key === undefined ? undefined : options.decisionFor(request);
      if (key === undefined || !decision || answer.status !== 200) return;
      const headers: [string, string][] = [];
      for (const [name, value] of answer.headers) if (!PER_ANSWER.has(name.toLowerCase())) headers.push([name, value]);
      const written = typeof answer.body === "string" ? answer.body : answer.body.toString("utf8");
      const body = options.storable ? options.storable(written) : written;
      // The bytes sent are kept only when they are the stored body's; else the first hit compresses it.
      const encoded = sent && body === written ? { [sent.encoding]: sent.bytes.toString("base64") } : {};
      keep(key, { v: ENTRY_VERSION, ...decision, status: answer.status, headers, encoded }, body);
    },
  };
}
