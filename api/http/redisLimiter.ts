import type { Redis } from "ioredis";
import { redisConnection, whenReady } from "../ports/redis.js";
import { Refusal } from "../errors/index.js";
import type { BucketRule, BucketTake, Limiter, Spent } from "./rateLimit.js";

/**
 * Token buckets for every instance at once, in one Lua script per request: each bucket refilled
 * at its rate since it was last touched (Redis TIME, so instances agree on the clock), then one
 * token taken from every bucket, or from none when any is empty (a refused request spends
 * nothing). `peek` (ARGV[1] = 1) only reads and answers the wait. A spend answers
 * "wait limit remaining reset": the quota of rateLimit.ts's quotaOf, computed the same way.
 * Buckets expire once they would be full again.
 */
const BUCKETS = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local peek = ARGV[1] == '1'
local tokens = {}
local wait = 0
local worst = 0
for i = 1, #KEYS do
  local burst = tonumber(ARGV[2 * i]); local rate = tonumber(ARGV[2 * i + 1])
  local b = redis.call('HMGET', KEYS[i], 't', 'at')
  local have = tonumber(b[1]); local at = tonumber(b[2])
  if have == nil then have = burst; at = now end
  have = math.min(burst, have + math.max(0, now - at) / 1000 * rate)
  tokens[i] = have
  if have < 1 and (1 - have) / rate > wait then wait = (1 - have) / rate; worst = i end
end
if peek then return tostring(wait) end
if wait > 0 then return tostring(wait) .. ' ' .. ARGV[2 * worst] .. ' 0 ' .. tostring(wait) end
local rem = nil; local reset = 0
for i = 1, #KEYS do
  local burst = tonumber(ARGV[2 * i]); local rate = tonumber(ARGV[2 * i + 1])
  local left = tokens[i] - 1
  local r = math.floor(left); local s = (r + 1 - left) / rate
  if rem == nil or r < rem or (r == rem and s > reset) then rem = r; reset = s; worst = i end
  redis.call('HSET', KEYS[i], 't', tostring(left), 'at', now)
  redis.call('PEXPIRE', KEYS[i], math.ceil(burst / rate * 1000) + 1000)
end
return '0 ' .. ARGV[2 * worst] .. ' ' .. tostring(rem) .. ' ' .. tostring(reset)
`;

type Scripted = Redis & { buckets(n: number, ...args: (string | number)[]): Promise<string> };

/**
 * The shared limiter. When Redis does not answer, requests fail closed with 503
 * ENGINE_UNAVAILABLE (Retry-After 2): an unlimited money-moving route is worse than a short
 * refusal, and a per-instance fallback would quietly multiply every limit by the instance count.
 */
export class RedisLimiter implements Limiter {
  private readonly redis: Scripted;

  constructor(
    url: string,
    private readonly prefix = "pit:rl:",
    readonly enabled = true,
  ) {
    this.redis = redisConnection(url) as Scripted;
    this.redis.defineCommand("buckets", { lua: BUCKETS });
  }

  async spend(buckets: BucketTake[]): Promise<number> {
    return (await this.charge(buckets)).wait;
  }

  async charge(buckets: BucketTake[]): Promise<Spent> {
    if (!this.enabled || buckets.length === 0) return { wait: 0, quota: null };
    const [wait, limit, remaining, resetS] = (await this.run("0", buckets)).split(" ").map(Number) as number[];
    return { wait: wait!, quota: { limit: limit!, remaining: remaining!, resetS: resetS! } };
  }

  async wait(key: string, rule: BucketRule): Promise<number> {
    if (!this.enabled) return 0;
    return Number(await this.run("1", [{ key, rule }]));
  }

  /** Until the connection is up (at most `ms`): a caller that must not meet start-up's 503s waits here first. */
  async ready(ms: number): Promise<boolean> {
    await whenReady(this.redis, ms);
    return this.redis.status === "ready";
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }

  private async run(peek: "0" | "1", buckets: BucketTake[]): Promise<string> {
    const keys = buckets.map((b) => this.prefix + b.key);
    const args = buckets.flatMap((b) => [b.rule.burst, b.rule.perSecond]);
    try {
      await whenReady(this.redis);
      return await this.redis.buckets(keys.length, ...keys, peek, ...args);
    } catch (err) {
      throw new Refusal(
        "ENGINE_UNAVAILABLE",
        "the rate limiter's store did not answer; try again shortly",
        {},
        { cause: err, retryAfterS: 2 },
      );
    }
  }
}
