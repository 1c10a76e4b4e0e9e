import { HeaderMap, type HTTPGraphQLRequest } from "@apollo/server";
import { InMemoryLRUCache } from "@apollo/utils.keyvaluecache";
import { describe, expect, it } from "vitest";
import type { SentEncoding } from "../core/http.ts";
import { ask } from "../test/raw-graphql.ts";
import { BETS, IDS, recording, serve } from "../test/replay-server.ts";
import { createNewEntryBudget } from "./cache-entry-budget.ts";
import { createMemoryResponseCacheStore, type ResponseCacheStore } from "./response-cache.ts";
import { createResponseReplay } from "./response-replay.ts";

// What the response cache's byte path (gateway/response-replay.ts) writes to its store and reads
// back: an answer is a small header and its bytes, written once, read once per gateway and write,
// kept as used as the header in the store's LRU, bounded, and never served for another write.
// The same over Redis's own LRU: response-cache-redis.db.test.ts.

const at = 1_700_000_000_000;
const pageOf = (ids: string[]): HTTPGraphQLRequest => ({ method: "POST", headers: new HeaderMap(), search: "", body: { query: BETS, variables: { ids } } });
/** A gateway's byte path alone, every answer kept an hour. */
const gateway = (store: ResponseCacheStore) =>
  createResponseReplay({ store, decisionFor: () => ({ cacheTime: at, maxAge: 3600, operation: null }), now: () => at });
type Replay = ReturnType<typeof gateway>;
const tick = () => new Promise((resolve) => setImmediate(resolve));
const storeAnswer = async (replay: Replay, ids: string[], body: string) => {
  const miss = pageOf(ids);
  expect(await replay.answer(miss)).toBeUndefined();
  replay.answered?.(miss, { status: 200, headers: [["content-type", "application/json"]], body }, undefined, "graphql");
  await tick();
};
/** A store in memory that counts its reads of keys starting with `prefix`. */
const countingReads = (prefix: string) => {
  const reads = { count: 0 };
  const store = recording(
    () => undefined,
    new InMemoryLRUCache<string>(),
    (key) => void (key.startsWith(prefix) && reads.count++),
  );
  return { store, reads };
};
/** The kinds of key a store holds (an answer: its `head` and its `body`). */
const kindsOf = (memory: InMemoryLRUCache<string>) =>
  memory
    .keys()
    .map((key) => key.split(":")[0])
    .sort();
const hit = async (replay: Replay, ids: string[]) => (await replay.answer(pageOf(ids)))?.body.toString();

