import { parseBody, Refusal } from "../errors/index.js";
import { TRADING } from "../errors/groups.js";
import type { Take } from "../http/limits.js";
import { RATE_RULES } from "../http/rateLimit.js";
import { routesFor, type RawCall } from "../http/route.js";
import { planAnswer, prepareAnswer, quoteAnswer, revokeAnswer, simulateAnswer, submitAnswer } from "./answers.js";
import type { Ledger } from "./ledger.js";
import { submitRequest, type Relay } from "./relay.js";
import { revokeRequest } from "./revoke.js";
import { assertNoFee, tradeBody } from "./request.js";
import type { Who } from "./sides.js";
import { prepareInput, quoteInput, SIGN_LOCALLY_NOTE } from "./tools.js";
import type { Trading } from "./trading.js";

/** What SPEC "Trading" reads: the trade's stages, the relay, and the ledger that keeps refused trades. */
export type TradingService = {
  trading: Pick<Trading, "quote" | "plan" | "simulate" | "revoke" | "refOfParam">;
  relay: Pick<Relay, "submit" | "assertRelaying">;
  ledger: Pick<Ledger, "recordRefused">;
};

const route = routesFor<TradingService>({
  name: "Trading",
  description:
    "Quote, prepare, build, simulate, submit (relay of signed transactions " +
    "the service built for the key) and approval revocation.",
});
const QUOTE: Take[] = [["liveQuote", RATE_RULES.liveQuote, "key"]];
const PREPARE: Take[] = [["livePrepare", RATE_RULES.livePrepare, "key"]];

const who = ({ c }: RawCall): Who => ({ key: c.get("key"), clientAddr: c.get("clientAddr") });
const rawBody = ({ c }: RawCall): Record<string, unknown> => c.get("body") ?? {};
/** A trade's first step: FEE_FIXED before any field is read (SPEC's order); then the edge parses tradeBody. */
const noFee = (call: RawCall) => assertNoFee(rawBody(call));

/** A call never relayed is kept as a refused trade with its code (me/trades?refused=1), a bad field's included. */
async function refusedAsAgent(call: RawCall, s: TradingService, work: () => Promise<unknown>) {
  try {
    return await work();
  } catch (err) {
    if (err instanceof Refusal && err.refusesTrade) {
      const { c } = call;
      const b = rawBody(call);
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
 * live/prepare with action "revoke" is live/revoke under prepare's bucket: its body is revoke's
 * (parsed here, at the edge, by revoke's schema), and its refusals are not refused trades. Any
 * other prepare is a trade: FEE_FIXED first, then tradeBody, its refusals kept.
 */
function prepareOrRevoke(call: RawCall, s: TradingService, work: () => Promise<unknown>) {
  const b = rawBody(call);
  if (b.action === "revoke") return s.trading.revoke(parseBody(revokeRequest, b), who(call));
  return refusedAsAgent(call, s, work);
}

/**
 * SPEC.md "Trading" (fast mode: api/fast/routes.ts). A trade's body is parsed at the edge after
 * its `first` step (FEE_FIXED before the schema's refusals; submit's SUBMIT_DISABLED before any);
 * build, prepare and submit keep their refusals as refused trades (`around`).
 */
export const tradingRoutes = [
  route({
    method: "post",
    path: "/live/quote",
    auth: "key",
    limits: QUOTE,
    summary: "Routes and marks for a trade (read-only)",
    description:
      "Read-only; discloses, never refuses for risk: every route ranked (ours first, aggregators' for " +
      "comparison and never built), the best, the mid and marks, the policy's verdict, risks and the fee " +
      "the trade would pay.",
    first: noFee,
    body: tradeBody,
    answer: quoteAnswer,
    errors: TRADING,
    mcp: {
      name: "quote",
      description: "Quote a trade (POST /api/v1/live/quote): routes, best, risks, fee. Read-only.",
      input: quoteInput,
      readOnly: true,
    },
    handle: (call, s) => s.trading.quote(call.body, who(call)),
  }),
  route({
    method: "post",
    path: "/live/build",
    auth: "key(wallet)",
    limits: QUOTE,
    summary: "A plan built without simulation",
    description: "Same request and answer as prepare, without simulation (simulation absent).",
    around: refusedAsAgent,
    first: noFee,
    body: tradeBody,
    answer: planAnswer,
    errors: TRADING,
    handle: (call, s) => s.trading.plan(call.body, who(call), "build"),
  }),
  route({
    method: "post",
    path: "/live/simulate",
    auth: "key",
    limits: QUOTE,
    summary: "A trade simulated against the chain",
    description:
      "The trade simulated against the chain; without a wallet from a synthetic wallet funded by state " +
      "overrides (cannot be signed; discloses only, never refuses for risk).",
    first: noFee,
    body: tradeBody,
    answer: simulateAnswer,
    errors: TRADING,
    handle: (call, s) => s.trading.simulate(call.body, who(call)),
  }),
  route({
    method: "post",
    path: "/live/prepare",
    auth: "key(wallet)",
    limits: PREPARE,
    summary: "A plan for the wallet to sign: transactions, fee, checks, simulation",
    description:
      "Quote, policy, build and simulation in one call: the plan for the wallet to verify and sign locally " +
      "(steps, fee, checks, simulation). action `revoke` answers as live/revoke.",
    // action "revoke" never reaches first, the parse or handle: prepareOrRevoke answers it.
    around: prepareOrRevoke,
    first: noFee,
    body: tradeBody,
    answer: prepareAnswer,
    errors: TRADING,
    mcp: {
      name: "prepare_trade",
      description:
        "Plan a trade for your own wallet (POST /api/v1/live/prepare): unsigned transaction(s) you verify and sign " +
        "locally, then submit.",
      input: prepareInput,
      readOnly: false,
      notes: [SIGN_LOCALLY_NOTE],
    },
    handle: (call, s) => s.trading.plan(call.body, who(call), "prepare"),
  }),
  route({
    method: "post",
    path: "/live/revoke",
    auth: "key(wallet)",
    limits: PREPARE,
    summary: "Transactions that revoke the wallet's approvals",
    description:
      "approve(spender, 0) while an allowance remains, plus the permit contract's lockdown while the router " +
      "holds a live permit allowance, simulated against the wallet.",
    body: revokeRequest,
    answer: revokeAnswer,
    errors: TRADING,
    handle: (call, s) => s.trading.revoke(call.body, who(call)),
  }),
  route({
    method: "post",
    path: "/live/submit",
    auth: "key(wallet)",
    limits: [],
    summary: "Relays a transaction the service built for this key",
    description:
      "Relays only transactions the service built for this key, signed by the key's wallet or a session's " +
      "executor, byte for byte; the same signed bytes again answer the same hash with no second relay.",
    around: refusedAsAgent,
    first: (_, s) => s.relay.assertRelaying(),
    body: submitRequest,
    answer: submitAnswer,
    errors: [...TRADING, "NONCE", "IN_FLIGHT"],
    handle: (call, s) => s.relay.submit(call.body, call.c.get("key")),
  }),
];
