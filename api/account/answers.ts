import { z } from "zod";
import { address, atoms, bps, named, unixS, usd } from "../http/answers.js";
import { markView, tradeRecord } from "../trading/index.js";

/**
 * The answers of SPEC "Your account" as zod schemas, in SPEC's words: the OpenAPI document's (api/openapi), and
 * test/answers.test.ts checks the code's answer types fit them.
 */

/** GET me/trades. */
export const tradesAnswer = named(
  "Trades",
  z
    .object({
      wallet: address,
      trades: z.array(tradeRecord).describe("newest first"),
      next_before: z.number().int().nullable().describe("the last trade's id if older exist, else null"),
      refused_included: z.boolean(),
    })
    .describe("The wallet's trades, newest first."),
);

/** A holding (SPEC "Holding"). */
const holding = z.object({
  token: z.string(),
  address: address,
  symbol: z.string(),
  name: z.string(),
  decimals: z.number().int(),
  kind: z.enum(["native", "core", "stock", "token"]),
  amount_atoms: atoms,
  amount: z.string().describe("the amount in whole tokens"),
  priced: z.boolean(),
  price_usd: usd.nullable(),
  value_usd: usd.nullable(),
  mark: markView.nullable(),
  unpriced: z.enum(["NO_INDEPENDENT_MARK", "MARK_UNAVAILABLE"]).nullable(),
});

/** GET me/portfolio. */
export const portfolioAnswer = named(
  "Portfolio",
  z
    .object({
      wallet: address,
      block: z.number().int(),
      read_at: unixS,
      holdings: z.array(holding),
      total_usd: usd.describe("priced holdings only"),
      priced: z.array(z.string()),
      unpriced: z.array(
        z.object({ token: z.string(), address: address, code: z.enum(["NO_INDEPENDENT_MARK", "MARK_UNAVAILABLE"]) }),
      ),
      unread: z.array(z.object({ token: z.string(), address: address, reason: z.string() })),
      volume: z.object({
        window_days: z.number().int(),
        volume_usd: usd,
        tier_bps: bps,
        posted_bps: bps,
        next_tier: z.object({ bps: bps, min_30d_volume_usd: usd, volume_to_next_usd: usd }).nullable(),
        tiers: z.array(z.object({ min_30d_volume_usd: usd, bps: bps })).readonly(),
      }),
      cached: z.boolean().describe("reused within 5 s"),
    })
    .describe("The wallet's holdings at independent marks, and its 30-day volume."),
);
