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
// the next request with the same key. Each answer is kept once: there is no second copy in
// another form. It is stored as a small header and, under a key of their own, the bytes of that
// write: a hit reads the header, and the bytes only when this process has not decoded that write
// yet (with Redis, a betResults(100) hit read ~150 KB and cost ~2 ms of gateway CPU before).
//
// The key is gateway/cache-key.ts's (the normalised operation, its declared variables, Accept and
// the data generation). A new entry is written only within bounds: an answer larger than
// maxEntryBytes is not stored, and each client (its address, as the rate limit reads
// it) may create at most a budget of new entries a minute; past either, the answer is served,
// not stored. A hit whose key meant parsing its text (a text the key function did not remember: a
// new comment, new whitespace) is priced as a new document by the points budget before it is
// replayed, or refused.

/** Store keys: an answer's header (small, read by every hit) and its bytes (read once per gateway and write). */
const HEAD = "head:";
const BODY = "body:";
/** 3: a header apart from the bytes of its write (2: one text, header line and body). */
const ENTRY_VERSION = 3;

/** How long an answer the rules owner kept may be replayed, and under which operation it is counted. */
export interface Replayable {
  /** When the answer was computed (ms since the epoch): `Age` counts from here. */
  cacheTime: number;
  /** Its merged maxAge in seconds: the entry lives exactly as long. */
  maxAge: number;
  /** The operation's resolved name, for the request metrics. */
  operation: string | null;
}

/** What `head:KEY` holds: everything a hit needs but the bytes, and which write of the bytes is current. */
interface Head extends Replayable {
  v: typeof ENTRY_VERSION;
  /** This write's own id, also on the first line of its bytes (`body:KEY`): a decoding is reused only for this write. */
  id: string;
  status: number;
  /** Apollo Server's headers for the answer, without `x-cache` and `age` (set per answer). */
  headers: [string, string][];
}

/** The body compressed, base64, by encoding. */
type Encoded = Partial<Record<ContentEncoding, string>>;

/** What `body:KEY` holds: the write's id on a line, a line of the compressed representations, then the body. */
function encodeBytes(id: string, encoded: Encoded, body: string): string {
  return `${id}\n${JSON.stringify(encoded)}\n${body}`;
}

/** The bytes of write `id`, or undefined when the store holds another write's (or anything else). */
function decodeBytes(text: string, id: string): { encoded: Encoded; body: string } | undefined {
  if (!text.startsWith(`${id}\n`)) return undefined;
  const end = text.indexOf("\n", id.length + 1);
  if (end < 0) return undefined;
  try {
    const encoded = JSON.parse(text.slice(id.length + 1, end)) as Encoded;
    return typeof encoded === "object" && encoded !== null ? { encoded, body: text.slice(end + 1) } : undefined;
  } catch {
    return undefined;
  }
}

/** A header, or undefined for anything this version did not write. */
function decodeHead(text: string): Head | undefined {
  try {
    const head = JSON.parse(text) as Head;
    if (
      head?.v !== ENTRY_VERSION ||
      !Number.isFinite(head.cacheTime) ||
      !Number.isFinite(head.maxAge) ||
      !Array.isArray(head.headers) ||
      typeof head.id !== "string"
    )
      return undefined;
    return head;
  } catch {
    return undefined;
  }
}

/** A write's bytes as a hit writes them: the body as bytes, compressed representations decoded when first asked. */
interface Decoded {
  /** The write these bytes belong to: a hit uses this decoding only while the store's header names it. */
  id: string;
  body: Buffer;
  /** The stored representations, base64. */
  stored: Encoded;
  encoded: Partial<Record<ContentEncoding, Buffer>>;
  size: number;
  /** When a hit from memory last touched the stored bytes (ms). */
  touchedAt: number;
}

/**
 * Decoded writes by replay key, least recently used first, bounded in bytes. Writing a Buffer
 * instead of a 100 KB string (encoded to UTF-8 on every write), and not reading those 100 KB from
 * the store again, is most of what a hit costs. It is only a decoding of what the store holds,
 * never a second cache: every hit still reads the store's header and uses the memo only when the
 * header names the write it was decoded from. Its size counts the body bytes and the compressed
 * representations it holds.
 */
class DecodedMemo {
  private readonly entries = new Map<string, Decoded>();
  private bytes = 0;

