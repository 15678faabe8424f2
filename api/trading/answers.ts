import { z } from "zod";
import { address, atoms, bps, hex, named, riskRow, txHash, unixS, usd } from "../http/answers.js";

export { riskRow };

/**
 * The answers of SPEC "Trading" (quote, build, prepare, simulate, revoke, submit) as zod schemas, in SPEC's words:
 * the OpenAPI document's (api/openapi), and test/answers.test.ts checks the code's answer types fit them.
 */

/** A token as an answer names it: the request's name for it and what the chain says. */
export const tokenRef = named(
  "TokenRef",
  z
    .object({
      token: z.string().describe("the token as named: a core symbol or a 0x address"),
      address: address.nullable(),
      symbol: z.string().nullable().describe("deployer-chosen text: show as text"),
      name: z.string().nullable().describe("deployer-chosen text: show as text"),
      decimals: z.number().int().nullable(),
    })
    .describe("A token: its name in the request, address, symbol, name and decimals."),
);

/** Shield's verdict on a trade's tokens (only with shield=1). */
export const tradeReport = named(
  "ShieldReport",
  z
    .object({
      verdict: z.enum(["verified", "unverified", "flagged"]).nullable().describe("the worst verdict of the tokens"),
      url: z.string().nullable(),
      source: z.string(),
      checked_at: unixS,
      tokens: z
        .record(
          z.object({
            verdict: z.enum(["verified", "unverified", "flagged"]),
            url: z.string(),
            source: z.string(),
            checked_at: unixS,
          }),
        )
        .optional()
        .describe("each token's verdict, by address"),
    })
    .describe("Shield's verdict report: {verdict, url, source, checked_at}."),
);

/**
 * What every quote, plan, simulation and session trade answers at its top level (SPEC "Core conventions"):
 * the fee set by the server, Shield, and its report or shield_available.
 */
export const feeFields = {
  fee_bps: bps.describe("the fee the trade pays, in basis points (set by the server)"),
  fee_class: z.enum(["major", "other"]).describe("the trade's fee class"),
  fee_tier: bps.describe("the wallet's volume-tier rate before Shield"),
  fee_side: z.enum(["input", "output"]).describe("which side of the trade the fee is taken from"),
  fee_token: address.describe("the token the fee is paid in (the zero address: ETH)"),
  shield: z.boolean().describe("whether Shield was asked for"),
  report: tradeReport.optional(),
  shield_available: z.literal(true).optional().describe("without Shield: Shield could be asked for"),
  risks: z.array(riskRow).describe("the trade's risk disclosures, severe first"),
};

/** A transaction as the service builds it for the wallet to sign. */
export const planTx = named(
  "Transaction",
  z
    .object({
      to: address,
      data: hex.describe("calldata"),
      value: atoms.describe("wei"),
      chain_id: z.number().int().describe("4663"),
    })
    .describe("An unsigned transaction to verify and sign locally."),
);

/** One step of a plan (SPEC "Plan" steps). */
export const planStep = named(
  "Step",
  z
    .object({
      kind: z.enum(["approve", "sign_permit", "fee_transfer", "swap"]),
      why: z.string().describe("what the step does, for a person"),
      tx: planTx.nullable().describe("the transaction to send; null for a signature (sign_permit)"),
      decoded: z.record(z.unknown()).describe("the step decoded: function and arguments, or the typed data to sign"),
    })
    .describe("A step of a plan, in order."),
);

/** A quoted route (SPEC "Quote route row"); an aggregator's comparison row is quote_only. */
export const routeRow = named(
  "RouteRow",
  z
    .object({
      id: z.string(),
      venue: z.string(),
      label: z.string(),
      ok: z.boolean().describe("the route quoted"),
      amount_out: atoms.nullable(),
      vs_mid_bps: bps.nullable().describe("the output against the mid price"),
      gas: z.number().nullable().optional(),
      gas_usd: usd.nullable().optional(),
      total_bps: bps.nullable().optional().describe("price and gas against the mid"),
      impact_bps: bps.nullable().optional().describe("address-named tokens: the price impact"),
      guard_bps: bps.optional().describe("address-named tokens: the guard on the impact"),
      error: z.string().optional().describe("why the route did not quote"),
    })
    .describe("A quoted route: id, venue, label, ok, amount_out, vs_mid_bps, gas, gas_usd, total_bps."),
);

/** An aggregator's price for the same trade, for comparison (quoted, never built here). */
export const aggregatorRow = named(
  "AggregatorRow",
  z
    .object({
      id: z.string(),
      venue: z.string(),
      label: z.string(),
      quote_only: z.literal(true),
      ok: z.boolean(),
      amount_out: atoms.nullable(),
      gas: z.number().nullable().optional(),
      error: z.string().nullable(),
      vs_mid_bps: bps.optional().describe("when it quoted: against the best route's mid"),
      gas_usd: usd.nullable().optional(),
      total_bps: bps.nullable().optional(),
    })
    .describe("An aggregator's quote for comparison: quote_only, never built here."),
);

