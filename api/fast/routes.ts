import { z } from "zod";
import { Refusal } from "../errors/index.js";
import { FAST, WALLET } from "../errors/groups.js";
import { RATE_RULES } from "../http/rateLimit.js";
import { route, type RouteCall } from "../http/route.js";
import type { Ledger } from "../trading/index.js";
import type { Fast } from "./index.js";
import { fastRequest } from "./request.js";

/** What SPEC "Fast mode" reads: the pinned table's terms and trades, and the ledger that keeps refused trades. */
export type FastService = {
  fast: Pick<Fast, "terms" | "trade">;
  ledger: Pick<Ledger, "recordRefused">;
};

/** live/fast/terms' query, read by hand for SPEC's own messages. */
function shieldOf(query: Record<string, string>): boolean {
  const { shield, ...rest } = query;
  if (Object.keys(rest).length)
    throw new Refusal("BAD_REQUEST", `unknown query parameter ${Object.keys(rest)[0]}; this route takes shield`);
  if (shield !== undefined && shield !== "0" && shield !== "1") throw new Refusal("BAD_REQUEST", "shield is 0 or 1");
  return shield === "1";
}

/** A fast call refused before anything was relayed is kept as a refused trade (me/trades?refused=1). */
async function recordingRefusals({ c }: RouteCall<unknown, unknown>, s: FastService, run: () => Promise<unknown>) {
  try {
    return await run();
  } catch (err) {
    const b = c.get("body") ?? {};
    if (err instanceof Refusal && err.refusesTrade && b.check_only !== true && c.get("key").wallet) {
      await s.ledger
        .recordRefused({
          wallet: c.get("key").wallet,
          keyId: c.get("key").keyId,
          path: "fast",
          code: err.code,
          tokenIn: null,
          tokenOut: null,
          amountIn: typeof b.amount_in === "string" ? b.amount_in : null,
        })
        .catch((e) => c.get("log")?.warn({ err: e }, "refused fast trade not recorded"));
    }
    throw err;
  }
}

/**
 * SPEC "GET /api/v1/live/fast/terms" and "POST /api/v1/live/fast". The trade parses its body
 * itself (FAST_DISABLED comes before the schema's refusals), so its schema is only documented.
 */
export const fastRoutes = [
  route<FastService>({
    method: "get",
    path: "/live/fast/terms",
    auth: "key",
    limits: [],
    summary: "Fast mode's pinned route table",
    answer: ["enabled", "routes", "fee", "base_fee_wei"],
    errors: WALLET,
    mcp: {
      name: "fast_terms",
      description:
        "Fast mode terms for your wallet (GET /api/v1/live/fast/terms): the pinned route table and its sha256, fee, limits. Build fast transactions locally from it.",
      input: z.object({ shield: z.boolean().optional() }),
      readOnly: true,
    },
    handle: ({ query, c }, s) => {
      const shield = shieldOf(query);
      const wallet = c.get("key").wallet;
      if (!wallet) throw new Refusal("WALLET_NOT_BOUND", "this key is bound to no wallet");
      return s.fast.terms(wallet, shield);
    },
  }),
  route<FastService>({
    method: "post",
    path: "/live/fast",
    auth: "key(wallet)",
    limits: [["liveFast", RATE_RULES.liveFast, "key"]],
    // The simulation is what costs: a call that skips it (and relays) spends only the key's own bucket.
    limitsWhen: (b) => !(b.simulate === false && b.check_only !== true),
    summary: "A fast-mode trade from the pinned table",
    documents: { body: fastRequest },
    answer: ["tx_hash", "relayed", "repeat"],
    errors: FAST,
    handle: (call, s) => recordingRefusals(call, s, () => s.fast.trade(call.body, call.c.get("key"))),
  }),
];