  private readonly maxBytes: number;
  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  get(key: string, id: string): Decoded | undefined {
    const found = this.entries.get(key);
    if (!found) return undefined;
    this.entries.delete(key);
    if (found.id !== id) {
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
    this.evict();
  }

  /** Adds a compressed representation decoded on a hit (within the bound: the oldest decodings go). */
  grow(key: string, decoded: Decoded, encoding: ContentEncoding, bytes: Buffer): void {
    decoded.encoded[encoding] = bytes;
    decoded.size += bytes.length;
    if (this.entries.get(key) !== decoded) return;
    this.bytes += bytes.length;
    this.evict();
  }

  private evict(): void {
    for (const [oldest, entry] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= entry.size;
    }
  }
}

/** A request that missed: the key it would store its answer under, who would add it, and whether it is the one to store it. */
interface Miss {
  key: string;
  client: string;
  /** When it missed (ms). */
  at: number;
  /** Whether it is the first of the requests computing this key in this process (only it stores the answer). */
  leads: boolean;
}

/** How often a hit from memory touches the stored bytes of its answer, at most. */
const TOUCH_EVERY_MS = 1_000;
/** How long a request computing a key is the only one to store it, at most (a request may never finish). */
const LEAD_MS = 10_000;
/** How long after storing an answer a miss of its key still does not store it again. */
const STORED_LEAD_MS = 1_000;
/** Keys tracked as being computed, at most (a crowd of distinct misses forgets them, at worst storing twice). */
const MAX_LEADING = 10_000;

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
  const pending = new WeakMap<HTTPGraphQLRequest, Miss>();
  /**
   * Keys some request of this process is computing an answer for, to store it, and since when.
   * Requests that miss the same key meanwhile compute it too but do not store it: a herd of
   * misses writes the answer once and charges one client one new entry. A request that never
   * finishes leads for at most LEAD_MS.
   */
  const leading = new Map<string, number>();
  const lead = (key: string, at: number): boolean => {
    const since = leading.get(key);
    // A clock stepped back (an NTP step) ends a lead rather than prolonging it.
    if (since !== undefined && at >= since && at - since < LEAD_MS) return false;
    if (leading.size >= MAX_LEADING) leading.clear();
    leading.set(key, at);
    return true;
  };
  /** Ends a lead; a stored answer keeps it STORED_LEAD_MS more (requests that read the store before the write are still to miss). */
  const release = (lease: { key: string; at: number }, stored: boolean) => {
    if (leading.get(lease.key) !== lease.at) return;
    if (stored) leading.set(lease.key, now() - LEAD_MS + STORED_LEAD_MS);
    else leading.delete(lease.key);
  };
  /** What each replayed answer came from, to add a compressed representation. */
  const replayed = new WeakMap<CompleteAnswer, { key: string; head: Head; decoded: Decoded }>();
  const memo = new DecodedMemo(options.memoBytes ?? DEFAULT_REPLAY_MEMO_BYTES);

  const read = async (key: string): Promise<string | undefined> => {
    try {
      return await store.get(key);
    } catch {
      return undefined;
    }
  };

  /**
   * The bytes of the write `head` names: remembered, else read from the store (undefined when gone
   * or another write's). A remembered read still touches the stored bytes: the store's LRU must see
   * a hot answer's bytes as used as often as its header, or it would evict them first.
   */
  const bytesOf = async (key: string, head: Head): Promise<Decoded | undefined> => {
    const remembered = memo.get(key, head.id);
    if (remembered) {
      // At most once a second per answer: Redis's LRU clock counts seconds anyway.
      const at = now();
      if (at < remembered.touchedAt || at - remembered.touchedAt >= TOUCH_EVERY_MS) {
        remembered.touchedAt = at;
        store.touch?.(BODY + key).catch(() => undefined);
      }
      return remembered;
    }
    const text = await read(BODY + key);
    if (text === undefined) return undefined;
    const stored = decodeBytes(text, head.id);
    if (!stored) return undefined;
    const body = Buffer.from(stored.body, "utf8");
    const size = body.length + text.length - stored.body.length;
    const decoded: Decoded = { id: head.id, body, stored: stored.encoded, encoded: {}, size, touchedAt: Number.NEGATIVE_INFINITY };
    memo.set(key, decoded);
    return decoded;
  };

  /**
   * Writes an answer within its bounds (its size; `client`: a new entry, within that client's
   * budget): its bytes, then the header that names their write (the store keeps the order of one
   * client's commands; where two writers interleave, a header may name bytes since overwritten by
   * the other: a miss, and the next miss writes both again). Whether it was written.
   */
  const keep = async (key: string, entry: Omit<Head, "id">, stored: { encoded: Encoded; body: string }, write: { client?: string } = {}): Promise<boolean> => {
    const ttl = Math.floor(entry.maxAge - (now() - entry.cacheTime) / 1000);
    if (ttl <= 0) return false;
    // The bound holds for the bytes stored (header, body, base64 copies), not the body alone.
    // Past it a new entry goes without its compressed copy (a hit then compresses), and a copy a
    // hit would add is not kept (the entry stays as it is).
    const id = randomUUID();
    const head = JSON.stringify({ ...entry, id });
    let bytes = encodeBytes(id, stored.encoded, stored.body);
    const size = () => Buffer.byteLength(head) + Buffer.byteLength(bytes);
    if (size() > maxEntryBytes) {
      if (write.client === undefined || Object.keys(stored.encoded).length === 0) return false;
      bytes = encodeBytes(id, {}, stored.body);
      if (size() > maxEntryBytes) return false;
    }
    // A store known to be away would lose the write: the client's new entry is not spent on it.
    if (store.available?.() === false) return false;
    if (write.client !== undefined && options.newEntries && !(await options.newEntries.take(write.client))) return false;
    store.set(BODY + key, bytes, { ttl }).catch(() => undefined);
    store.set(HEAD + key, head, { ttl }).catch(() => undefined);
    return true;
  };