/** A mark as an answer shows it. */
export const markView = named(
  "Mark",
  z
    .object({
      usd: usd,
      source: z.enum(["oracle", "twap", "fixed", "pool-mid", "curve"]),
      age_s: z.number().nullable(),
      stale: z.boolean(),
    })
    .describe("An independent USD price: its source, age and staleness."),
);

const policyView = {
  ok: z.boolean().describe("the policy lets the trade through"),
  code: z.string().nullable().describe("the refusal's code when not ok"),
  message: z.string().nullable(),
  checks: z.array(z.string()).describe("the checks run"),
};

/** live/quote: every route and the policy's verdict; read-only, never refused for risk. */
export const quoteAnswer = named(
  "Quote",
  z
    .object({
      token_in: tokenRef,
      token_out: tokenRef,
      amount_in: atoms,
      notional_usd: usd,
      slippage_bps: bps,
      best: routeRow.describe("the best route"),
      routes: z
        .array(z.union([routeRow, aggregatorRow]))
        .describe("every route quoted, ours ranked first, then aggregators' for comparison"),
      candidates: z.number().int(),
      fast: z.object({ used_recent_winner: z.boolean() }).optional().describe("with fast: the pair's last winner"),
      mid: z
        .object({ price: z.number(), route: z.string(), source: z.enum(["curve", "pool-mid"]) })
        .nullable()
        .describe("the mid price of the best route"),
      marks: z.object({ token_in: markView.nullable(), token_out: markView.nullable(), ETH: markView.nullable() }),
      gas_price_wei: atoms,
      eth_usd: usd.nullable(),
      policy: z.object({ ...policyView, unaccepted: z.array(z.string()).describe("severe codes not accepted") }),
      policy_ok: z.boolean(),
      timings: z.record(z.number()).describe("milliseconds per stage"),
      ...feeFields,
    })
    .describe("Routes and marks for a trade."),
);

/** The plan's fee object (SPEC "Plan" fee). */
const planFee = z
  .object({
    bps: bps,
    side: z.enum(["input", "output"]),
    recipient: address.describe("the fee recipient: clients pin it (config fee.recipient)"),
    token: address,
    command: z.string(),
    amount: atoms,
  })
  .describe("The fee as built: bps, side, recipient, token, command, amount.");

/** The plan's simulation (SPEC "Plan" simulation); a fast trade's is the same without the block time. */
export const planSimulation = z
  .object({
    ok: z.boolean(),
    error: z.string().nullable(),
    amount_out: atoms.nullable(),
    fee_transfer: z.object({ token: address, to: address, amount: atoms }).nullable(),
    gas_total: z.number(),
    gas: z.array(z.number()),
    funded_by_overrides: z.boolean().describe("balances were lent to the simulation"),
    block_time: unixS,
  })
  .describe("The plan simulated against the chain.");

/** live/build and live/prepare: SPEC "Plan". */
export const planAnswer = named(
  "Plan",
  z
    .object({
      ready: z.boolean().describe("every step has its transaction (false: a permit to sign first)"),
      tx: planTx.nullable().describe("the swap's transaction, once ready"),
      steps: z.array(planStep),
      execution: z.enum(["router", "curve", "batch"]),
      route: routeRow,
      quote: z.object({
        amount_out: atoms.nullable(),
        vs_mid_bps: bps.nullable(),
        gas: z.number().nullable().optional(),
        gas_usd: usd.nullable().optional(),
      }),
      amount_in: atoms,
      notional_usd: usd.describe("fee included"),
      amount_out_min: atoms,
      amount_out_expected: atoms,
      deadline: unixS,
      fee: planFee,
      simulation: planSimulation.nullable().optional().describe("prepare only: null until ready"),
      checks: z.array(z.string()),
      policy_ok: z.boolean().describe("always true: a plan the policy refuses is refused"),
      permit: z
        .object({ mode: z.string(), scope: z.string(), typed_data: z.unknown(), signed: z.boolean() })
        .partial()
        .nullable(),
      permit_now: unixS.nullable().describe("the time the permit was built for: send it back with the signature"),
      approval: z
        .object({
          mode: z.string(),
          budget: usd.nullable(),
          allowance_left: atoms,
          reason: z.string().nullable(),
          left_after_trade: atoms.nullable(),
        })
        .partial()
        .nullable(),
      wallet_state: z.object({
        wallet: address,
        eth: atoms,
        token_in: atoms,
        token_out: atoms,
        permit2_allowance: atoms.nullable(),
        router_permit: z.object({ amount: atoms, expiration: unixS, nonce: z.number() }).nullable(),
        delegated: z.boolean(),
      }),
      tokens: z.object({ token_in: tokenRef, token_out: tokenRef }),
      accepted_risks: z.array(z.string()),
      timings: z.record(z.number()),
      plan_id: z.number().int().nullable().describe("the stored plan the relay compares signed transactions with"),
      ...feeFields,
    })
    .describe("A plan for the wallet to sign: transactions, fee, checks, simulation."),
);

