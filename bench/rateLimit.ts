/**
 * Issue 12: what the rate limiter costs a request, in memory (the embedded default) and in Redis
 * (REDIS_URL, shared by instances). A keyed live route spends twice (the key's bucket in
 * requireKey, then the route's); a public route once (its client and overall buckets together).
 * `--only=rate-limit`.
 */
import { RateLimiter, type BucketRule, type Limiter } from "../api/http/rateLimit.js";
import { RedisLimiter } from "../api/http/redisLimiter.js";
import { summarize, type Row } from "./stats.js";

const roomy: BucketRule = { burst: 1e9, perSecond: 1e6 };

async function perRequest(limiter: Limiter, spends: number, requests: number): Promise<number[]> {
  const samples: number[] = [];
  for (let i = -500; i < requests; i++) {
    const key = `k${i % 1000}`;
    const t0 = performance.now();
    for (let s = 0; s < spends; s++)
      await limiter.spend(
        s === 0
          ? [{ key: `key:key:${key}`, rule: roomy }]
          : [
              { key: `route${s}:key:${key}`, rule: roomy },
              { key: "route:overall:*", rule: roomy },
            ],
      );
    if (i >= 0) samples.push((performance.now() - t0) * 1000);
  }
  return samples;
}

export async function benchRateLimit(opts: { requests: number; redisUrl?: string }): Promise<Row[]> {
  const redisUrl = opts.redisUrl ?? process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
  const memory = new RateLimiter();
  const redis = new RedisLimiter(redisUrl, `pit:bench:${Date.now()}:`);
  try {
    return [
      summarize(
        "rate limit, in memory: keyed route (2 spends)",
        await perRequest(memory, 2, opts.requests),
        "µs per request",
      ),
      summarize(
        "rate limit, Redis: keyed route (2 spends, 3 buckets)",
        await perRequest(redis, 2, opts.requests),
        "µs per request",
      ),
      summarize(
        "rate limit, Redis: public route (1 spend, 2 buckets)",
        await perRequest(redis, 1, opts.requests),
        "µs per request",
      ),
    ];
  } finally {
    await redis.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { table } = await import("./stats.js");
  console.log(table(await benchRateLimit({ requests: 5_000 })));
}
