import { Hono } from "hono";
import type { AppEnv } from "../deps.js";
import { Refusal } from "../errors/index.js";
import type { HttpKit } from "../http/kit.js";
import { limit } from "../http/limits.js";
import { RATE_RULES, type BucketRule } from "../http/rateLimit.js";
import type { Services } from "../services.js";

/**
 * me/portfolio's overall bucket (SPEC.md: "key; overall"). A miss costs the instance one block
 * number read, one multicall and a few indexed reads; the 5 s reuse absorbs repeats. The ceiling
 * is the per-key numbers times 100, like PUBLIC_OVERALL: a hundred keys refreshing at full pace
 * (50 chain reads a second) is what one instance spends on portfolios, not a second per-key limit.
 */
export const PORTFOLIO_OVERALL: BucketRule = { burst: RATE_RULES.portfolio.burst * 100, perSecond: RATE_RULES.portfolio.perSecond * 100 };

/** SPEC.md "Your account": the key's own wallet; nothing names a wallet. */
export function accountRoutes(s: Pick<Services, "ledger" | "portfolio">, http: HttpKit) {
  const { ledger, portfolio } = s;
  const app = new Hono<AppEnv>();
  app.get("/trades", http.keyed, limit(http.limiter, ["meList", RATE_RULES.meList, "key"]), async (c) => {
    const q = c.req.query();
    const extra = Object.keys(q).filter((k) => !["limit", "before", "refused"].includes(k));
    if (extra.length) throw new Refusal("BAD_REQUEST", `unknown query parameter ${extra[0]}; this route takes limit, before, refused`);
    const lim = q.limit === undefined ? 50 : /^\d{1,3}$/.test(q.limit) ? Number(q.limit) : NaN;
    if (!(lim >= 1 && lim <= 100)) throw new Refusal("BAD_REQUEST", "limit must be an integer from 1 to 100");
    if (q.before !== undefined && !/^\d{1,18}$/.test(q.before)) throw new Refusal("BAD_REQUEST", "before must be a trade id");
    if (q.refused !== undefined && q.refused !== "1" && q.refused !== "0") throw new Refusal("BAD_REQUEST", "refused must be 1");
    const wallet = c.get("key").wallet;
    if (!wallet) throw new Refusal("WALLET_NOT_BOUND", "this key is bound to no wallet");
    const refused = q.refused === "1";
    const page = await ledger.list(wallet, { limit: lim, before: q.before === undefined ? null : Number(q.before), refused });
    return c.json({ wallet: wallet.toLowerCase(), trades: page.trades, next_before: page.next_before, refused_included: refused });
  });
  app.get("/portfolio", http.keyed, limit(http.limiter, ["portfolio", RATE_RULES.portfolio, "key"], ["portfolio", PORTFOLIO_OVERALL, "overall"]), async (c) => {
    const extra = Object.keys(c.req.query());
    if (extra.length) throw new Refusal("BAD_REQUEST", `unknown query parameter ${extra[0]}; this route takes none`);
    const wallet = c.get("key").wallet;
    if (!wallet) throw new Refusal("WALLET_NOT_BOUND", "this key is bound to no wallet");
    return c.json(await portfolio.get(wallet));
  });
  return app;
}
