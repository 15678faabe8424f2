import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppEnv } from "./env.js";
import { onError } from "./errors.js";
import { limit } from "./limits.js";
import { RateLimiter, type Limiter } from "./rateLimit.js";
import { RedisLimiter } from "./redisLimiter.js";

const REDIS = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const prefix = `pit:test:${Math.random().toString(36).slice(2)}:`;
const a = new RedisLimiter(REDIS, prefix);
const b = new RedisLimiter(REDIS, prefix);
// Connected before the first spend: one sent while connecting is refused (fail closed).
beforeAll(async () => {
  expect(await a.ready(10_000)).toBe(true);
  expect(await b.ready(10_000)).toBe(true);
});
afterAll(async () => {
  await a.close();
  await b.close();
});

// A rule that refills too slowly to matter within a test.
const slow = { burst: 5, perSecond: 0.001 };

describe("RedisLimiter", () => {
  it("counts one bucket across instances: its burst, then the wait for one token", async () => {
    const spent: number[] = [];
    for (let i = 0; i < 7; i++) spent.push(await (i % 2 ? a : b).spend([{ key: "k1", rule: slow }]));
    expect(spent.slice(0, 5)).toEqual([0, 0, 0, 0, 0]);
    // Empty: one token comes back after (1 - what is left) / rate seconds, about 1,000 s here.
    expect(spent[5]).toBeGreaterThan(990);
    expect(spent[5]).toBeLessThanOrEqual(1000);
    expect(await a.wait("k1", slow)).toBeGreaterThan(990);
  });

  it("spends all of a request's buckets or none", async () => {
    for (let i = 0; i < 5; i++) await a.spend([{ key: "empty", rule: slow }]);
    expect(
      await a.spend([
        { key: "full", rule: slow },
        { key: "empty", rule: slow },
      ]),
    ).toBeGreaterThan(0);
    // The refused request took nothing from the full bucket: all five are still there.
    for (let i = 0; i < 5; i++) expect(await b.spend([{ key: "full", rule: slow }])).toBe(0);
    expect(await b.spend([{ key: "full", rule: slow }])).toBeGreaterThan(0);
  });

  it("refills at the rule's rate", async () => {
    // One token a second: the three spends below must land within one refill, which a loaded
    // machine did not always manage at 20 a second (the third spend then found a fresh token).
    const fast = { burst: 2, perSecond: 1 };
    expect(await a.spend([{ key: "fast", rule: fast }])).toBe(0);
    expect(await a.spend([{ key: "fast", rule: fast }])).toBe(0);
    const wait = await a.spend([{ key: "fast", rule: fast }]);
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(1);
    await new Promise((r) => setTimeout(r, 1_100));
    expect(await a.spend([{ key: "fast", rule: fast }])).toBe(0);
  });

  it("fails closed with 503 ENGINE_UNAVAILABLE when Redis does not answer", async () => {
    const dead = new RedisLimiter("redis://127.0.0.1:1", prefix);
    await expect(dead.spend([{ key: "x", rule: slow }])).rejects.toMatchObject({
      code: "ENGINE_UNAVAILABLE",
      retryAfterS: 2,
    });
    await dead.close();
  });

  it("sends the same RateLimit headers as the in-memory limiter, and the same quota for several buckets", async () => {
    const headers = async (limiter: Limiter) => {
      const app = new Hono<AppEnv>();
      app.use("*", async (c, next) => {
        c.set("clientAddr", "192.0.2.9");
        await next();
      });
      app.get("/r", limit(limiter, ["h", { burst: 3, perSecond: 0.01 }, "client"]), (c) => c.json({}));
      app.onError(onError);
      const seen: (string | number | null)[][] = [];
      for (let i = 0; i < 5; i++) {
        const r = await app.request("/r");
        const h = (n: string) => r.headers.get(n);
        seen.push([r.status, h("ratelimit-limit"), h("ratelimit-remaining"), h("ratelimit-reset"), h("retry-after")]);
      }
      return seen;
    };
    const shared = await headers(a);
    expect(shared).toEqual(await headers(new RateLimiter(() => 0)));
    expect(shared.at(-1)).toEqual([429, "3", "0", "100", "100"]);
    const two = [
      { key: "q1", rule: { burst: 5, perSecond: 0.001 } },
      { key: "q2", rule: { burst: 2, perSecond: 0.001 } },
    ];
    const memory = new RateLimiter(() => 0);
    for (let i = 0; i < 3; i++) {
      const [r, m] = [await b.charge(two), await memory.charge(two)];
      expect([r.wait > 0, r.quota?.limit, r.quota?.remaining]).toEqual([
        m.wait > 0,
        m.quota?.limit,
        m.quota?.remaining,
      ]);
      expect(Math.abs(r.quota!.resetS - m.quota!.resetS)).toBeLessThan(1);
    }
  });
});
