import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../deps.js";
import { ApiError } from "../errors.js";
import { RATE_RULES, type RateLimiter } from "../rateLimit.js";
import { LRUCache } from "lru-cache";
import { assertNotSanctioned, authenticate, type SignInDeps } from "../signin.js";

/**
 * `Authorization: Bearer <api_key>`: 401 UNAUTHORIZED for no, unknown, expired or revoked keys.
 * Failed attempts drain the client address's failed-authentication bucket (then 429); a good
 * key spends from its own bucket (30, then 10 per second).
 */
export function requireKey(deps: Pick<SignInDeps, "db" | "clock">, limiter: RateLimiter): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const failKey = `failedAuth:client:${c.get("clientAddr")}`;
    const locked = limiter.peek(failKey, RATE_RULES.failedAuth);
    if (locked > 0) throw new ApiError(429, "RATE_LIMITED", "too many failed authentications from this address", { retry_after_s: Math.ceil(locked) }, locked);
    const header = c.req.header("authorization") ?? "";
    const m = /^Bearer ([A-Za-z0-9_\-]{1,200})$/.exec(header);
    const key = m ? await authenticate(deps, m[1]!) : null;
    if (!key) {
      limiter.take(failKey, RATE_RULES.failedAuth);
      throw new ApiError(401, "UNAUTHORIZED", header ? "unknown, expired or revoked API key" : "send Authorization: Bearer <api_key>");
    }
    c.set("key", key);
    const wait = limiter.take(`key:key:${key.keyId}`, RATE_RULES.key);
    if (wait > 0) throw new ApiError(429, "RATE_LIMITED", "too many requests for this key", { retry_after_s: Math.ceil(wait) }, wait);
    await next();
  };
}

/**
 * 451 SANCTIONED when the key's wallet is on the sanctions list (a clean answer is trusted 60 s;
 * an unreadable list fails closed). Routes that let a sanctioned key end what it started (revoke)
 * leave it out.
 */
export function keyWalletNotSanctioned(deps: Pick<SignInDeps, "chain" | "config">): MiddlewareHandler<AppEnv> {
  const clean = new LRUCache<string, true>({ max: 10_000, ttl: 60_000 });
  return async (c, next) => {
    const wallet = c.get("key").wallet;
    if (!clean.get(wallet)) {
      await assertNotSanctioned(deps, wallet, "wallet");
      clean.set(wallet, true);
    }
    await next();
  };
}
