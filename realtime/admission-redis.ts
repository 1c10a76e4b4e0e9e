// The cluster's sockets per client address, in Redis, for admission (admission.ts). Per address one
// hash `<prefix>admission:addr:<address>`: node id → that node's sockets for the address. Each node
// keeps `<prefix>admission:node:<id>` alive (a key with a TTL it renews); a sum skips, and deletes,
// the entries of nodes whose key has expired, so a node that died without cleaning up stops
// counting after at most `ttlMs`. Every write is an absolute count that this node mirrors from its
// own, and the renewal rewrites them all, so a write lost while Redis was away is repaired.
//
// Commands go through a GuardedRedis: each has a deadline, and while Redis is away they fail at
// once; admission then falls back on the node's own bounds (fail safe, never unlimited).
import type { Redis } from "ioredis";
import type { Logger } from "../core/logger.ts";
import type { GuardedRedis } from "../core/redis.ts";
import type { ClusterSocketCounter } from "./admission.ts";

// KEYS[1] the address's hash. ARGV: node id, this node's count with the new socket, max, hash TTL ms,
// node key prefix. Reads other nodes' liveness keys by name (one Redis, not Redis Cluster).
const ADMIT_SCRIPT = `
local fields = redis.call('HGETALL', KEYS[1])
local others = 0
for i = 1, #fields, 2 do
  local node = fields[i]
  if node ~= ARGV[1] then
    if redis.call('EXISTS', ARGV[5] .. node) == 1 then
      others = others + tonumber(fields[i + 1])
    else
      redis.call('HDEL', KEYS[1], node)
    end
  end
end
if others + tonumber(ARGV[2]) > tonumber(ARGV[3]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1`;

export interface RedisSocketCounterOptions {
  redis: GuardedRedis;
  /** Key prefix (the deployment's REALTIME_REDIS_PREFIX). */
  prefix: string;
  /** This node's id, unique in the cluster. */
  nodeId: string;
  logger: Logger;
  /** How long a silent node's counts still count (default 30 s); renewed every third of it. */
  ttlMs?: number;
  /** This node's count per address now (the renewal rewrites them). */
  counts: () => ReadonlyMap<string, number>;
}

export function createRedisSocketCounter(options: RedisSocketCounterOptions): ClusterSocketCounter {
  const ttlMs = options.ttlMs ?? 30_000;
  const nodePrefix = `${options.prefix}admission:node:`;
  const hashOf = (address: string) => `${options.prefix}admission:addr:${address}`;
  const nodeKey = `${nodePrefix}${options.nodeId}`;
  const { redis, nodeId } = options;
  let closed = false;

  const write = async (client: Redis, address: string, local: number): Promise<void> => {
    if (local > 0) await client.multi().hset(hashOf(address), nodeId, local).pexpire(hashOf(address), ttlMs).exec();
    else await client.hdel(hashOf(address), nodeId);
  };

  // Whether this node's key is known to be in Redis: until then (and after any failure: it may
  // have expired meanwhile) an admission renews it first.
  let present = false;
  const renew = async () => {
    try {
      await redis.run(async (client) => {
        const batch = client.multi().set(nodeKey, "1", "PX", ttlMs);
        for (const [address, local] of options.counts()) batch.hset(hashOf(address), nodeId, local).pexpire(hashOf(address), ttlMs);
        await batch.exec();
      });
      present = true;
    } catch (error) {
      present = false;
      throw error;
    }
  };
  let renewing = renew().catch(() => undefined);
  const timer = setInterval(() => {
    renewing = renewing.then(() => renew().catch(() => undefined));
  }, ttlMs / 3);
  timer.unref();

  return {
    async admit(address, local, max) {
      await renewing;
      if (!present) await renew(); // this node counts (its key exists) before it admits anyone
      try {
        return (await redis.run((client) => client.eval(ADMIT_SCRIPT, 1, hashOf(address), nodeId, local, max, ttlMs, nodePrefix))) === 1;
      } catch (error) {
        present = false;
        throw error;
      }
    },
    record(address, local) {
      if (closed) return;
      redis.run((client) => write(client, address, local)).catch(() => undefined); // repaired by the next renewal
    },
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      await renewing;
      const addresses = [...options.counts().keys()];
      await redis
        .run(async (client) => {
          const batch = client.multi().del(nodeKey);
          for (const address of addresses) batch.hdel(hashOf(address), nodeId);
          await batch.exec();
        })
        .catch((error: unknown) =>
          options.logger.warn({ err: error instanceof Error ? error.message : String(error) }, "admission: could not clear this node's counts"),
        );
    },
  };
}
