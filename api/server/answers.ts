import { z } from "zod";
import { address, bps, hex, named, unixS, usd } from "../http/answers.js";
import { slippageBand } from "../trading/index.js";

/**
 * The answers of SPEC "Server" as zod schemas, in SPEC's words: the OpenAPI document's (api/openapi), and
 * test/answers.test.ts checks the code's answer types fit them.
 */

/** GET health: HTTP 200 unless down (503, the same shape). */
export const healthAnswer = named(
  "Health",
  z
    .object({
      status: z.enum(["ok", "degraded", "down"]),
      service: z.string(),
      version: z.string(),
      checks: z
        .record(z.unknown())
        .optional()
        .describe("each part's reading: chain, indexer, database, treasury, signatures (the secp256k1 backend)"),
    })
    .describe("Health of the chain, indexer and database."),
);

/** A core token as GET config lists it. */
const configToken = z.object({
  address: address.describe("the zero address for native ETH"),
  decimals: z.number().int(),
  kind: z.enum(["native", "wrapped", "stable", "crypto", "partner", "stock"]),
  native: z.boolean().describe("native ETH (no contract)"),
  feed: address.nullable().describe("the oracle feed a client reads its own marks from; null without one"),
});

/** GET config's fee block (schedule 2). */
const configFee = z
  .object({
    schedule: z.number().int().describe("the fee schedule: 2"),
    major_symbols: z.array(z.string()).describe("symbols whose pairs are the major class"),
    major_tiers: z
      .array(z.object({ min_30d_volume_usd: usd, bps }))
      .describe("the major class's rate by the wallet's 30-day volume through the service"),
    other_bps: bps.describe("the rate of every other pair (50)"),
    shield_add_bps: bps.describe("what Shield adds (10)"),
    max_bps: bps.describe("the most any trade pays (100)"),
    recipient: address.describe("the fee recipient: clients pin it and refuse a plan paying another"),
    to_self_allowed: z.boolean(),
    placeholder: address.describe("informational"),
    how: z.string().describe("informational: how the server sets a trade's fee"),
  })
  .describe("How the server sets every fee: clients may only cap it (max_fee_bps).");

/** GET config's limits block. */
const configLimits = z.object({
  max_notional_usd: usd.describe("the largest trade (10,000)"),
  min_notional_usd: usd.describe("the smallest trade (1)"),
  max_slippage_bps: bps,
  default_slippage_bps: bps,
  slippage_tolerance_by_size: z.array(slippageBand),
  max_vs_mid_bps: bps.describe("how far under the pool mid a route may deliver (ROUTE_VS_MID)"),
  max_vs_ref_bps: bps.describe("how far from independent marks a route may price (ROUTE_VS_REF)"),
  deadline_s: z.number().int().describe("a plan's deadline from its build"),
  permit_trade_expiry_s: z.number().int().describe("a `trade` scoped permit's life (30 minutes)"),
  approval_modes: z.array(z.string()).describe("budget, exact, unlimited"),
  default_approval_budget_usd: usd,
  max_approval_budget_usd: usd,
});

