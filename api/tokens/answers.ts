import { z } from "zod";
import { address, bps, named, riskRow, unixS, usd } from "../http/answers.js";

/**
 * The answers of SPEC "Tokens" as zod schemas, in SPEC's words: the OpenAPI document's (api/openapi), and
 * test/answers.test.ts checks the code's answer types fit them.
 */

const counts = z.record(z.number().int());

/** GET tokens/stats. */
export const tokenStatsAnswer = named(
  "TokenStats",
  z
    .object({
      total: z.number().int().describe("tokens in the registry"),
      tradable: z.number().int(),
      by_tier: counts.describe("count by tier (A, B, C, blocked)"),
      by_kind: counts.describe("count by kind"),
      by_risk: counts.describe("count by risk code"),
      blocked_by_reason: counts,
      generated_at: unixS,
      cached_s: z.number().int().describe("the count's age: counted at most every 30 s"),
    })
    .describe("Counts of the token registry."),
);

/** Shield's verdict on one token (SPEC: report = {verdict, url, source, checked_at}, only with shield=1). */
const tokenReport = z
  .object({
    verdict: z.enum(["verified", "unverified", "flagged"]),
    url: z.string(),
    source: z.string(),
    checked_at: unixS,
  })
  .describe("Shield's verdict report");

/** A venue the token trades on: a pool, the launchpad curve, or WETH's wrap. */
const venue = z
  .object({
    type: z.enum(["v4-pool", "curve", "wrap"]),
    pool_id: z.string().optional(),
    currency0: address.optional(),
    currency1: address.optional(),
    fee: z.number().int().optional().describe("pips"),
    tick_spacing: z.number().int().optional(),
    hooks: address.optional(),
    curve: address.optional(),
    graduated: z.boolean().optional(),
    with: z.string().optional(),
    via: address.optional(),
  })
  .describe("a pool (v4-pool), the launchpad curve, or WETH's wrap");

/**
 * SPEC "Token record": what a screen found. A record still screening (screen_status UNSCREENED) carries only the
 * fields every record has: address, screen_status, tier (null), tradable (false), risks, warnings and Shield's.
 */
export const tokenRecord = named(
  "TokenRecord",
  z
    .object({
      address,
      symbol: z.string().optional().describe("read from chain, deployer-chosen text: escape it"),
      name: z.string().optional().describe("read from chain, deployer-chosen text: escape it"),
      decimals: z.number().int().optional(),
      kind: z.enum(["core", "stock", "partner_agent", "launchpad", "bridged", "erc20"]).optional(),
      stock_beacon: z
        .boolean()
        .optional()
        .describe("the screen saw the token on the stock-token issuer's beacon: a stock token for the fee class"),
      tier: z.enum(["A", "B", "C", "blocked"]).nullable().describe("null while screening"),
      tradable: z.boolean(),
      blocked_reason: z.string().nullable().optional().describe("why a blocked token is, e.g. NO_ROUTE"),
      venues: z.array(venue).optional().describe("pools and curve the token trades on"),
      reference: z
        .object({
          source: z.enum(["oracle", "twap", "median", "spot", "curve", "none"]),
          feed: address.optional(),
          pool_id: z.string().optional(),
          curve: address.optional(),
        })
        .catchall(z.unknown())
        .optional()
        .describe("where the token's independent price is read"),
      liquidity_usd: usd.nullable().optional().describe("measured by the screen"),
      creator_tax_bps: bps.optional(),
      curve_fee_bps: bps.nullable().optional(),
      multiplier: z.number().nullable().optional().describe("a stock token's UI multiplier"),
      flags: z
        .object({
          core: z.boolean(),
          proxy: z.boolean(),
          implementation: address.nullable(),
          paused: z.boolean(),
          on_curve: z.boolean(),
          native: z.boolean().optional(),
        })
        .optional(),
      simulation: z
        .object({
          ok: z.boolean(),
          buy_tax_bps: bps.nullable(),
          sell_tax_bps: bps.nullable(),
          honeypot: z.boolean(),
          reason: z.string().nullable(),
          funded_by_overrides: z.boolean(),
        })
        .nullable()
        .optional()
        .describe("a $100 buy and sell through the deepest pool, simulated"),
      risks: z.array(riskRow).describe("disclosures, severe first"),
      limits: z.object({ max_trade_usd: usd }).optional().describe("the tier's defaults"),
      warnings: z.array(z.string()).describe("plain sentences"),
      screened_at: unixS.optional(),
      screen_status: z.enum(["SCREENED", "UNSCREENED"]).describe("UNSCREENED while its simulation runs"),
      fee_bps: bps.optional().describe("the fee a trade of it against a major pays"),
      fee_class: z.enum(["major", "other"]).optional(),
      shield: z.boolean(),
      report: tokenReport.nullable().optional().describe("with shield=1: Shield's verdict (null while screening)"),
      shield_available: z.literal(true).optional().describe("without Shield: Shield could be asked for"),
    })
    .describe("A token record: what it is, where it trades, its risks and its tier."),
);

/** GET tokens: the search. */
export const tokenSearchAnswer = named(
  "TokenSearch",
  z
    .object({
      query: z
        .object({
          q: z.string().nullable(),
          tier: z.string().nullable(),
          kind: z.string().nullable(),
          limit: z.number().int(),
          core_symbol: z.string().optional().describe("q named a core asset's symbol"),
          others_with_symbol: z.number().int().optional().describe("other tokens calling themselves that symbol"),
        })
        .describe("the query as read"),
      tokens: z.array(tokenRecord),
      count: z.number().int(),
      warnings: z.array(z.string()),
      shield: z.boolean(),
    })
    .describe("Tokens matching a name, symbol or address prefix (never screens)."),
);
