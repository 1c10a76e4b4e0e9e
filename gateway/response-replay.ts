import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { HTTPGraphQLRequest } from "@apollo/server";
import type { ContentEncoding } from "../core/compression.ts";
import type { AnswerBeforeGraphQL, CompleteAnswer, SentEncoding } from "../core/http.ts";
import type { NewEntryBudget } from "./cache-entry-budget.ts";
import { cacheKeyOf } from "./cache-key.ts";
import type { NewDocumentCharge } from "./points-budget.ts";
import type { DataGeneration, ResponseCacheStore } from "./response-cache.ts";

// The response cache's byte path, and its only store. Apollo Server's answer is computed once; the
// rules owner (gateway/response-cache.ts) decides whether it may be kept, and here its bytes are
// stored, compressed representations included, and replayed before Apollo Server is entered on
// the next request with the same key: a hit is one store read and one write. Each answer is kept
// once: there is no second copy in another form.
//
// The key is gateway/cache-key.ts's (the normalised operation, its declared variables, Accept and
// the data generation). A new entry is written only within bounds: an answer larger than
// maxEntryBytes is not stored, and each client (its address, as the rate limit reads
// it) may create at most a budget of new entries a minute; past either, the answer is served,
// not stored. A hit whose key meant parsing its text (a text the key function did not remember: a
// new comment, new whitespace) is priced as a new document by the points budget before it is
// replayed, or refused.

/** Store keys of stored answers. */
const PREFIX = "bytes:";
/** 2: keyed by gateway/cache-key.ts (normalised operations, declared variables). */
const ENTRY_VERSION = 2;

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

  private readonly maxBytes: number;
  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

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

/** Default bound of one stored entry's bytes: larger answers are served, never stored. */
export const DEFAULT_MAX_ENTRY_BYTES = 256 * 1024;

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
  /**
   * Bound of one stored entry in bytes (its header line, the body and its base64 compressed
   * representations); default DEFAULT_MAX_ENTRY_BYTES. A representation that would not fit is not
   * kept; an answer whose entry does not fit without them is not stored.
   */
  maxEntryBytes?: number;
  /** New entries per client; unbounded when absent. */
  newEntries?: NewEntryBudget;
  /** The client a request is charged to (core/client-address.ts); without it every request is one client. */
  clientOf?(req: IncomingMessage): string;
  /**
   * Prices a hit whose text was parsed for its key (gateway/points-budget.ts chargeNewDocument):
   * headers to send with it, or a refusal to send instead. Never asked for a remembered text.
   */
  chargeNewDocument?(req: IncomingMessage, tokens: number): Promise<NewDocumentCharge | undefined>;
  /** Called for each answer Apollo Server computed: whether it was stored. */
  onComputed?(stored: boolean): void;
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
  const maxEntryBytes = options.maxEntryBytes ?? DEFAULT_MAX_ENTRY_BYTES;
  /**
   * Keys of requests that went to Apollo Server, computed before it ran (an answer computed across
   * a generation change lands under the old one), with the client that would add the entry.
   */
  const pending = new WeakMap<HTTPGraphQLRequest, { key: string; client: string }>();
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

  /** Writes an entry within its bounds (its size; `client`: a new entry, within that client's budget); whether it was written. */
  const keep = async (key: string, entry: Omit<Entry, "id">, body: string, client?: string): Promise<boolean> => {
    // The stored text changes, so the memo's decoding of the old one is dropped at the next hit.
    const ttl = Math.floor(entry.maxAge - (now() - entry.cacheTime) / 1000);
    if (ttl <= 0) return false;
    // The bound holds for the bytes stored (header line, body, base64 copies), not the body alone.
    // Past it a new entry goes without its compressed copy (a hit then compresses), and a copy a
    // hit would add is not kept (the entry stays as it is).
    let text = encodeEntry({ ...entry, id: randomUUID() }, body);
    if (Buffer.byteLength(text) > maxEntryBytes) {
      if (client === undefined || Object.keys(entry.encoded).length === 0) return false;
      text = encodeEntry({ ...entry, encoded: {}, id: randomUUID() }, body);
      if (Buffer.byteLength(text) > maxEntryBytes) return false;
    }
    if (client !== undefined && options.newEntries && !(await options.newEntries.take(client))) return false;
    store.set(PREFIX + key, text, { ttl }).catch(() => undefined);
    return true;
  };

  return {
    async answer(request, incoming) {
      const started = now();
      const current = generation ? generation.current() : "";
      if (current === undefined) return undefined;
      const found = cacheKeyOf(request, current);
      if (found === undefined) return undefined;
      const { key, parsedTokens } = found;
      let text: string | undefined;
      try {
        text = await store.get(PREFIX + key);
      } catch {
        text = undefined;
      }
      const decoded = text === undefined ? undefined : decode(key, text);
      const ageMs = decoded ? now() - decoded.entry.cacheTime : 0;
      if (!decoded || ageMs >= decoded.entry.maxAge * 1000) {
        pending.set(request, { key, client: incoming && options.clientOf ? options.clientOf(incoming) : "" });
        return undefined;
      }
      const charged = parsedTokens !== undefined && incoming && options.chargeNewDocument ? await options.chargeNewDocument(incoming, parsedTokens) : undefined;
      if (charged && "refusal" in charged) return charged.refusal;
      const { entry } = decoded;
      const answer: CompleteAnswer = {
        status: entry.status,
        headers: [...entry.headers, ...(charged?.headers ?? []), ["age", String(Math.max(0, Math.round(ageMs / 1000)))], ["x-cache", "HIT"]],
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
          void keep(
            source.key,
            { ...entry, encoded: { ...entry.encoded, [sent.encoding]: sent.bytes.toString("base64") } },
            source.decoded.body.toString("utf8"),
          );
        }
        return;
      }
      const miss = pending.get(request);
      const decision = miss === undefined ? undefined : options.decisionFor(request);
      if (miss === undefined || !decision || answer.status !== 200) {
        options.onComputed?.(false);
        return;
      }
      const headers: [string, string][] = [];
      for (const [name, value] of answer.headers) if (!PER_ANSWER.has(name.toLowerCase())) headers.push([name, value]);
      const written = typeof answer.body === "string" ? answer.body : answer.body.toString("utf8");
      const body = options.storable ? options.storable(written) : written;
      // The bytes sent are kept only when they are the stored body's; else the first hit compresses it.
      const encoded = sent && body === written ? { [sent.encoding]: sent.bytes.toString("base64") } : {};
      void keep(miss.key, { v: ENTRY_VERSION, ...decision, status: answer.status, headers, encoded }, body, miss.client).then((stored) =>
        options.onComputed?.(stored),
      );
    },
  };
}
