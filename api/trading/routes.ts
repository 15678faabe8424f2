import { Hono, type Context } from "hono";
import type { AppEnv } from "../deps.js";
import { Refusal } from "../errors/index.js";
import type { HttpKit } from "../http/kit.js";
import { limit } from "../http/limits.js";
import { RATE_RULES } from "../http/rateLimit.js";
import type { Services } from "../services.js";

/** SPEC.md "Trading" (fast mode comes with its own issue). */
export function tradingRoutes(s: Pick<Services, "trading" | "relay" | "ledger">, http: HttpKit) {
  const { trading, relay, ledger } = s;
  const { keyed, limiter } = http;
  const quoteLimit = limit(limiter, ["liveQuote", RATE_RULES.liveQuote, "key"]);
  const prepareLimit = limit(limiter, ["livePrepare", RATE_RULES.livePrepare, "key"]);
  const who = (c: Context<AppEnv>) => ({ key: c.get("key"), clientAddr: c.get("clientAddr") });

  /** A call never relayed is kept as a refused trade with its code (me/trades?refused=1). */
  const refusedAs = (path: string) => async (c: Context<AppEnv>, run: () => Promise<unknown>) => {
    try {
      return c.json(await run());
    } catch (err) {
      if (err instanceof Refusal && err.status === 422) {
        const b = c.get("body") ?? {};
        await ledger
          .recordRefused({ wallet: c.get("key").wallet, keyId: c.get("key").keyId, path, code: err.code, tokenIn: trading.refOfParam(b.token_in), tokenOut: trading.refOfParam(b.token_out), amountIn: typeof b.amount_in === "string" ? b.amount_in : null })
          .catch((e) => c.get("log")?.warn({ err: e }, "refused trade not recorded"));
      }
      throw err;
    }
  };
  const agent = refusedAs("agent");

  const app = new Hono<AppEnv>();
  app.post("/quote", keyed, quoteLimit, async (c) => c.json(await trading.quote(c.get("body"), who(c))));
  app.post("/build", keyed, quoteLimit, async (c) => agent(c, () => trading.plan(c.get("body"), who(c), "build")));
  app.post("/simulate", keyed, quoteLimit, async (c) => c.json(await trading.simulate(c.get("body"), who(c))));
  app.post("/prepare", keyed, prepareLimit, async (c) =>
    c.get("body").action === "revoke" ? c.json(await trading.revoke(c.get("body"), who(c))) : agent(c, () => trading.plan(c.get("body"), who(c), "prepare")),
  );
  app.post("/revoke", keyed, prepareLimit, async (c) => c.json(await trading.revoke(c.get("body"), who(c))));
  app.post("/submit", keyed, async (c) => agent(c, () => relay.submit(c.get("body"), c.get("key"))));
  return app;
}
