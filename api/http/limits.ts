import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../deps.js";
import { Refusal } from "../errors/index.js";
import { PUBLIC_OVERALL, RATE_RULES, type BucketRule, type BucketTake, type Limiter } from "./rateLimit.js";

export type Scope = "client" | "key" | "overall";
/** One bucket of a route: a rule's name, its numbers, and what it is counted per. */
export type Take = [name: string, rule: BucketRule, scope: Scope];

const whoOf = (c: Context<AppEnv>, scope: Scope) => (scope === "client" ? c.get("clientAddr") : scope === "key" ? String(c.get("key")?.keyId ?? "none") : "*");

/** 429 RATE_LIMITED with Retry-After, in SPEC's words. */
export const rateLimited = (wait: number, what: string) => new Refusal("RATE_LIMITED", `too many ${what}; retry after the pause`, { retry_after_s: Math.ceil(wait) }, { retryAfterS: wait });

/**
 * A route's buckets (per client address, key id, or the whole service), spent together in one
 * call to the limiter (one Redis round trip when shared): all or none; past any, 429.
 */
export function limit(limiter: Limiter, ...takes: Take[]): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const buckets: BucketTake[] = takes.map(([name, rule, scope]) => ({ key: `${name}:${scope}:${whoOf(c, scope)}`, rule }));
    const wait = await limiter.spend(buckets);
    if (wait > 0) throw rateLimited(wait, `requests (${takes[0]![0]})`);
    await next();
  };
}

/** The unkeyed routes' limit (config, health, stats, treasury, league reads): per client address, and overall. */
export const publicLimit = (limiter: Limiter) => limit(limiter, ["public", RATE_RULES.public, "client"], ["public", PUBLIC_OVERALL, "overall"]);