/** live/simulate. */
export const simulateAnswer = named(
  "Simulation",
  z
    .object({
      ok: z.boolean(),
      error: z.string().nullable(),
      block: z.object({ number: z.number().int(), timestamp: unixS }),
      transactions: z.array(
        z.object({ kind: planStep.shape.kind, to: address, value: atoms, gas: z.number().nullable() }),
      ),
      amount_out: atoms.nullable(),
      amount_out_min: atoms,
      fee_paid: atoms.nullable(),
      fee_transfer: z.object({ token: address, to: address, amount: atoms }).nullable(),
      gas_total: z.number(),
      gas_usd: usd.nullable(),
      funded_by_overrides: z.boolean(),
      synthetic: z.boolean().describe("simulated from a funded synthetic wallet (no wallet given)"),
      mode: z.string().optional(),
      build: z.object({
        route: routeRow,
        amount_in: atoms,
        amount_out_expected: atoms,
        deadline: unixS,
        steps: z.array(z.object({ kind: planStep.shape.kind, tx: planTx.nullable() })),
      }),
      policy: z.object(policyView),
      timings: z.record(z.number()),
      ...feeFields,
    })
    .describe("A trade simulated against the chain."),
);

/** live/revoke (and live/prepare with action revoke). */
export const revokeAnswer = named(
  "RevokePlan",
  z
    .object({
      steps: z.array(planStep),
      before: z.array(
        z.object({
          token: address,
          spender: address,
          allowance: atoms,
          router_permit: z.object({ amount: atoms, expiration: unixS, live: z.boolean() }).nullable(),
        }),
      ),
      simulation: z
        .object({
          ok: z.boolean(),
          after: z.array(z.object({ token: address, allowance: atoms, router_permit_amount: atoms })),
        })
        .nullable(),
      ready: z.boolean(),
      nothing_to_revoke: z.boolean(),
      note: z.string(),
    })
    .describe("Transactions that revoke the wallet's approvals, simulated."),
);

/** live/prepare: a plan, or with action "revoke" the revocation's plan. */
export const prepareAnswer = z.union([planAnswer, revokeAnswer]);

/** live/submit. */
export const submitAnswer = named(
  "Submitted",
  z
    .object({
      tx_hash: txHash.describe("the swap's hash"),
      as_built: z
        .boolean()
        .describe("always true: the signed transactions match what the service built, byte for byte"),
      repeat: z.boolean().describe("the same signed swap was relayed before: its hash, no second relay"),
      tx_hashes: z.array(txHash).optional().describe("with raw_txs: every transaction sent, in order"),
      fee_first: z.boolean().optional().describe("with raw_txs: the fee was sent and mined before the swap"),
      timings: z.object({ total_ms: z.number(), fee_wait_ms: z.number().optional() }),
    })
    .describe("The relayed transaction's hash."),
);

/** A trade as GET me/trades lists it (SPEC "Trade record"). */
export const tradeRecord = named(
  "TradeRecord",
  z
    .object({
      id: z.number().int(),
      time: unixS,
      path: z.enum(["agent", "session", "hosted", "fast"]),
      status: z.enum(["pending", "mined", "reverted", "dropped", "refused"]).describe("dropped, refused: refused=1"),
      token_in: tokenRef.nullable(),
      token_out: tokenRef.nullable(),
      amount_in: atoms.nullable(),
      amount_out: atoms.nullable().describe("actual once mined, else the plan's minimum; null when nothing came out"),
      amount_out_kind: z.enum(["actual", "minimum"]).nullable(),
      amount_out_min: atoms.nullable(),
      tx_hash: txHash.nullable(),
      block: z.number().int().nullable(),
      session_id: z.string().nullable(),
      code: z.string().optional().describe("refused rows: the refusal's code"),
    })
    .describe("A trade record (me/trades)."),
);

/** One size band of the slippage table (GET config limits and fast terms: `slippage_tolerance_by_size`). */
export const slippageBand = named(
  "SlippageBand",
  z
    .object({
      max_notional_usd: usd.describe("the band covers trades up to this size"),
      max_slippage_bps: bps.describe("the most slippage a trade of this size may ask"),
      default_slippage_bps: z
        .object({ major: bps, other: bps })
        .describe("the default when the request names none, by fee class"),
    })
    .describe("A size band of the slippage table: the cap and the defaults for trades up to its size."),
);
