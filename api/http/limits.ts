import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "./env.js";
import { Refusal } from "../errors/index.js";
import {
  MCP_OVERALL,
  PREFIX_SCALE,
  PUBLIC_OVERALL,
  RATE_RULES,
  scaled,
  type BucketRule,
  type BucketTake,
  type Limiter,
} from "./rateLimit.js";
import { clientPrefixesOf } from "../../lib/netAddress.js";

export type Scope = "client" | "key" | "overall";
/** One bucket of a route: a rule's name, its numbers, and what it is counted per. */
export type Take = [name: string, rule: BucketRule, scope: Scope];

const whoOf = (c: Context<AppEnv>, scope: Scope) =>
  scope === "client" ? c.get("clientAddr") : scope === "key" ? String(c.get("key")?.keyId ?? "none") : "*";

/**
 * A per-client bucket's takes: the client's own (SPEC's numbers) and, for an IPv6 /64, its /56
 * and /48 at PREFIX_SCALE times them, so a whole prefix counts together.
 */
export function clientBuckets(name: string, rule: BucketRule, clientAddr: string): BucketTake[] {
  return [
    { key: `${name}:client:${clientAddr}`, rule },
    ...clientPrefixesOf(clientAddr).map((p) => ({
      key: `${name}:client${p.bits}:${p.key}`,
      rule: scaled(rule, PREFIX_SCALE[p.bits]),
    })),
  ];
}

/** 429 RATE_LIMITED with Retry-After, in SPEC's words. */
export const rateLimited = (wait: number, what: string) =>
  new Refusal(
    "RATE_LIMITED",
    `too many ${what}; retry after the pause`,
    { retry_after_s: Math.ceil(wait) },
    { retryAfterS: wait },
  );

/**
 * A route's buckets (per client address and its prefixes, key id, or the whole service), spent
 * together in one call to the limiter (one Redis round trip when shared): all or none; past any,
 * 429. So a request a client's or prefix's bucket refuses spends nothing, the instance-wide
 * bucket included: refused requests cannot drain it for everyone.
 */
export function limit(limiter: Limiter, ...takes: Take[]): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const buckets: BucketTake[] = takes.flatMap(([name, rule, scope]) =>
      scope === "client"
        ? clientBuckets(name, rule, c.get("clientAddr"))
        : [{ key: `${name}:${scope}:${whoOf(c, scope)}`, rule }],
    );
    const wait = await limiter.spend(buckets);
    if (wait > 0) throw rateLimited(wait, `requests (${takes[0]![0]})`);
    await next();
  };
}

/**
 * The unkeyed routes' buckets (config, health, stats, treasury, league reads, openapi.json): per client address, and
 * overall.
 */
export const PUBLIC: Take[] = [
  ["public", RATE_RULES.public, "client"],
  ["public", PUBLIC_OVERALL, "overall"],
];
export const publicLimit = (limiter: Limiter) => limit(limiter, ...PUBLIC);

/** POST /mcp's own limit (RATE_RULES.mcp): per client address, and overall. */
export const mcpLimit = (limiter: Limiter) =>
  limit(limiter, ["mcp", RATE_RULES.mcp, "client"], ["mcp", MCP_OVERALL, "overall"]);
