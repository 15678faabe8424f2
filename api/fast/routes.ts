import { z } from "zod";
import { Refusal } from "../errors/index.js";
import { FAST, WALLET } from "../errors/groups.js";
import { boundCaller } from "../http/caller.js";
import { RATE_RULES } from "../http/rateLimit.js";
import { routesFor, type RawCall } from "../http/route.js";
import type { Ledger } from "../trading/index.js";
import type { Fast } from "./index.js";
import { fastRequest } from "./request.js";
import { fastAnswer, fastTermsAnswer } from "./answers.js";

/** What SPEC "Fast mode" reads: the pinned table's terms and trades, and the ledger that keeps refused trades. */
export type FastService = {
  fast: Pick<Fast, "terms" | "trade" | "assertEnabled">;
  ledger: Pick<Ledger, "recordRefused">;
};

const route = routesFor<FastService>({
  name: "Fast mode",
  description: "SDK-built transactions on pinned routes, verified byte for byte and relayed.",
});

/** live/fast/terms' query: shield 0 or 1 and nothing else, refused in SPEC's own messages. */
const termsQuery = z.record(z.string()).transform((query) => {
  const { shield, ...rest } = query;
  if (Object.keys(rest).length)
    throw new Refusal("BAD_REQUEST", `unknown query parameter ${Object.keys(rest)[0]}; this route takes shield`);
  if (shield !== undefined && shield !== "0" && shield !== "1") throw new Refusal("BAD_REQUEST", "shield is 0 or 1");
  return { shield: shield === "1" };
});
/** live/fast/terms' input as the edge parses it. */
export type TermsParameters = z.infer<typeof termsQuery>;

/**
 * A fast call refused before anything was relayed is kept as a refused trade (me/trades?refused=1), a
 * bad field's included.
 */
async function recordingRefusals({ c }: RawCall, s: FastService, work: () => Promise<unknown>) {
  try {
    return await work();
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
 * SPEC "GET /api/v1/live/fast/terms" and "POST /api/v1/live/fast". The trade's first step is
 * FAST_DISABLED (before the schema's refusals); its refusals are kept as refused trades (`around`).
 */
export const fastRoutes = [
  route({
    method: "get",
    path: "/live/fast/terms",
    auth: "key",
    limits: [],
    summary: "Fast mode's pinned route table",
    description:
      "What an SDK needs to build a fast transaction the server will relay for this wallet: the pinned " +
      "route table (version, sha256, pairs), deadline and gas limits, the wallet's fee (shield=1: with " +
      "Shield's), the base fee, mark age and the slippage table. SDKs refuse fast mode when " +
      "routes.sha256 differs from their pinned table.",
    query: termsQuery,
    answer: fastTermsAnswer,
    errors: WALLET,
    mcp: {
      name: "fast_terms",
      description:
        "Fast mode terms for your wallet (GET /api/v1/live/fast/terms): the pinned route table and its sha256, fee, " +
        "limits. Build fast transactions locally from it.",
      input: z.object({ shield: z.boolean().optional().describe("terms with Shield screening") }).strict(),
      readOnly: true,
    },
    // The query is read first: a bad one is BAD_REQUEST even for a key bound to no wallet.
    handle: (call, s) => s.fast.terms(boundCaller()(call).wallet, call.query.shield),
  }),
  route({
    method: "post",
    path: "/live/fast",
    auth: "key(wallet)",
    limits: [["liveFast", RATE_RULES.liveFast, "key"]],
    // The simulation is what costs: a call that skips it (and relays) spends only the key's bucket.
    limitsWhen: (b) => !(b.simulate === false && b.check_only !== true),
    summary: "A fast-mode trade from the pinned table",
    description:
      "Relays a transaction the SDK built itself from the pinned route table: the server rebuilds the " +
      "calldata from amount_in, min_out, deadline, permit, its own fee, the pinned route and recipient," +
      " runs every rule in order and relays only a byte-for-byte match. The same signed bytes again " +
      "answer the same hash with repeat true. check_only runs every check and the simulation and relays" +
      " nothing. Refusals list every failed rule in `failures`.",
    around: recordingRefusals,
    first: (_, s) => s.fast.assertEnabled(),
    body: fastRequest,
    answer: fastAnswer,
    errors: FAST,
    handle: (call, s) => s.fast.trade(call.body, call.c.get("key")),
  }),
];
