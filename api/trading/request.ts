import { z } from "zod";
import { Refusal, parseBody } from "../errors/index.js";
import { AGGREGATOR_VENUES } from "../ports/aggregators.js";
import { LIMITS, SHIELD_POLICIES } from "./policy.js";
import { BUILDABLE_VENUES } from "./routing.js";

const atoms = z.string().regex(/^\d{1,78}$/, "must be a decimal string of atoms");
const bps = z.number().int().min(0).max(10_000);
const hex = z.string().regex(/^0x[0-9a-fA-F]*$/);
const tradeFields = {
  wallet: z
    .string()
    .regex(/^0x[0-9a-fA-F]{40}$/, "must be a 0x address")
    .optional(),
  token_in: z.string().min(1).max(64),
  token_out: z.string().min(1).max(64),
  notional_usd: z.number().positive().finite().optional(),
  amount_in: atoms.optional(),
  slippage_bps: bps.optional(),
  min_amount_out: atoms.optional(),
  accept_risks: z.array(z.string().max(64)).max(32).default([]),
  shield: z.boolean().default(false),
  policies: z.array(z.string().max(64)).max(8).default([]),
  approval_mode: z.string().max(32).default("budget"),
  approval_budget_usd: z.number().finite().default(LIMITS.defaultApprovalBudgetUsd),
  allow_unlimited_approval: z.boolean().default(false),
  permit_mode: z.enum(["signature", "transaction"]).default("signature"),
  permit_scope: z.enum(["trade", "30d"]).default("trade"),
  permit_signature: hex.optional(),
  permit_now: z.number().int().positive().optional(),
  route_id: z.string().max(400).optional(),
  venues: z.array(z.string().max(32)).max(8).optional(),
  fund: z.union([z.literal("auto"), z.boolean()]).default("auto"),
  curve_fee_mode: z.enum(["auto", "batch", "two_step"]).default("auto"),
  owner_attests_non_us: z.boolean().default(false),
  action: z.enum(["trade", "revoke"]).default("trade"),
  max_fee_bps: bps.optional(),
  mode: z.enum(["later", "first"]).default("later"),
  fast: z.boolean().default(false),
};
export const tradeRequest = z.object(tradeFields).strict();
export type TradeRequest = z.infer<typeof tradeRequest>;

/** The rules across fields, once every field's own rule passed (BAD_REQUEST, before any token is read). */
function checkedTrade(r: TradeRequest): TradeRequest {
  if ((r.notional_usd === undefined) === (r.amount_in === undefined))
    throw new Refusal("BAD_REQUEST", "send exactly one of notional_usd or amount_in");
  if (r.amount_in !== undefined && BigInt(r.amount_in) === 0n)
    throw new Refusal("BAD_REQUEST", "amount_in must be above 0");
  for (const pol of r.policies)
    if (!(SHIELD_POLICIES as readonly string[]).includes(pol))
      throw new Refusal("BAD_REQUEST", `unknown policy ${pol}; known: ${SHIELD_POLICIES.join(", ")}`);
  if (r.policies.length && !r.shield) throw new Refusal("BAD_REQUEST", "policies apply with shield true");
  if ((r.permit_signature === undefined) !== (r.permit_now === undefined))
    throw new Refusal(
      "BAD_REQUEST",
      "permit_signature and permit_now come together (the second call of the permit round trip)",
    );
  const known = [...BUILDABLE_VENUES, ...AGGREGATOR_VENUES] as readonly string[];
  for (const v of r.venues ?? [])
    if (!known.includes(v)) throw new Refusal("BAD_REQUEST", `unknown venue ${v}; known: ${known.join(", ")}`);
  return r;
}

/**
 * A trade's body as the edge parses it (quote, build, simulate, prepare): every field's rule, then
 * the rules across fields (their own messages, thrown as they are met).
 */
export const tradeBody = tradeRequest.transform(checkedTrade);
/** The trade stages' input (api/trading/routes.ts parses it; sessions build it with parseTradeRequest). */
export type TradeParameters = z.infer<typeof tradeBody>;

/** FEE_FIXED: a body naming fee_bps is refused before any field is read (SPEC's order). */
export function assertNoFee(body: Record<string, unknown>): void {
  if ("fee_bps" in body) throw new Refusal("FEE_FIXED", "the server sets the fee; send max_fee_bps to cap it");
}

/** Parses a trading body: FEE_FIXED before anything else, then every field's rule. */
export function parseTradeRequest(body: Record<string, unknown>): TradeParameters {
  assertNoFee(body);
  return parseBody(tradeBody, body);
}
