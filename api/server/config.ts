import type { Config } from "../../lib/config.js";
import { LEAF_TTL_S } from "../../lib/delegation.js";
import { FEE_SCHEDULE, MAJOR_TIERS, MAX_FEE_BPS, OTHER_BPS, SHIELD_ADD_BPS, majorSymbols } from "../../lib/fees.js";
import { RISKS } from "../../lib/risks.js";
import { CHALLENGE_TTL_S, KEY_PREFIX, KEY_TTL_S, SIGN_IN_STATEMENT } from "../auth/index.js";
import { APPROVAL_MODES, LIMITS, SHIELD_POLICIES } from "../trading/index.js";

/**
 * The GET /config answer. Built once from Config: it depends on nothing that changes while the
 * process runs, so clients can pin it and it is identical across restarts with the same config.
 * Fields not yet served by later capabilities keep their SPEC.md names with what exists now.
 */
export function publicConfig(config: Config) {
  const c = config.contracts;
  return {
    chain_id: config.chainId,
    version: config.version,
    auth: {
      challenge_ttl_s: CHALLENGE_TTL_S,
      key_ttl_s: KEY_TTL_S,
      domain: config.authDomain,
      require_partner_agent: config.requirePartnerAgent,
      key_prefix: KEY_PREFIX,
      uri: config.authDomain ? `https://${config.authDomain}` : null,
      version: "1",
      statement: SIGN_IN_STATEMENT,
    },
    router: c.universalRouter,
    permit_contract: c.permit2,
    // Where clients read outcomes and their own quotes (the SDK: ETH paid out by the last Swap).
    pool_manager: c.poolManager,
    v4_quoter: c.v4Quoter,
    multicall: c.multicall3,
    tokens: Object.fromEntries(
      // feed: the oracle a client reads its own marks from (SDK rule PRICE); null without one.
      Object.values(config.tokens).map((t) => [
        t.symbol,
        { address: t.address, decimals: t.decimals, kind: t.kind, native: t.native, feed: t.feed },
      ]),
    ),
    fee: feeConfig(config),
    risks: RISKS,
    high_price_impact_bps: LIMITS.highPriceImpactBps,
    price_impact_bps: LIMITS.priceImpactBps,
    shield: {
      policies: SHIELD_POLICIES,
      shield_only_risks: ["UNVERIFIED"],
    },
    limits: limitsConfig(),
    session: {
      cosigner: config.cosigner,
      delegation_manager: c.delegationManager,
      stateless_delegator: c.statelessDelegator,
      stateless_delegator_version: "1.3.0",
      enforcers: c.enforcers,
      leaf_ttl_s: LEAF_TTL_S,
    },
    submit_enabled: config.submitEnabled,
    universe: {
      hops: 2,
      known_hooks: ["0x0000000000000000000000000000000000000000"],
      tiers: ["A", "B", "C", "blocked"],
      launchpad: c.launchpad,
      launchpad_curve_fee_modes: { 0: "protocol fee 100 bps", 1: "protocol fee 100 bps + creator fee 50 bps" },
      // The canonical pools: clients pin them and trade (and build fast mode's table) through these alone.
      pools: canonicalPools(config),
    },
  };
}

/** GET /config's fee block: the schedule, tiers and recipient, and how the server sets a trade's fee. */
function feeConfig(config: Config) {
  return {
    schedule: FEE_SCHEDULE,
    major_symbols: majorSymbols(config.tokens),
    major_tiers: MAJOR_TIERS,
    other_bps: OTHER_BPS,
    shield_add_bps: SHIELD_ADD_BPS,
    max_bps: MAX_FEE_BPS,
    recipient: config.feeRecipient,
    to_self_allowed: false,
    placeholder: "0x0000000000000000000000000000000000000000",
    how:
      "Set by the server from the trade's class (major when both tokens are major symbols or stock tokens, else " +
      "other), the wallet's 30-day volume tier and Shield; paid to the recipient inside the router call, input " +
      "side by TRANSFER or output side by PAY_PORTION.",
  };
}

/** GET /config's limits block: notional, slippage, price checks, deadlines and approval budgets. */
function limitsConfig() {
  return {
    max_notional_usd: LIMITS.maxNotionalUsd,
    min_notional_usd: LIMITS.minNotionalUsd,
    max_slippage_bps: LIMITS.slippageBySize[0]!.max_slippage_bps,
    default_slippage_bps: LIMITS.defaultSlippageBps,
    slippage_tolerance_by_size: LIMITS.slippageBySize,
    max_vs_mid_bps: LIMITS.maxVsMidBps,
    max_vs_ref_bps: LIMITS.maxVsRefBps,
    deadline_s: LIMITS.deadlineS,
    permit_trade_expiry_s: LIMITS.permitTradeExpiryS,
    approval_modes: APPROVAL_MODES,
    default_approval_budget_usd: LIMITS.defaultApprovalBudgetUsd,
    max_approval_budget_usd: LIMITS.maxApprovalBudgetUsd,
  };
}

/**
 * The universe's hookless pools between config tokens (ETH as 0x0), as clients pin them: a pool of
 * a fixture or an unknown token, or with hooks outside known_hooks, is none of theirs.
 */
function canonicalPools(config: Config) {
  const core = new Set(Object.values(config.tokens).map((t) => t.address.toLowerCase()));
  return config.pools
    .filter((p) => BigInt(p.hooks) === 0n && core.has(p.currency0.toLowerCase()) && core.has(p.currency1.toLowerCase()))
    .map((p) => ({
      id: p.id,
      currency0: p.currency0,
      currency1: p.currency1,
      fee: p.fee,
      tick_spacing: p.tickSpacing,
      hooks: p.hooks,
    }));
}
