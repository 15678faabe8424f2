import { upTo } from "../../lib/cacheClock.js";
import { LRUCache } from "lru-cache";

/** A token bucket: `burst` tokens, refilled at `perSecond`. */
export type BucketRule = { burst: number; perSecond: number };

/**
 * SPEC.md "Rate limits" (numbers may change; clients honour Retry-After). Scopes: per client
 * address, per key, and overall (one bucket for the whole instance). Every route spends a bucket
 * before its own work (test/e2e/routeLimits.test.ts walks app.routes): an unkeyed route its rule's
 * (public, auth, mcp), per client and overall; a keyed route the key's own (30, then 10 per second)
 * once the key is known, and a request whose key fails the address's failedAuth bucket instead.
 */
export const RATE_RULES = {
  public: { burst: 60, perSecond: 2 },
  auth: { burst: 10, perSecond: 0.1 },
  key: { burst: 30, perSecond: 10 },
  failedAuth: { burst: 20, perSecond: 0.2 },
  liveQuote: { burst: 6, perSecond: 0.5 },
  livePrepare: { burst: 20, perSecond: 4 },
  /** live/fast with simulation or check_only; without simulation only the key's own bucket. */
  liveFast: { burst: 20, perSecond: 4 },
  tokenScreen: { burst: 20, perSecond: 0.5 },
  tokenScreenClient: { burst: 40, perSecond: 1 },
  tokenSearch: { burst: 30, perSecond: 2 },
  tokenSearchClient: { burst: 40, perSecond: 1 },
  hostedClient: { burst: 60, perSecond: 5 },
  hostedKey: { burst: 20, perSecond: 2 },
  meList: { burst: 20, perSecond: 2 },
  portfolio: { burst: 6, perSecond: 0.5 },
  /** league/practice/order (beyond SPEC's table): a paper order asks the quoter once, as a hosted tick's order does. */
  leaguePractice: { burst: 20, perSecond: 2 },
  /**
   * POST /mcp itself (initialize, tools/list, a bad JSON-RPC call): SPEC's public numbers, per
   * client address and overall (MCP_OVERALL), in a bucket of its own so an MCP session does not
   * eat its client's config/health budget. A tools/call also re-enters its REST route as the
   * caller, which spends that route's buckets (key, live/quote, ...) on top: one tool call is one
   * /mcp token plus what the same REST call costs.
   */
  mcp: { burst: 60, perSecond: 2 },
} as const satisfies Record<string, BucketRule>;

/**
 * SPEC.md gives "client address, and overall" one line of numbers. Read literally, one busy
 * client would shut config, health and sign-in for everyone, so the overall buckets are the
 * per-client numbers times 100: a ceiling for the instance, not a second per-client limit.
 */
export const PUBLIC_OVERALL: BucketRule = {
  burst: RATE_RULES.public.burst * 100,
  perSecond: RATE_RULES.public.perSecond * 100,
};
export const MCP_OVERALL: BucketRule = { burst: RATE_RULES.mcp.burst * 100, perSecond: RATE_RULES.mcp.perSecond * 100 };
export const AUTH_OVERALL: BucketRule = {
  burst: RATE_RULES.auth.burst * 100,
  perSecond: RATE_RULES.auth.perSecond * 100,
};

/**
 * An IPv6 client is its /64 with SPEC's per-client numbers; every per-client bucket is also kept
 * for the client's /56 at 10× and its /48 at 40× those numbers (lib/netAddress clientPrefixesOf).
 * One subscriber's whole prefix then counts together: a /56 home line rotating its 256 /64s gets
 * 10 clients' worth, not 256, and so cannot empty an instance-wide bucket (100×) on its own.
 * 10×: a /56 commonly holds a household's or small office's few devices; 40×: a /48 is a site.
 */
export const PREFIX_SCALE = { 56: 10, 48: 40 } as const;
export const scaled = (rule: BucketRule, by: number): BucketRule => ({
  burst: rule.burst * by,
  perSecond: rule.perSecond * by,
});

type Bucket = { tokens: number; at: number };

/** One bucket a request spends from: its key (rule name, scope, who) and its rule. */
export type BucketTake = { key: string; rule: BucketRule };

/**
 * What the tightest of a spend's buckets still allows, for the RateLimit-Limit, -Remaining and
 * -Reset headers: its burst, the whole tokens left, and the seconds until it holds one more (a
 * token bucket refills steadily, not per window; so on a 429 this is the Retry-After).
 */
