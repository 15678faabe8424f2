import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { Refusal } from "../errors/index.js";
import type { AppEnv } from "./env.js";
import { onError } from "./errors.js";
import { limit } from "./limits.js";
import { RateLimiter, type Limiter } from "./rateLimit.js";

const slow = { burst: 3, perSecond: 0.1 };
const roomy = { burst: 100, perSecond: 10 };

/** A route behind a client bucket (3, then one per 10 s) and a roomier overall one, as the edge mounts them. */
function limitedApp(limiter: Limiter) {
  const app = new Hono<AppEnv>();
  app.use("*", async (c, next) => {
    c.set("clientAddr", "192.0.2.7");
    await next();
  });
  app.get("/r", limit(limiter, ["t", slow, "client"], ["t", roomy, "overall"]), (c) => c.json({ ok: true }));
  app.get("/capped", limit(limiter, ["c", roomy, "client"]), () => {
    throw new Refusal("SIGNUP_CAPPED", "capped", {}, { retryAfterS: 3600 });
  });
  app.onError(onError);
  return app;
}

/** Status and the rate headers of each request in turn. */
async function headersOf(app: Hono<AppEnv>, path: string, n: number) {
  const seen: (string | number | null)[][] = [];
  for (let i = 0; i < n; i++) {
    const r = await app.request(path);
    const h = (name: string) => r.headers.get(name);
    seen.push([r.status, h("ratelimit-limit"), h("ratelimit-remaining"), h("ratelimit-reset"), h("retry-after")]);
  }
  return seen;
}

describe("RateLimit headers (issue 30)", () => {
  it("show the tightest bucket, decreasing, then the 429 with Reset equal to Retry-After", async () => {
    let now = 1_000_000;
    const app = limitedApp(new RateLimiter(() => now));
    expect(await headersOf(app, "/r", 5)).toEqual([
      [200, "3", "2", "10", null],
      [200, "3", "1", "10", null],
      [200, "3", "0", "10", null],
      [429, "3", "0", "10", "10"],
      [429, "3", "0", "10", "10"],
    ]);
    now += 4_000; // 0.4 of a token back: 6 s to the next
    expect(await headersOf(app, "/r", 1)).toEqual([[429, "3", "0", "6", "6"]]);
    now += 6_000;
    expect(await headersOf(app, "/r", 2)).toEqual([
      [200, "3", "0", "10", null],
      [429, "3", "0", "10", "10"],
    ]);
  });

  it("show none on a 429 no bucket refused (a cap's Retry-After is hours), and none with limits off", async () => {
    const capped = await headersOf(limitedApp(new RateLimiter(() => 0)), "/capped", 1);
    expect(capped).toEqual([[429, null, null, null, "3600"]]);
    const off = await headersOf(limitedApp(new RateLimiter(() => 0, 100, false)), "/r", 4);
    expect(off.map((x) => x.slice(0, 4))).toEqual(Array(4).fill([200, null, null, null]));
  });
});