  /**
   * Keeps a compressed form first asked for on a hit beside the others, for the next hits: a
   * rewrite of the entry, only while the store still holds the write that was replayed (else it
   * would put an older answer back over a newer one), by one of the hits that asked for it at once.
   */
  const addForm = async (source: { key: string; head: Head; decoded: Decoded }, sent: NonNullable<SentEncoding>) => {
    const rewrite = { key: `${sent.encoding}\n${source.key}`, at: now() };
    if (!lead(rewrite.key, rewrite.at)) return;
    let stored = false;
    try {
      const current = await read(HEAD + source.key);
      if (current === undefined || decodeHead(current)?.id !== source.head.id) return;
      const { id: _replaced, ...entry } = source.head;
      const encoded = { ...source.decoded.stored, [sent.encoding]: sent.bytes.toString("base64") };
      stored = await keep(source.key, entry, { encoded, body: source.decoded.body.toString("utf8") });
    } finally {
      release(rewrite, stored);
    }
  };

  return {
    async answer(request, incoming) {
      const started = now();
      const current = generation ? generation.current() : "";
      if (current === undefined) return undefined;
      const found = cacheKeyOf(request, current);
      if (found === undefined) return undefined;
      const { key, parsedTokens } = found;
      const headText = await read(HEAD + key);
      const head = headText === undefined ? undefined : decodeHead(headText);
      const ageMs = head ? now() - head.cacheTime : 0;
      const decoded = head && ageMs < head.maxAge * 1000 ? await bytesOf(key, head) : undefined;
      if (!head || !decoded) {
        const client = incoming && options.clientOf ? options.clientOf(incoming) : "";
        pending.set(request, { key, client, at: started, leads: lead(key, started) });
        return undefined;
      }
      const charged = parsedTokens !== undefined && incoming && options.chargeNewDocument ? await options.chargeNewDocument(incoming, parsedTokens) : undefined;
      if (charged && "refusal" in charged) return charged.refusal;
      const answer: CompleteAnswer = {
        status: head.status,
        headers: [...head.headers, ...(charged?.headers ?? []), ["age", String(Math.max(0, Math.round(ageMs / 1000)))], ["x-cache", "HIT"]],
        body: decoded.body,
        encoded: (encoding) => {
          const known = decoded.encoded[encoding];
          if (known) return known;
          const base64 = decoded.stored[encoding];
          if (base64 === undefined) return undefined;
          const bytes = Buffer.from(base64, "base64");
          memo.grow(key, decoded, encoding, bytes);
          return bytes;
        },
      };
      replayed.set(answer, { key, head, decoded });
      options.onReplay?.(head.operation, (now() - started) / 1000);
      return answer;
    },

    answered(request, answer, sent: SentEncoding, from) {
      if (from === "before") {
        const source = replayed.get(answer);
        // Compressed for this hit (neither stored nor remembered): remembered now, so that this gateway
        // compresses it once per write even when it does not fit in the entry, and stored if it fits.
        if (source && sent && source.decoded.encoded[sent.encoding] === undefined) {
          memo.grow(source.key, source.decoded, sent.encoding, sent.bytes);
          if (source.decoded.stored[sent.encoding] === undefined) void addForm(source, sent);
        }
        return;
      }
      const miss = pending.get(request);
      const decision = miss?.leads ? options.decisionFor(request) : undefined;
      if (miss === undefined || !decision || answer.status !== 200) {
        if (miss?.leads) release(miss, false);
        options.onComputed?.(false);
        return;
      }
      const headers: [string, string][] = [];
      for (const [name, value] of answer.headers) if (!PER_ANSWER.has(name.toLowerCase())) headers.push([name, value]);
      const written = typeof answer.body === "string" ? answer.body : answer.body.toString("utf8");
      const body = options.storable ? options.storable(written) : written;
      // The bytes sent are kept only when they are the stored body's; else the first hit compresses it.
      const encoded = sent && body === written ? { [sent.encoding]: sent.bytes.toString("base64") } : {};
      void keep(miss.key, { v: ENTRY_VERSION, ...decision, status: answer.status, headers }, { encoded, body }, { client: miss.client }).then((stored) => {
        release(miss, stored);
        options.onComputed?.(stored);
      });
    },
  };
}
