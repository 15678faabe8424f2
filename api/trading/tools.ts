import { z } from "zod";

/**
 * What an agent sends the "quote" and "prepare_trade" MCP tools (api/trading/routes.ts), and what it
 * is told before signing.
 */

export const SIGN_LOCALLY_NOTE =
  "Unsigned plan: this server never holds or asks for a private key. " +
  "Before signing, verify it locally (chain_id 4663; tx.to is config.router, " +
  "or for steps each tx's target; fee recipient is config.fee.recipient; " +
  "amounts and amount_out_min are what you asked), e.g. with @pit/sdk which " +
  "re-derives the plan from its calldata. Sign with your own wallet (steps in order, " +
  "permit typed data if asked), then send the signed raw " +
  "transaction(s) to POST /api/v1/live/submit with the same API key.";

const sizeFields = {
  token_in: z.string().describe("core symbol (ETH, USDG, ...) or token address"),
  token_out: z.string().describe("core symbol or token address"),
  notional_usd: z.number().positive().optional().describe("size in dollars (this or amount_in)"),
  amount_in: z.string().optional().describe("size in input atoms, decimal string (this or notional_usd)"),
  slippage_bps: z.number().int().optional(),
  venues: z.array(z.string()).optional(),
  accept_risks: z.array(z.string()).optional().describe("severe risk codes accepted"),
  shield: z.boolean().optional(),
  policies: z.array(z.string()).optional(),
};

// passthrough: the REST route, not this schema, decides which other fields are allowed.
export const quoteInput = z.object({ ...sizeFields, fast: z.boolean().optional() }).passthrough();
export const prepareInput = z
  .object({
    wallet: z.string().describe("your wallet address: must be the API key's wallet"),
    ...sizeFields,
    min_amount_out: z.string().optional(),
    approval_mode: z.enum(["budget", "exact", "unlimited"]).optional(),
    approval_budget_usd: z.number().optional(),
    allow_unlimited_approval: z.boolean().optional(),
    permit_mode: z.enum(["signature", "transaction"]).optional(),
    permit_scope: z.enum(["trade", "30d"]).optional(),
    permit_signature: z
      .string()
      .optional()
      .describe("second call of the permit round trip: your signature of the plan's permit typed data"),
    permit_now: z.number().optional(),
    route_id: z.string().optional(),
    fund: z.union([z.literal("auto"), z.boolean()]).optional(),
    curve_fee_mode: z.enum(["auto", "batch", "two_step"]).optional(),
    owner_attests_non_us: z.boolean().optional(),
    max_fee_bps: z.number().int().optional(),
  })
  .passthrough();
