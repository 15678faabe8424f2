import { z } from "zod";
import { address, atoms, bps, hex, named, txHash, unixS, usd } from "../http/answers.js";
import { planSimulation, slippageBand } from "../trading/index.js";

/**
 * The answers of SPEC "Fast mode" as zod schemas, in SPEC's words: the OpenAPI document's (api/openapi), and
 * test/answers.test.ts checks the code's answer types fit them.
 */

/** One hop of a pinned pair: a hookless pool and the direction it is crossed. */
const hop = z.object({
  pool_id: hex,
  currency0: address,
  currency1: address,
  fee: z.number().int().describe("pips"),
  tick_spacing: z.number().int(),
  hooks: address,
  zero_for_one: z.boolean(),
});

/** A pinned pair of the route table, in one direction (SPEC: its inner shape is informational). */
const pair = z.object({
  token_in: z.string(),
  token_out: z.string(),
  address_in: address,
  address_out: address,
  hops: z.array(hop),
  gas_floor: z.number().int().describe("the least gas limit a signed transaction of this pair carries"),
  gas_floor_permit: z.number().int().describe("the same with a permit"),
  max_usd: usd.describe("the largest trade through this pair"),
  fee_side: z.enum(["input", "output"]),
  band_bps: bps.describe("the pair's min_out band (75 against USDG, 125 for a cross pair)"),
});

/** GET live/fast/terms. */
export const fastTermsAnswer = named(
  "FastTerms",
  z
    .object({
      enabled: z.boolean().describe("fast mode is on here (it needs the server to relay)"),
      routes: z
        .object({
          version: z.number().int(),
          sha256: hex.describe("the table's hash: SDKs refuse fast mode when it differs from their pinned table"),
          pairs: z.array(pair),
          max_usd: usd,
        })
        .describe("the pinned route table"),
      deadline_s: z.number().int().describe("a fast transaction's deadline is at most this far away (60)"),
      limits: z.object({
        max_gas: z.number().int(),
        max_fee_multiple: z.number().describe("maxFeePerGas at most this many times the base fee"),
        max_cost_wei: atoms,
        amount_usd_tolerance_bps: bps,
        min_notional_usd: usd,
        min_out_band_bps: z
          .object({ usdg: bps, cross: bps })
          .describe("the min_out band: a pair against USDG, a cross pair"),
        permit_expiry_s: z.number().int(),
      }),
      fee: z
        .object({
          schedule: z.number().int(),
          class: z.literal("major"),
          tier_bps: bps.describe("the wallet's volume tier"),
          bps: bps.describe("the fee to declare and pay (the tier, plus Shield's with shield=1)"),
          shield_add_bps: bps,
          posted_bps: bps,
          recipient: address,
        })
        .describe("the wallet's fee for a fast trade"),
      base_fee_wei: atoms.describe("the latest block's base fee"),
      max_notional_usd: usd,
      mark_max_age_s: z.number().int().describe("an oracle mark older than this is stale (PRICE_STALE)"),
      slippage_tolerance_by_size: z.array(slippageBand),
      stock_session_open: z.boolean().describe("the US stock-token session is open now (MARKET_CLOSED otherwise)"),
      server_time: unixS,
    })
    .describe("What an SDK needs to build a fast transaction the server will relay, for this wallet."),
);

/** The fast trade's simulation, as signed, from the wallet: the plan's, without its block time. */
const fastSimulation = planSimulation
  .omit({ block_time: true })
  .nullable()
  .describe("the signed transaction simulated; null with simulate false");

/** POST live/fast. */
export const fastAnswer = named(
  "FastTrade",
  z
    .object({
      tx_hash: txHash,
      relayed: z.boolean().describe("false with check_only: every check and the simulation ran, nothing relayed"),
      repeat: z.boolean().describe("the same signed bytes were relayed before: the same hash, no second relay"),
      route: z
        .object({
          version: z.number().int(),
          sha256: hex,
          token_in: z.string(),
          token_out: z.string(),
          hops: z.array(hex).describe("pool ids"),
          max_usd: usd,
        })
        .optional()
        .describe("the pinned pair it traded (absent on a repeat of a trade relayed before answers were kept)"),
      fee: z
        .object({
          bps,
          class: z.literal("major"),
          tier: bps,
          shield: z.boolean(),
          side: z.enum(["input", "output"]),
          token: address,
          recipient: address,
        })
        .optional(),
      min_out: atoms.optional(),
      min_out_floor: atoms.nullable().optional().describe("the least min_out the rules accept"),
      checks: z.array(z.string()).optional().describe("the rules checked, in order"),
      simulation: fastSimulation.optional(),
      timings: z.record(z.number()).optional().describe("milliseconds per stage"),
    })
    .describe("A fast trade checked byte for byte and relayed (or, with check_only, only checked)."),
);
