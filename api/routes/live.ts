import { every } from "hono/combine";
import { Hono, type Context } from "hono";
import type { AppDeps, AppEnv } from "../deps.js";
import { ApiError } from "../errors.js";
import { keyWalletNotSanctioned, requireKey } from "../middleware/auth.js";
import { limit } from "../middleware/limits.js";
import { RATE_RULES, type RateLimiter } from "../rateLimit.js";
import { createRelay, httpSequencer } from "../relay.js";
import type { Tokens } from "../tokens.js";
import { createTrading } from "../trading.js";

/** SPEC.md "Trading" (fast mode comes with its own issue). */
export function liveRoutes(deps: AppDeps, limiter: RateLimiter, tokens: Tokens) {
  const clock = deps.clock ?? Date.now;
  const trading = createTrading({ config: deps.config, chain: deps.chain, indexed: deps.indexed, db: deps.db, tokens, clock, aggregators: deps.config.aggregatorUrls });
  const relay = createRelay({ config: deps.config, chain: deps.chain, ledger: trading.ledger, sequencer: deps.sequencer ?? httpSequencer(deps.config.sequencerUrl), clock });
  const keyed = every(requireKey({ db: deps.db, clock }, limiter), keyWalletNotSanctioned(deps));
  const quoteLimit = limit(limiter, "liveQuote", RATE_RULES.liveQuote, "key");
  const prepareLimit = limit(limiter, "livePrepare", RATE_RULES.livePrepare, "key");
  const who = (c: Context<AppEnv>) => ({ key: c.get("key"), clientAddr: c.get("clientAddr") });

  /** A call never relayed is kept as a refused trade with its code (me/trades?refused=1). */
  const refusedAs = (path: string) => async (c: Context<AppEnv>, run: () => Promise<unknown>) => {
    try {
      return c.json(await run());
    } catch (err) {
      if (err instanceof ApiError && err.status === 422) {
        const b = c.get("body") ?? {};
        await trading.ledger
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
  return { app, trading };
}