export type Quota = { limit: number; remaining: number; resetS: number };

/** A spend's outcome: wait 0 when allowed; the quota of the tightest bucket (or of the one that refused). */
export type Spent = { wait: number; quota: Quota | null };

/**
 * The quota a spend reports from its buckets' levels (tokens, fractional): when allowed, the bucket
 * with the fewest whole tokens left after it (the longest reset on a tie); when refused, the one
 * that refused longest, with nothing left. api/http/redisLimiter.ts's script computes the same.
 */
export function quotaOf(levels: { tokens: number; rule: BucketRule }[]): Spent {
  let wait = 0;
  let quota: Quota | null = null;
  for (const { tokens, rule } of levels) {
    const w = tokens >= 1 ? 0 : (1 - tokens) / rule.perSecond;
    if (w > wait) [wait, quota] = [w, { limit: rule.burst, remaining: 0, resetS: w }];
  }
  if (wait > 0) return { wait, quota };
  for (const { tokens, rule } of levels) {
    const left = tokens - 1;
    const q = {
      limit: rule.burst,
      remaining: Math.floor(left),
      resetS: (Math.floor(left) + 1 - left) / rule.perSecond,
    };
    if (!quota || q.remaining < quota.remaining || (q.remaining === quota.remaining && q.resetS > quota.resetS))
      quota = q;
  }
  return { wait: 0, quota };
}

/**
 * Where rate buckets live: in memory (one instance; the embedded default) or in Redis (shared by
 * every instance, api/http/redisLimiter.ts). Both spend all of a request's buckets or none.
 */
export interface Limiter {
  readonly enabled: boolean;
  /** Takes one token from each bucket, all or none: 0 when allowed, else seconds until all could pass. */
  spend(buckets: BucketTake[]): Promise<number>;
  /** As spend, with the quota the RateLimit headers show (null when limits are off or no bucket is named). */
  charge(buckets: BucketTake[]): Promise<Spent>;
  /** Seconds until this bucket has a token (0: now), without taking one. */
  wait(key: string, rule: BucketRule): Promise<number>;
  close?(): Promise<void>;
}

/**
 * Buckets in an LRU so a flood of distinct client addresses costs bounded memory: an evicted
 * bucket comes back full, which only ever errs towards letting a long-quiet client in.
 */
export class RateLimiter implements Limiter {
  private readonly buckets: LRUCache<string, Bucket>;

  constructor(
    private readonly clock: () => number = () => Date.now(),
    maxBuckets = 100_000,
    readonly enabled = true,
  ) {
    this.buckets = new LRUCache(upTo(maxBuckets));
  }

  /** Takes one token; returns 0 when allowed, else the seconds until one is available. */
  take(key: string, rule: BucketRule): number {
    if (!this.enabled) return 0;
    const now = this.clock() / 1000;
    const b = this.buckets.get(key) ?? { tokens: rule.burst, at: now };
    const tokens = Math.min(rule.burst, b.tokens + (now - b.at) * rule.perSecond);
    if (tokens >= 1) {
      this.buckets.set(key, { tokens: tokens - 1, at: now });
      return 0;
    }
    this.buckets.set(key, { tokens, at: now });
    return (1 - tokens) / rule.perSecond;
  }

  async spend(buckets: BucketTake[]): Promise<number> {
    return (await this.charge(buckets)).wait;
  }

  async charge(buckets: BucketTake[]): Promise<Spent> {
    if (!this.enabled || buckets.length === 0) return { wait: 0, quota: null };
    const spent = quotaOf(buckets.map((b) => ({ tokens: this.level(b.key, b.rule), rule: b.rule })));
    if (spent.wait === 0) for (const b of buckets) this.take(b.key, b.rule);
    return spent;
  }

  /** The bucket's tokens now (fractional), without taking one. */
  private level(key: string, rule: BucketRule): number {
    const b = this.buckets.get(key);
    return b ? Math.min(rule.burst, b.tokens + (this.clock() / 1000 - b.at) * rule.perSecond) : rule.burst;
  }

  async wait(key: string, rule: BucketRule): Promise<number> {
    return this.peek(key, rule);
  }

  /** Whether a take would pass, without taking (for failed-auth lockouts checked before work). */
  peek(key: string, rule: BucketRule): number {
    if (!this.enabled) return 0;
    const tokens = this.level(key, rule);
    return tokens >= 1 ? 0 : (1 - tokens) / rule.perSecond;
  }

  get size() {
    return this.buckets.size;
  }
}
