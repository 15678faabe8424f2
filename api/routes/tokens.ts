import { every } from "hono/combine";
import { Hono } from "hono";
import type { AppDeps, AppEnv } from "../deps.js";
import { ApiError } from "../errors.js";
import { keyWalletNotSanctioned, requireKey } from "../middleware/auth.js";
import { limit } from "../middleware/limits.js";
import { RATE_RULES, type RateLimiter } from "../rateLimit.js";
import type { Tokens } from "../tokens.js";

export const TOKEN_STATS_TTL_MS = 30_000;
const KINDS = ["core", "stock", "partner_agent", "launchpad", "bridged", "erc20"];
const TIERS = ["A", "B", "C", "blocked"];

function onlyQuery(q: Record<string, string>, allowed: string[]) {
  const extra = Object.keys(q).filter((k) => !allowed.includes(k));
  if (extra.length) throw new ApiError(400, "BAD_REQUEST", `unknown query parameter ${extra[0]}; this route takes ${allowed.join(", ")}`);
}

function shieldParam(v: string | undefined): boolean {
  if (v === undefined || v === "0") return false;
  if (v === "1") return true;
  throw new ApiError(400, "BAD_REQUEST", "shield must be 1");
}

/** SPEC.md "Tokens (key)". */
export function tokenRoutes(deps: AppDeps, limiter: RateLimiter, tokens: Tokens) {
  const clock = deps.clock ?? Date.now;
  const keyed = every(requireKey({ db: deps.db, clock }, limiter), keyWalletNotSanctioned(deps));
  const app = new Hono<AppEnv>();

  let stats: { at: number; body: Record<string, unknown> } | null = null;
  let counting: Promise<{ at: number; body: Record<string, unknown> }> | null = null;
  const count = async () => {
    const at = clock();
    const q = <T>(sql: string) => deps.db.query<T>(sql);
    const [totals] = await q<{ total: string; tradable: string }>("SELECT count(*)::text AS total, count(*) FILTER (WHERE tradable)::text AS tradable FROM app.tokens");
    const group = async (sql: string) => Object.fromEntries((await q<{ k: string; n: string }>(sql)).map((r) => [r.k, Number(r.n)]));
    return {
      at,
      body: {
        total: Number(totals!.total),
        tradable: Number(totals!.tradable),
        by_tier: await group("SELECT tier AS k, count(*)::text AS n FROM app.tokens GROUP BY tier"),
        by_kind: await group("SELECT kind AS k, count(*)::text AS n FROM app.tokens GROUP BY kind"),
        by_risk: await group("SELECT r AS k, count(*)::text AS n FROM app.tokens, unnest(risk_codes) AS r GROUP BY r"),
        blocked_by_reason: await group("SELECT blocked_reason AS k, count(*)::text AS n FROM app.tokens WHERE blocked_reason IS NOT NULL GROUP BY blocked_reason"),
        generated_at: Math.floor(at / 1000),
      },
    };
  };

  app.get("/stats", keyed, async (c) => {
    onlyQuery(c.req.query(), []);
    if (!stats || clock() - stats.at >= TOKEN_STATS_TTL_MS) {
      counting ??= count().finally(() => (counting = null));
      if (!stats) {
        // The first count: answer it if it is quick, else 503 STATS_PENDING until it lands.
        const first = await Promise.race([counting, new Promise<null>((r) => setTimeout(() => r(null), 1000).unref())]);
        if (!first) throw new ApiError(503, "STATS_PENDING", "the first registry count is running", {}, 5);
        stats = first;
      } else {
        stats = await counting;
      }
    }
    return c.json({ ...stats.body, cached_s: Math.floor((clock() - stats.at) / 1000) });
  });

  app.get("/:address", keyed, limit(limiter, "tokenScreen", RATE_RULES.tokenScreen, "key"), limit(limiter, "tokenScreen", RATE_RULES.tokenScreenClient, "client"), async (c) => {
    const query = c.req.query();
    onlyQuery(query, ["shield"]);
    return c.json(await tokens.get(c.req.param("address"), { shield: shieldParam(query.shield), keyId: c.get("key").keyId, clientAddr: c.get("clientAddr") }));
  });

  app.get("/", keyed, limit(limiter, "tokenSearch", RATE_RULES.tokenSearch, "key"), limit(limiter, "tokenSearch", RATE_RULES.tokenSearchClient, "client"), async (c) => {
    const query = c.req.query();
    onlyQuery(query, ["q", "tier", "kind", "limit", "shield"]);
    if (query.q !== undefined && (query.q.length === 0 || query.q.length > 64)) throw new ApiError(400, "BAD_REQUEST", "q must be 1 to 64 characters");
    if (query.tier !== undefined && !TIERS.includes(query.tier)) throw new ApiError(400, "BAD_REQUEST", `tier must be one of ${TIERS.join(", ")}`);
    if (query.kind !== undefined && !KINDS.includes(query.kind)) throw new ApiError(400, "BAD_REQUEST", `kind must be one of ${KINDS.join(", ")}`);
    const lim = query.limit === undefined ? 20 : Number(query.limit);
    if (!Number.isInteger(lim) || lim < 1 || lim > 100 || !/^\d+$/.test(query.limit ?? "20")) throw new ApiError(400, "BAD_REQUEST", "limit must be an integer from 1 to 100");
    return c.json(await tokens.search({ q: query.q, tier: query.tier, kind: query.kind, limit: lim, shield: shieldParam(query.shield) }));
  });
  return app;
}
