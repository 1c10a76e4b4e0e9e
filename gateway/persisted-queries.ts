// The automatic persisted queries' store, shared by every gateway replica through Redis: a hash
// registered through one gateway (hash and query text sent once) is known to the others, so a
// hash-only GET — the CDN-friendly form — answers behind any of them (docs/reference/graphql.md).
//
// Bounded: at most `maxEntries` queries (the oldest registrations go first, in one Lua script with
// the registration itself), each kept `ttlSeconds` and at most `maxQueryBytes` long (a longer text
// is answered but never stored). Redis away (GuardedRedis): reads miss and writes are dropped, so a
// client sends its query text, as after any miss; a request never waits on Redis beyond its deadline.
import type { KeyValueCache } from "@apollo/utils.keyvaluecache";
import type { GuardedRedis } from "../core/redis.ts";
import type { Logger } from "../core/logger.ts";

export interface PersistedQueryBounds {
  maxEntries: number;
  ttlSeconds: number;
  maxQueryBytes: number;
}

// KEYS[1]: the entry, KEYS[2]: the index of entries by registration time.
// ARGV: query text, ttl seconds, now (ms), max entries.
const REGISTER = `
redis.call('SET', KEYS[1], ARGV[1], 'EX', tonumber(ARGV[2]))
redis.call('ZADD', KEYS[2], tonumber(ARGV[3]), KEYS[1])
local excess = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[4])
if excess > 0 then
  local oldest = redis.call('ZRANGE', KEYS[2], 0, excess - 1)
  for _, key in ipairs(oldest) do redis.call('DEL', key) end
  redis.call('ZREMRANGEBYRANK', KEYS[2], 0, excess - 1)
end
return 0`;

export function createRedisPersistedQueryStore(redis: GuardedRedis, options: PersistedQueryBounds & { prefix: string; logger: Logger }): KeyValueCache<string> {
  const index = `${options.prefix}index`;
  const keyOf = (key: string) => `${options.prefix}q:${key}`;
  const tolerate = (operation: string) => (error: unknown) => {
    options.logger.warn({ err: error, operation }, "persisted query store unavailable: clients send the query text");
    return undefined;
  };
  return {
    async get(key) {
      const found = await redis.run((client) => client.get(keyOf(key))).catch(tolerate("get"));
      return found ?? undefined;
    },
    async set(key, value) {
      if (Buffer.byteLength(value) > options.maxQueryBytes) return;
      await redis
        .run((client) => client.eval(REGISTER, 2, keyOf(key), index, value, String(options.ttlSeconds), String(Date.now()), String(options.maxEntries)))
        .catch(tolerate("set"));
    },
    async delete(key) {
      await redis.run((client) => client.multi().del(keyOf(key)).zrem(index, keyOf(key)).exec()).catch(tolerate("delete"));
      return true;
    },
  };
}
