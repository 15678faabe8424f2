import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../deps.js";
import { ApiError } from "../errors.js";
import type { BucketRule, RateLimiter } from "../rateLimit.js";

export type Scope = "client" | "key" | "overall";

/**
 * One token bucket per scope value (client address, key id, or the whole instance) for a named
 * rule; past it 429 RATE_LIMITED with Retry-After. Several can be stacked on a route.
 */
export function limit(limiter: RateLimiter, name: string, rule: BucketRule, scope: Scope): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const who = scope === "client" ? c.get("clientAddr") : scope === "key" ? String(c.get("key")?.keyId ?? "none") : "*";
    const wait = limiter.take(`${name}:${scope}:${who}`, rule);
    if (wait > 0) throw new ApiError(429, "RATE_LIMITED", `too many requests (${name}); retry after the pause`, { retry_after_s: Math.ceil(wait) }, wait);
    await next();
  };
}
