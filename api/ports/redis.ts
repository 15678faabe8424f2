import { Redis } from "ioredis";

/** A short answer or none: a Redis that does not answer fails the request closed, fast. */
export const REDIS_COMMAND_TIMEOUT_MS = 500;

/**
 * A Redis connection for limits shared across instances: commands time out after 500 ms and are
 * not queued while disconnected (callers fail closed); ioredis reconnects on its own.
 */
export function redisConnection(url: string): Redis {
  const redis = new Redis(url, {
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
  });
  redis.on("error", () => {}); // reported per command
  return redis;
}

/**
 * Waits (at most `ms`) for the connection to be ready: with no offline queue a command sent while
 * (re)connecting fails at once, which at start-up would refuse the first requests for nothing.
 */
export async function whenReady(redis: Redis, ms = REDIS_COMMAND_TIMEOUT_MS): Promise<void> {
  if (redis.status === "ready") return;
  await new Promise<void>((resolve) => {
    const done = () => (clearTimeout(t), redis.off("ready", done), resolve());
    const t = setTimeout(done, ms);
    redis.once("ready", done);
  });
}
