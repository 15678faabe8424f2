import { Hono, type Context, type Next } from "hono";
import type { AppEnv } from "../deps.js";
import { Refusal } from "../errors/index.js";
import type { HttpKit } from "../http/kit.js";
import { limit } from "../http/limits.js";
import { RATE_RULES } from "../http/rateLimit.js";
import type { Services } from "../services.js";

/** SPEC "POST /api/v1/live/fast" and "GET /api/v1/live/fast/terms". */
export function fastRoutes(s: Pick<Services, "fast" | "ledger">, http: HttpKit) {
  const { fast, ledger } = s;
  const simulatedLimit = limit(http.limiter, ["liveFast", RATE_RULES.liveFast, "key"]);
  // The simulation is what costs: a call that skips it (and relays) spends only the key's own bucket.
  const fastLimit = async (c: Context<AppEnv>, next: Next) => {
    const b = c.get("body") ?? {};
    return b.simulate === false && b.check_only !== true ? next() : simulatedLimit(c, next);
  };
  const app = new Hono<AppEnv>();
  app.get("/terms", http.keyed, async (c) => {
    const { shield, ...rest } = c.req.query();
    if (Object.keys(rest).length) throw new Refusal("BAD_REQUEST", `unknown query parameter ${Object.keys(rest)[0]}; this route takes shield`);
    if (shield !== undefined && shield !== "0" && shield !== "1") throw new Refusal("BAD_REQUEST", "shield is 0 or 1");
    const wallet = c.get("key").wallet;
    if (!wallet) throw new Refusal("WALLET_NOT_BOUND", "this key is bound to no wallet");
    return c.json(await fast.terms(wallet, shield === "1"));
  });
  app.post("/", http.keyed, fastLimit, async (c) => {
    try {
      return c.json(await fast.trade(c.get("body"), c.get("key")));
    } catch (err) {
      // A fast call refused before anything was relayed is kept as a refused trade (me/trades?refused=1).
      const b = c.get("body") ?? {};
      if (err instanceof Refusal && err.status === 422 && b.check_only !== true && c.get("key").wallet) {
        await ledger
          .recordRefused({ wallet: c.get("key").wallet, keyId: c.get("key").keyId, path: "fast", code: err.code, tokenIn: null, tokenOut: null, amountIn: typeof b.amount_in === "string" ? b.amount_in : null })
          .catch((e) => c.get("log")?.warn({ err: e }, "refused fast trade not recorded"));
      }
      throw err;
    }
  });
  return app;
}
