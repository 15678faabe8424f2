import { Hono, type Context } from "hono";
import type { AppEnv } from "../deps.js";
import { Refusal } from "../errors/index.js";
import type { HttpKit } from "../http/kit.js";
import { limit } from "../http/limits.js";
import { RATE_RULES } from "../http/rateLimit.js";
import type { Services } from "../services.js";

/** SPEC.md "Sessions" (live/session/*) and the sessions part of me/sessions. */
export function sessionRoutes(s: Pick<Services, "sessions" | "ledger" | "trading">, http: HttpKit) {
  const { sessions } = s;
  const sessionLimit = limit(http.limiter, ["livePrepare", RATE_RULES.livePrepare, "key"]);
  const who = (c: Context<AppEnv>) => ({ key: c.get("key"), clientAddr: c.get("clientAddr") });
  const app = new Hono<AppEnv>();
  // One route, two calls: a body with session_id is the switch-on.
  app.post("/grant", http.keyed, sessionLimit, async (c) => {
    const body = c.get("body");
    return c.json("session_id" in body ? await sessions.switchOn(body, who(c)) : await sessions.start(body, who(c)));
  });
  app.post("/trade", http.keyed, sessionLimit, async (c) => {
    try {
      return c.json(await sessions.trade(c.get("body"), who(c)));
    } catch (err) {
      if (err instanceof Refusal && err.status === 422) await recordRefused(c, err.code);
      throw err;
    }
  });
  // A sanctioned key may still end what it started (SPEC "Authentication" 10).
  app.post("/revoke", http.keyedEvenSanctioned, sessionLimit, async (c) => c.json(await sessions.revoke(c.get("body"), who(c))));
  return app;

  /** A refused session trade is kept like other refused trades (me/trades?refused=1), on the session's wallet when the key may trade it. */
  async function recordRefused(c: Context<AppEnv>, code: string) {
    const b = c.get("body") ?? {};
    const key = c.get("key");
    const found = typeof b.session_id === "string" ? await sessions.forHosted(b.session_id).catch(() => null) : null;
    const lc = (a: string) => a.toLowerCase();
    const mine = found && key.wallet && (lc(found.wallet) === lc(key.wallet) || lc(found.executor) === lc(key.wallet)) ? found : null;
    await s.ledger
      .recordRefused({ wallet: mine?.wallet ?? key.wallet, keyId: key.keyId, path: "session", code, tokenIn: s.trading.refOfParam(b.token_in), tokenOut: s.trading.refOfParam(b.token_out), amountIn: typeof b.amount_in === "string" ? b.amount_in : null, sessionId: mine?.id ?? null })
      .catch((e) => c.get("log")?.warn({ err: e }, "refused session trade not recorded"));
  }
}

/** GET me/sessions: the key's wallet's sessions and its hosted agents' summary rows. */
export function mySessionsRoute(s: Pick<Services, "sessions" | "hosted">, http: HttpKit) {
  const app = new Hono<AppEnv>();
  app.get("/sessions", http.keyed, limit(http.limiter, ["meList", RATE_RULES.meList, "key"]), async (c) => {
    const extra = Object.keys(c.req.query());
    if (extra.length) throw new Refusal("BAD_REQUEST", `unknown query parameter ${extra[0]}; this route takes none`);
    const wallet = c.get("key").wallet;
    if (!wallet) throw new Refusal("WALLET_NOT_BOUND", "this key is bound to no wallet");
    const mine = await s.sessions.mine(wallet);
    return c.json({ wallet: mine.wallet, sessions: mine.sessions, hosted: await s.hosted.summaries(wallet), hosted_available: true, routes: mine.routes });
  });
  return app;
}
