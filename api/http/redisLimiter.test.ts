import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
    const fast = { burst: 2, perSecond: 20 };
    expect(await a.spend([{ key: "fast", rule: fast }])).toBe(0);
    expect(await a.spend([{ key: "fast", rule: fast }])).toBe(0);
    const wait = await a.spend([{ key: "fast", rule: fast }]);
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(0.05);
    await new Promise((r) => setTimeout(r, 120));
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
});
