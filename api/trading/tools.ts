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
  slippage_bps: z.number().int().optional().describe("slippage tolerance in basis points"),
  venues: z.array(z.string()).optional().describe("only these venues (v4, curve, ...)"),
  accept_risks: z.array(z.string()).optional().describe("severe risk codes accepted"),
  shield: z.boolean().optional().describe("screen the token with Shield (its fee applies)"),
  policies: z.array(z.string()).optional().describe("policies to apply (block_risks, ...)"),
};

// passthrough: the REST route, not this schema, decides which other fields are allowed.
export const quoteInput = z
  .object({ ...sizeFields, fast: z.boolean().optional().describe("quote for fast mode (live/fast)") })
  .passthrough();
export const prepareInput = z
  .object({
    wallet: z.string().describe("your wallet address: must be the API key's wallet"),
    ...sizeFields,
    min_amount_out: z.string().optional().describe("least output atoms you accept, decimal string"),
    approval_mode: z.enum(["budget", "exact", "unlimited"]).optional().describe("how much to approve"),
    approval_budget_usd: z.number().optional().describe("approval size in dollars (approval_mode budget)"),
    allow_unlimited_approval: z.boolean().optional().describe("required with approval_mode unlimited"),
    permit_mode: z.enum(["signature", "transaction"]).optional().describe("Permit2 by signature or transaction"),
    permit_scope: z.enum(["trade", "30d"]).optional().describe("the permit covers this trade or 30 days"),
    permit_signature: z
      .string()
      .optional()
      .describe("second call of the permit round trip: your signature of the plan's permit typed data"),
    permit_now: z.number().optional().describe("second call: the permit_now the first answer gave"),
    route_id: z.string().optional().describe("a route the quote answered, to pin it"),
    fund: z
      .union([z.literal("auto"), z.boolean()])
      .optional()
      .describe("wrap or fund the input as needed"),
    curve_fee_mode: z.enum(["auto", "batch", "two_step"]).optional().describe("a curve swap's fee in one call or two"),
    owner_attests_non_us: z.boolean().optional().describe("you attest the wallet's owner is not a US person"),
    max_fee_bps: z.number().int().optional().describe("refuse if the fee would be higher (basis points)"),
  })
  .passthrough();