describe("response cache byte path and its store", () => {
  it("stores each answer once: one write per cacheable miss, none per hit", async () => {
    const writes: string[] = [];
    const store = recording((key) => writes.push(key));
    const once = await serve({ store });
    try {
      const replies = [];
      for (let i = 0; i < 3; i++) replies.push(await ask(once.url, { query: BETS, variables: { ids: IDS.slice(0, 9) } }));
      expect(replies.map((r) => r.headers["x-cache"])).toEqual(["MISS", "HIT", "HIT"]);
      // One answer: its header and the bytes it names.
      expect(writes.map((key) => key.split(":")[0]).sort()).toEqual(["body", "head"]);
    } finally {
      await once.close();
    }
  });

  it("reads only a small header from the store on a hit whose write it has already decoded, not the answer again", async () => {
    const read: number[] = [];
    const store = recording(
      () => undefined,
      undefined,
      (_key, value) => read.push(value === undefined ? 0 : Buffer.byteLength(value)),
    );
    const served = await serve({ store });
    try {
      const page = () => ask(served.url, { query: BETS, variables: { ids: IDS } });
      const miss = await page();
      expect(miss.body.length).toBeGreaterThan(10_000);
      expect((await page()).headers["x-cache"]).toBe("HIT");
      read.length = 0;
      const hit = await page();
      expect(hit.headers["x-cache"]).toBe("HIT");
      expect(hit.body.equals(miss.body)).toBe(true);
      expect(read.length).toBeGreaterThan(0);
      expect(read.reduce((sum, bytes) => sum + bytes, 0)).toBeLessThan(1_024);
    } finally {
      await served.close();
    }
  });

  it("recomputes and stores again an answer whose header names bytes the store no longer holds (evicted apart)", async () => {
    const memory = new InMemoryLRUCache<string>();
    const first = await serve({ store: memory });
    const page = (url: string) => ask(url, { query: BETS, variables: { ids: IDS.slice(0, 5) } });
    const miss = await page(first.url);
    await first.close();
    for (const key of memory.keys()) if (key.startsWith("body:")) await memory.delete(key);
    // Another gateway: nothing decoded in its memory, a header in the store, its bytes gone.
    const second = await serve({ store: memory });
    try {
      const replies = [await page(second.url), await page(second.url)];
      expect(replies.map((r) => `${r.status} ${r.headers["x-cache"]}`)).toEqual(["200 MISS", "200 HIT"]);
      expect(replies[1]!.body.equals(miss.body)).toBe(true);
    } finally {
      await second.close();
    }
  });

  it("keeps one copy of an answer's bytes when a hit adds a compressed form", async () => {
    const memory = new InMemoryLRUCache<string>();
    const served = await serve({ store: memory });
    try {
      const page = (encoding: string) => ask(served.url, { query: BETS, variables: { ids: IDS.slice(0, 5) }, headers: { "accept-encoding": encoding } });
      const replies = [await page("identity"), await page("gzip"), await page("br"), await page("br")];
      expect(replies.map((r) => `${r.headers["x-cache"]} ${r.headers["content-encoding"] ?? "identity"}`)).toEqual([
        "MISS identity",
        "HIT gzip",
        "HIT br",
        "HIT br",
      ]);
      await new Promise((resolve) => setImmediate(resolve));
      expect(kindsOf(memory)).toEqual(["body", "head"]);
    } finally {
      await served.close();
    }
  });

  it("bounds the bytes it stores, not only the body: an entry (its header line and compressed copies) never exceeds maxEntryBytes", async () => {
    // Each write is its bytes, then the header that names them: their sizes summed per write.
    const stored: number[] = [];
    const store = recording((key, value) => {
      if (key.startsWith("body:")) stored.push(Buffer.byteLength(value));
      else stored[stored.length - 1]! += Buffer.byteLength(value);
    });
    const page = (encoding: string) => ({ query: BETS, variables: { ids: IDS.slice(0, 12) }, headers: { "accept-encoding": encoding } });
    const probe = await serve({});
    // Room for the body and its header line, not for every compressed copy beside them.
    const bound = (await ask(probe.url, page("identity")).finally(probe.close)).body.length + 700;
    const bounded = await serve({ store, bounds: { maxEntryBytes: bound } });
    for (const encoding of ["gzip", "br", "deflate"]) await ask(bounded.url, page(encoding));
    await bounded.close();
    expect(stored.length).toBeGreaterThan(0);
    expect(Math.max(...stored)).toBeLessThanOrEqual(bound);
  });

  it("writes an answer missed by many requests at once once, charging its client one new entry", async () => {
    const writes: string[] = [];
    const recorded = recording((key) => writes.push(key));
    // A store slow to answer: the six requests all miss before the first answer is written.
    const slowGet: ResponseCacheStore["get"] = async (key) => {
      const value = await recorded.get(key);
      await new Promise((resolve) => setTimeout(resolve, 30));
      return value;
    };
    const herd = await serve({ store: { ...recorded, get: slowGet }, bounds: { newEntriesPerMinute: 2 } });
    try {
      const page = (ids: string[]) => ask(herd.url, { query: BETS, variables: { ids } });
      const misses = await Promise.all(Array.from({ length: 6 }, () => page(IDS.slice(0, 7))));
      expect(misses.every((r) => r.status === 200)).toBe(true);
      expect(misses.map((r) => r.headers["x-cache"])).toEqual(Array(6).fill("MISS"));
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(writes.filter((key) => key.startsWith("head:"))).toHaveLength(1);
      // The herd took one of the client's two new entries: another answer is still stored.
      expect([(await page(["3"])).headers["x-cache"], (await page(["3"])).headers["x-cache"]]).toEqual(["MISS", "HIT"]);
    } finally {
      await herd.close();
    }
  });

  it("replays only what the store holds now: another write under the same key is decoded afresh", async () => {
    const memory = createMemoryResponseCacheStore({ maxEntries: 10, maxBytes: 1024 * 1024 });
    const written: string[] = [];
    const store = recording((key) => written.push(key), memory);
    const at = 1_700_000_000_000; // one computing time for both writes: only the write itself tells them apart
    let clock = at;
    const replay = createResponseReplay({ store, decisionFor: () => ({ cacheTime: at, maxAge: 3600, operation: null }), now: () => clock });
    const request = (): HTTPGraphQLRequest => ({ method: "POST", headers: new HeaderMap(), search: "", body: { query: BETS } });
    const storeAnswer = async (body: string) => {
      const miss = request();
      expect(await replay.answer(miss)).toBeUndefined();
      replay.answered?.(miss, { status: 200, headers: [["content-type", "application/json"]], body }, undefined, "graphql");
      await new Promise((resolve) => setImmediate(resolve));
    };
    const replayed = async () => (await replay.answer(request()))?.body.toString();

    const heads = () => written.filter((key) => key.startsWith("head:"));
    await storeAnswer('{"data":{"a":1}}');
    expect([await replayed(), await replayed()]).toEqual(['{"data":{"a":1}}', '{"data":{"a":1}}']);
    await memory.delete(heads()[0]!);
    clock += 2_000; // past the second in which a miss of a key just stored does not store it again
    await storeAnswer('{"data":{"a":2}}');
    expect(heads()).toHaveLength(2);
    expect(heads()[1]).toBe(heads()[0]);
    expect(await replayed()).toBe('{"data":{"a":2}}');
  });

  it("takes a store that throws for a miss", async () => {
    const replay = createResponseReplay({
      store: { get: () => Promise.reject(new Error("down")), set: () => Promise.reject(new Error("down")), delete: () => Promise.reject(new Error("down")) },
      decisionFor: () => undefined,
    });
    const request: HTTPGraphQLRequest = { method: "POST", headers: new HeaderMap(), search: "", body: { query: BETS } };
    await expect(replay.answer(request)).resolves.toBeUndefined();
  });

  it("keeps a hot answer's bytes as recent as its header in the store's LRU: a new answer evicts a cold one", async () => {
    const store = createMemoryResponseCacheStore({ maxEntries: 2, maxBytes: 1024 * 1024 });
    const one = gateway(store);
    await storeAnswer(one, ["A"], '{"data":"A"}');
    expect(await hit(one, ["A"])).toBe('{"data":"A"}');
    await storeAnswer(one, ["B"], '{"data":"B"}');
    // A is used again and again (from this gateway's memory): B is now the least recently used answer.
    for (let i = 0; i < 3; i++) expect(await hit(one, ["A"])).toBe('{"data":"A"}');
    await storeAnswer(one, ["C"], '{"data":"C"}');
    // Another gateway on the same store (a replica, or this one restarted) still finds A.
    expect(await hit(gateway(store), ["A"])).toBe('{"data":"A"}');
  });

  it("keeps touching a hot answer's bytes after the clock stepped back (an NTP step)", async () => {
    const store = createMemoryResponseCacheStore({ maxEntries: 2, maxBytes: 1024 * 1024 });
    let clock = at;
    const one = createResponseReplay({ store, decisionFor: () => ({ cacheTime: at, maxAge: 3600, operation: null }), now: () => clock });
    await storeAnswer(one, ["A"], '{"data":"A"}');
    expect([await hit(one, ["A"]), await hit(one, ["A"])]).toEqual(['{"data":"A"}', '{"data":"A"}']); // read, then touched
    clock -= 60_000;
    await storeAnswer(one, ["B"], '{"data":"B"}');
    for (let i = 0; i < 3; i++) expect(await hit(one, ["A"])).toBe('{"data":"A"}');
    await storeAnswer(one, ["C"], '{"data":"C"}');
    expect(await hit(gateway(store), ["A"])).toBe('{"data":"A"}');
  });

  it("compresses a form that does not fit in the entry once per gateway and write, not on every hit", async () => {
    const { store, reads: headReads } = countingReads("head:");
    const page = (encoding: string) => ({ query: BETS, variables: { ids: IDS.slice(0, 12) }, headers: { "accept-encoding": encoding } });
    // Room for the answer and its header (as an unbounded gateway stores them), not for a compressed form beside them.
    let entryBytes = 0;
    const probe = await serve({ store: recording((_key, value) => (entryBytes += Buffer.byteLength(value))) });
    await ask(probe.url, page("identity")).finally(probe.close);
    const served = await serve({ store, bounds: { maxEntryBytes: entryBytes + 16 } });
    try {
      expect((await ask(served.url, page("identity"))).headers["x-cache"]).toBe("MISS");
      const first = await ask(served.url, page("br")); // compressed for this hit; its form does not fit
      const reads: number[] = [];
      const again: Buffer[] = [];
      for (let i = 0; i < 3; i++) {
        headReads.count = 0;
        const reply = await ask(served.url, page("br"));
        await tick();
        expect([reply.headers["x-cache"], reply.headers["content-encoding"]]).toEqual(["HIT", "br"]);
        again.push(reply.body);
        reads.push(headReads.count);
      }
      expect(again.every((body) => body.equals(first.body))).toBe(true);
      // The hit's own read, and no second one: the remembered form is sent, nothing is rewritten.
      expect(reads).toEqual([1, 1, 1]);
    } finally {
      await served.close();
    }
  });

  it("leaves one copy of an answer in the store when two gateways add a compressed form to it at once", async () => {
    const memory = new InMemoryLRUCache<string>();
    const [a, b] = [gateway(memory), gateway(memory)];
    await storeAnswer(a, ["Y"], '{"data":"Y"}');
    const [onA, onB] = [(await a.answer(pageOf(["Y"])))!, (await b.answer(pageOf(["Y"])))!];
    const sent = (encoding: "gzip" | "br"): SentEncoding => ({ encoding, bytes: Buffer.from(encoding) });
    a.answered?.(pageOf(["Y"]), onA, sent("gzip"), "before");
    b.answered?.(pageOf(["Y"]), onB, sent("br"), "before");
    await tick();
    expect(kindsOf(memory)).toEqual(["body", "head"]);
    // Whichever write landed last, its header names its own bytes: a third gateway replays them.
    expect(await hit(gateway(memory), ["Y"])).toBe('{"data":"Y"}');
  });

  it("spends no new entry of the client on a write while the store is known to be away", async () => {
    let away = true;
    let clock = at;
    const memory = new InMemoryLRUCache<string>();
    const store: ResponseCacheStore = {
      get: (key) => memory.get(key),
      set: (key, value, options) => (away ? Promise.resolve() : memory.set(key, value, options)),
      delete: (key) => memory.delete(key),
      available: () => !away,
    };
    const replay = createResponseReplay({
      store,
      decisionFor: () => ({ cacheTime: at, maxAge: 3600, operation: null }),
      newEntries: createNewEntryBudget({ perMinute: 1, now: () => clock }),
      now: () => clock,
    });
    await storeAnswer(replay, ["Z"], '{"data":"Z"}'); // Redis away: nothing written, nothing spent
    away = false;
    clock += 2_000;
    await storeAnswer(replay, ["Z"], '{"data":"Z"}');
    expect(await hit(replay, ["Z"])).toBe('{"data":"Z"}');
  });

  it("stores an answer again after the wall clock stepped back (an NTP step): a lead never outlives its bound", async () => {
    const memory = new InMemoryLRUCache<string>();
    let clock = at;
    const computed: boolean[] = [];
    const replay = createResponseReplay({
      store: memory,
      decisionFor: () => ({ cacheTime: clock, maxAge: 60, operation: null }),
      onComputed: (stored) => computed.push(stored),
      now: () => clock,
    });
    /** A request: a hit (true), or a miss answered (false). */
    const request = async () => {
      const miss = pageOf(["1", "2"]);
      if (await replay.answer(miss)) return true;
      replay.answered?.(miss, { status: 200, headers: [["content-type", "application/json"]], body: '{"data":{}}' }, undefined, "graphql");
      await tick();
      return false;
    };
    expect(await request()).toBe(false);
    expect(computed).toEqual([true]);
    clock -= 60_000;
    for (const key of memory.keys()) await memory.delete(key); // expired or evicted
    // Misses while the clock is behind: one of them stores the answer again (then the rest are hits).
    for (let i = 0; i < 5; i++) {
      clock += 1_000;
      if (await request()) break;
    }
    expect(computed.slice(1)).toContain(true);
  });

  it("keeps no more decoded bytes than memoBytes once a hit decodes a compressed form", async () => {
    const { store, reads: bodyReads } = countingReads("body:");
    const body = JSON.stringify({ data: { x: "a".repeat(1_000) } });
    const gzip = Buffer.alloc(30_000, 7); // a stored form: 30 KB decoded, 40 KB base64
    // The first decoding (body, id line, base64 line) fits with 1 KB to spare; the decoded form does not.
    const memoBytes = body.length + 37 + JSON.stringify({ gzip: gzip.toString("base64") }).length + 1 + 1_000;
    const replay = createResponseReplay({ store, decisionFor: () => ({ cacheTime: at, maxAge: 3600, operation: null }), now: () => at, memoBytes });
    const miss = pageOf(["1", "2"]);
    expect(await replay.answer(miss)).toBeUndefined();
    replay.answered?.(miss, { status: 200, headers: [], body }, { encoding: "gzip", bytes: gzip }, "graphql");
    await tick();
    const first = await replay.answer(pageOf(["1", "2"]));
    expect(bodyReads.count).toBe(1);
    expect(first?.encoded?.("gzip")?.length).toBe(30_000);
    await replay.answer(pageOf(["1", "2"]));
    expect(bodyReads.count).toBe(2); // the memo let the grown decoding go, so the bytes are read again
  });

  it("never puts an older answer back over a newer one when a hit adds a compressed form", async () => {
    const memory = new InMemoryLRUCache<string>(); // shared by two gateways, as Redis is
    let clock = at;
    const gatewayOf = () => createResponseReplay({ store: memory, decisionFor: () => ({ cacheTime: clock, maxAge: 60, operation: null }), now: () => clock });
    const [p, q] = [gatewayOf(), gatewayOf()];
    const storeVia = async (replay: Replay, body: string) => {
      const miss = pageOf(["1", "2"]);
      expect(await replay.answer(miss)).toBeUndefined();
      replay.answered?.(miss, { status: 200, headers: [], body }, undefined, "graphql");
      await tick();
    };
    await storeVia(p, '{"data":{"v":"A"}}');
    clock += 5_000;
    const hitA = await p.answer(pageOf(["1", "2"])); // P replays A; its gzip form is not stored yet
    expect(hitA?.body.toString()).toContain('"A"');
    // Meanwhile the entry is evicted and gateway Q stores the newer answer B.
    for (const key of memory.keys()) await memory.delete(key);
    clock += 2_000;
    await storeVia(q, '{"data":{"v":"B"}}');
    p.answered?.(pageOf(["1", "2"]), hitA!, { encoding: "gzip", bytes: Buffer.from("gz") }, "before");
    await tick();
    await tick();
    clock += 1_000;
    expect((await gatewayOf().answer(pageOf(["1", "2"])))?.body.toString()).toContain('"B"');
  });
});
