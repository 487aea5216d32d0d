/**
 * The local Redis the BullMQ rows use (`REDIS_URL`, default redis://127.0.0.1:6379): each measurement's keys
 * live under a prefix of their own and are deleted afterwards; the server's CPU time for the CPU-per-job
 * columns. Redis is a CI service like PostgreSQL: when it is down, the BullMQ rows fail (INVALID), loudly.
 */
import { Redis } from "ioredis";

export const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

async function withRedis<T>(fn: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  redis.on("error", () => {}); // the command that needed it rejects with the same error
  await redis.connect();
  try {
    return await fn(redis);
  } finally {
    redis.disconnect();
  }
}

/** Deletes every key under `prefix:` (SCAN, then DEL in batches). */
export async function deleteRedisPrefix(prefix: string): Promise<void> {
  await withRedis(async (redis) => {
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
      if (keys.length > 0) await redis.unlink(...keys);
      cursor = next;
    } while (cursor !== "0");
  });
}

/** The Redis server's CPU seconds so far (user + system, every thread), from INFO cpu. */
export async function redisCpuSeconds(): Promise<number> {
  const info = await withRedis((redis) => redis.info("cpu"));
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, "m").exec(info)?.[1]);
  return field("used_cpu_user") + field("used_cpu_sys");
}