/** GET config: what clients pin (chain, contracts, tokens, co-signer, disclosures) and refuse a differing server. */
export const configAnswer = named(
  "Config",
  z
    .object({
      chain_id: z.number().int().describe("4663"),
      version: z.string().describe("the server's version"),
      auth: z
        .object({
          challenge_ttl_s: z.number().int().describe("300"),
          key_ttl_s: z.number().int().describe("2,592,000 (30 days)"),
          domain: z.string().nullable().describe("the domain sign-in messages name; null: sign-in is off"),
          require_partner_agent: z.boolean().describe("sign-in only for partner agents' wallets and owners"),
          key_prefix: z.string().describe("pit_w_"),
          uri: z.string().nullable(),
          version: z.string().describe("the EIP-4361 message version"),
          statement: z.string().describe("the sign-in message's statement"),
        })
        .describe("Sign-in: what the EIP-4361 message names and how long challenges and keys live."),
      router: address.describe("the router every plan's swap calls: pin it"),
      permit_contract: address.describe("Permit2"),
      pool_manager: address,
      v4_quoter: address,
      multicall: address,
      tokens: z.record(configToken).describe("the core tokens by symbol"),
      fee: configFee,
      risks: z.record(z.enum(["severe", "info"])).describe("the risk disclosure table: code to severity"),
      high_price_impact_bps: bps.describe("HIGH_PRICE_IMPACT (severe) from this impact (1000)"),
      price_impact_bps: bps.describe("PRICE_IMPACT (info) from this impact (300)"),
      shield: z.object({ policies: z.array(z.string()), shield_only_risks: z.array(z.string()) }),
      limits: configLimits,
      session: z
        .object({
          cosigner: address.nullable().describe("the co-signer every session trade needs: pin it"),
          delegation_manager: address,
          stateless_delegator: address.describe("the pinned EIP-7702 delegator wallets run"),
          stateless_delegator_version: z.string().describe("1.3.0"),
          enforcers: z.record(address).describe("caveat enforcers by name"),
          leaf_ttl_s: z.number().int().describe("a co-signed leaf's life (120 s)"),
        })
        .describe("Sessions: the co-signer and the delegation contracts."),
      submit_enabled: z.boolean().describe("the server relays signed transactions (live/submit)"),
      universe: z.object({
        hops: z.number().int(),
        known_hooks: z.array(address),
        tiers: z.array(z.string()),
        launchpad: address,
        launchpad_curve_fee_modes: z.record(z.string()),
        pools: z
          .array(
            z.object({
              id: hex.describe("the pool id"),
              currency0: address,
              currency1: address,
              fee: z.number().int().describe("pips"),
              tick_spacing: z.number().int(),
              hooks: address,
            }),
          )
          .describe("the canonical hookless pools between config tokens: clients trade through these alone"),
      }),
    })
    .describe("The server's configuration: clients pin chain, contracts, tokens and co-signer (CONFIG_MISMATCH)."),
);

/** A side of a reference quote at ref_size_usd through the asset's USDG pool. */
const statsSide = z
  .object({
    venue: z.string(),
    fee: bps.describe("the pool's fee"),
    price: usd,
    vs_mark_bps: bps.nullable().describe("against the mark"),
  })
  .nullable();

/** GET stats: one shared answer, rebuilt at most every 5 s; unreadable parts are null. */
export const statsAnswer = named(
  "Stats",
  z
    .object({
      status: z.enum(["ok", "degraded"]).describe("degraded when the chain or the indexer could not be read"),
      generated_at: unixS,
      cached_s: z.number().int().describe("the answer's age: rebuilt at most every 5 s"),
      block: z.object({ number: z.number().int(), age_s: z.number() }).nullable().describe("the chain's head"),
      prices: z
        .object({ block: z.number().int(), age_s: z.number(), ref_size_usd: usd.describe("1000") })
        .nullable()
        .describe("the indexer's head, whose marks and pools price the assets"),
      assets: z
        .array(
          z.object({
            symbol: z.string(),
            kind: z.enum(["crypto", "stock"]),
            mark: usd.nullable(),
            mark_source: z.enum(["oracle", "pool-mid"]).nullable(),
            mid: usd.nullable().describe("the USDG pool's mid"),
            spread_bps: bps.nullable(),
            stale: z.boolean(),
            routes: z.number().int().nullable().describe("routes touching the asset"),
            buy: statsSide,
            sell: statsSide,
          }),
        )
        .nullable()
        .describe("each core asset: its mark, the pool mid, and a buy and a sell of ref_size_usd against the mark"),
      routes: z.number().int().nullable().describe("routes among the core assets"),
      latency_ms: z.object({
        ref_quotes: z.number().nullable(),
        rpc: z.number().nullable(),
        sequencer: z.number().nullable(),
      }),
      relay: z.boolean().describe("the server relays and its sequencer answers"),
      fee_bps: z.object({ major_max: bps, major_min: bps, other: bps, shield_add: bps }),
      tokens: z.object({ tradable: z.number().int() }).nullable().describe("the registry's count; null until one"),
      ai_pool: z
        .object({
          pool_usd: usd,
          left_usd: usd,
          owners_funded: z.number().int(),
          agents_funded: z.number().int(),
        })
        .nullable()
        .describe("the hosted agents' AI credit pool today; null when off or unreadable"),
    })
    .describe("Shared market statistics: chain and indexer heads, core assets' marks and spreads, fees."),
);
