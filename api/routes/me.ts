import { Hono } from "hono";
import type { AppDeps, AppEnv } from "../deps.js";
import { ApiError } from "../errors.js";
import { keyWalletNotSanctioned, requireKey } from "../middleware/auth.js";
import { limit } from "../middleware/limits.js";
import { RATE_RULES, type RateLimiter } from "../rateLimit.js";
import type { Ledger } from "../trades.js";

/** SPEC.md "Your account": the key's own wallet; nothing names a wallet. */
export function meRoutes(deps: AppDeps, limiter: RateLimiter, ledger: Ledger) {
  const clock = deps.clock ?? Date.now;
  const app = new Hono<AppEnv>();
  app.get("/trades", requireKey({ db: deps.db, clock }, limiter), keyWalletNotSanctioned(deps), limit(limiter, "meList", RATE_RULES.meList, "key"), async (c) => {
    const q = c.req.query();
    const extra = Object.keys(q).filter((k) => !["limit", "before", "refused"].includes(k));
    if (extra.length) throw new ApiError(400, "BAD_REQUEST", `unknown query parameter ${extra[0]}; this route takes limit, before, refused`);
    const lim = q.limit === undefined ? 50 : /^\d{1,3}$/.test(q.limit) ? Number(q.limit) : NaN;
    if (!(lim >= 1 && lim <= 100)) throw new ApiError(400, "BAD_REQUEST", "limit must be an integer from 1 to 100");
    if (q.before !== undefined && !/^\d{1,18}$/.test(q.before)) throw new ApiError(400, "BAD_REQUEST", "before must be a trade id");
    if (q.refused !== undefined && q.refused !== "1" && q.refused !== "0") throw new ApiError(400, "BAD_REQUEST", "refused must be 1");
    const wallet = c.get("key").wallet;
    if (!wallet) throw new ApiError(403, "WALLET_NOT_BOUND", "this key is bound to no wallet");
    const refused = q.refused === "1";
    const page = await ledger.list(wallet, { limit: lim, before: q.before === undefined ? null : Number(q.before), refused });
    return c.json({ wallet: wallet.toLowerCase(), trades: page.trades, next_before: page.next_before, refused_included: refused });
  });
  return app;
}
