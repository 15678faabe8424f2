import { parseBody, Refusal } from "../errors/index.js";
import { TRADING } from "../errors/groups.js";
import type { Take } from "../http/limits.js";
import { RATE_RULES } from "../http/rateLimit.js";
import { route, type RouteCall } from "../http/route.js";
import type { Ledger } from "./ledger.js";
import type { Relay } from "./relay.js";
import { revokeRequest, type RevokeParameters } from "./revoke.js";
import { tradeRequest } from "./request.js";
import { submitRequest } from "./relay.js";
import { prepareInput, quoteInput, SIGN_LOCALLY_NOTE } from "./tools.js";
import type { Trading } from "./trading.js";

/** What SPEC "Trading" reads: the trade's stages, the relay, and the ledger that keeps refused trades. */
export type TradingService = {
  trading: Pick<Trading, "quote" | "plan" | "simulate" | "revoke" | "refOfParam">;
  relay: Pick<Relay, "submit">;
  ledger: Pick<Ledger, "recordRefused">;
};

const QUOTE: Take[] = [["liveQuote", RATE_RULES.liveQuote, "key"]];
const PREPARE: Take[] = [["livePrepare", RATE_RULES.livePrepare, "key"]];

const who = ({ c }: RouteCall<unknown, unknown>) => ({ key: c.get("key"), clientAddr: c.get("clientAddr") });

/** A call never relayed is kept as a refused trade with its code (me/trades?refused=1). */
async function refusedAsAgent({ c }: RouteCall<unknown, unknown>, s: TradingService, run: () => Promise<unknown>) {
  try {
    return await run();
  } catch (err) {
    if (err instanceof Refusal && err.refusesTrade) {
      const b = c.get("body") ?? {};
      await s.ledger
        .recordRefused({
          wallet: c.get("key").wallet,
          keyId: c.get("key").keyId,
          path: "agent",
          code: err.code,
          tokenIn: s.trading.refOfParam(b.token_in),
          tokenOut: s.trading.refOfParam(b.token_out),
          amountIn: typeof b.amount_in === "string" ? b.amount_in : null,
        })
        .catch((e) => c.get("log")?.warn({ err: e }, "refused trade not recorded"));
    }
    throw err;
  }
}

/**
 * SPEC.md "Trading" (fast mode: api/fast/routes.ts). The trade routes parse their bodies
 * themselves (FEE_FIXED comes before the schema's refusals; submit's SUBMIT_DISABLED before any),
 * so their schemas are only documented; live/revoke's is parsed at the edge.
 */
export const tradingRoutes = [
  route<TradingService>({
    method: "post",
    path: "/live/quote",
    auth: "key",
    limits: QUOTE,
    summary: "Routes and marks for a trade (read-only)",
    documents: { body: tradeRequest },
    answer: ["token_in", "token_out", "best", "routes"],
    errors: TRADING,
    mcp: {
      name: "quote",
      description: "Quote a trade (POST /api/v1/live/quote): routes, best, risks, fee. Read-only.",
      input: quoteInput,
      readOnly: true,
    },
    handle: (call, s) => s.trading.quote(call.body, who(call)),
  }),
  route<TradingService>({
    method: "post",
    path: "/live/build",
    auth: "key(wallet)",
    limits: QUOTE,
    summary: "A plan built without simulation",
    documents: { body: tradeRequest },
    answer: ["tx", "amount_in", "amount_out_min"],
    errors: TRADING,
    handle: (call, s) => refusedAsAgent(call, s, () => s.trading.plan(call.body, who(call), "build")),
  }),
  route<TradingService>({
    method: "post",
    path: "/live/simulate",
    auth: "key",
    limits: QUOTE,
    summary: "A trade simulated against the chain",
    documents: { body: tradeRequest },
    answer: ["ok"],
    errors: TRADING,
    handle: (call, s) => s.trading.simulate(call.body, who(call)),
  }),
  route<TradingService>({
    method: "post",
    path: "/live/prepare",
    auth: "key(wallet)",
    limits: PREPARE,
    summary: "A plan for the wallet to sign: transactions, fee, checks, simulation",
    documents: { body: tradeRequest },
    answer: ["ready", "tx", "steps", "amount_in", "amount_out_min", "fee_bps", "fee_class"],
    errors: TRADING,
    mcp: {
      name: "prepare_trade",
      description:
        "Plan a trade for your own wallet (POST /api/v1/live/prepare): unsigned transaction(s) you verify and sign locally, then submit.",
      input: prepareInput,
      readOnly: false,
      notes: [SIGN_LOCALLY_NOTE],
    },
    // action "revoke" is live/revoke under prepare's bucket (not kept as a refused trade).
    handle: (call, s) =>
      call.body.action === "revoke"
        ? s.trading.revoke(parseBody(revokeRequest, call.body), who(call))
        : refusedAsAgent(call, s, () => s.trading.plan(call.body, who(call), "prepare")),
  }),
  route<TradingService, RevokeParameters>({
    method: "post",
    path: "/live/revoke",
    auth: "key(wallet)",
    limits: PREPARE,
    summary: "Transactions that revoke the wallet's approvals",
    body: revokeRequest,
    answer: ["steps", "before", "ready", "nothing_to_revoke"],
    errors: TRADING,
    handle: (call, s) => s.trading.revoke(call.body, who(call)),
  }),
  route<TradingService>({
    method: "post",
    path: "/live/submit",
    auth: "key(wallet)",
    limits: [],
    summary: "Relays a transaction the service built for this key",
    documents: { body: submitRequest },
    answer: ["tx_hash", "as_built"],
    errors: [...TRADING, "NONCE", "IN_FLIGHT"],
    handle: (call, s) => refusedAsAgent(call, s, () => s.relay.submit(call.body, call.c.get("key"))),
  }),
];
