import { LRUCache } from "lru-cache";
import { describe, expect, it } from "vitest";
import { onClock, upTo } from "./cacheClock.js";

describe("upTo: a cache bounded by entries whose storage grows", () => {
  it("holds at most the given entries, the least recently used leaving first", () => {
    const cache = new LRUCache<string, number>({ ...upTo(2) });
    cache.set("a", 1);
    cache.set("b", 2);
    cache.get("a");
    cache.set("c", 3);
    expect([...cache.keys()].sort()).toEqual(["a", "c"]);
    expect(cache.size).toBe(2);
  });

  it("keeps the bound for fetched entries on a clock's ttl", async () => {
    let now = 1_000_000;
    const cache = new LRUCache<string, string>({
      ...upTo(3),
      ttl: 1_000,
      ...onClock(() => now),
      fetchMethod: async (key) => `v-${key}`,
    });
    for (const key of ["a", "b", "c", "d", "e"]) expect(await cache.fetch(key)).toBe(`v-${key}`);
    expect([...cache.keys()].sort()).toEqual(["c", "d", "e"]);
    now += 1_001;
    expect(cache.get("e")).toBeUndefined();
  });
});
