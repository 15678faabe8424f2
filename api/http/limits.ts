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
  type Quota,
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

/** 429 RATE_LIMITED with Retry-After, in SPEC's words, and the quota of the bucket that refused. */
export class RateLimited extends Refusal<"RATE_LIMITED"> {
  constructor(
    wait: number,
    what: string,
    readonly quota: Quota | null,
  ) {
    super(
      "RATE_LIMITED",
      `too many ${what}; retry after the pause`,
      { retry_after_s: Math.ceil(wait) },
      {
        retryAfterS: wait,
      },
    );
  }
}
export const rateLimited = (wait: number, what: string, quota: Quota | null = null) =>
  new RateLimited(wait, what, quota);

/** Whole seconds as Retry-After states them (at least 1): RateLimit-Reset uses the same, so a 429's two agree. */
export const wholeSeconds = (s: number) => String(Math.max(1, Math.ceil(s)));

/**
 * RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset (the IETF httpapi draft's three fields;
 * beyond SPEC): one request spends several buckets (client, prefixes, overall, key, route), so
 * the headers show the tightest of them, the one with the fewest requests left, as the draft
 * asks. Reset is the seconds until that bucket holds one more request; on a 429, Retry-After.
 */
export function showQuota(c: Context<AppEnv>, q: Quota | null): void {
  if (!q) return;
  const shown = c.get("quota");
  if (shown && (shown.remaining < q.remaining || (shown.remaining === q.remaining && shown.resetS >= q.resetS))) return;
  c.set("quota", q);
  c.header("RateLimit-Limit", String(q.limit));
  c.header("RateLimit-Remaining", String(q.remaining));
  c.header("RateLimit-Reset", wholeSeconds(q.resetS));
}

/**
 * A 429's quota headers: the refusing bucket's (remaining 0, Reset as Retry-After). A 429 that no
 * bucket of this edge refused (a sign-up cap, the new-token screening budget) shows none, so the
 * headers never say requests remain beside a Retry-After.
 */
export function showRefusedQuota(c: Context<AppEnv>, err: Refusal): void {
  const q = err instanceof RateLimited ? err.quota : null;
  c.set("quota", undefined);
  if (q) showQuota(c, q);
  else for (const h of ["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"]) c.header(h, undefined);
}

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
    const { wait, quota } = await limiter.charge(buckets);
    if (wait > 0) throw rateLimited(wait, `requests (${takes[0]![0]})`, quota);
    showQuota(c, quota);
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
