import type { Address } from "viem";
import { FEE_SCHEDULE, MAJOR_TIERS, SHIELD_ADD_BPS, feeFor } from "../../lib/fees.js";
import { BAND_BPS } from "../../lib/fastRoutes.js";
import { FEED_GRACE_S, FEED_HEARTBEAT_S } from "../../lib/markStale.js";
import { stockMarketOpen } from "../../lib/marketHours.js";
import { rpc } from "../errors/index.js";
import { LIMITS } from "../trading/index.js";
import { FAST_LIMITS } from "./checks.js";
import type { FastDeps } from "./fast.js";

/**
 * GET live/fast/terms: what an SDK needs to build a fast transaction the server will relay, for this
 * wallet (and Shield's fee with shield).
 */
export async function fastTerms(d: FastDeps, wallet: Address, shield: boolean) {
  const [volume, head] = await Promise.all([d.volume.usd30d(wallet), rpc(d.head())]);
  const fee = feeFor({ feeClass: "major", volume30dUsd: volume, shield });
  const now = Math.floor(d.clock() / 1000);
  return {
    enabled: d.config.fastEnabled && d.config.submitEnabled,
    routes: { version: d.table.version, sha256: d.sha256, pairs: d.table.pairs, max_usd: d.table.max_usd },
    deadline_s: FAST_LIMITS.deadlineS,
    limits: {
      max_gas: FAST_LIMITS.maxGas,
      max_fee_multiple: FAST_LIMITS.maxFeeMultiple,
      max_cost_wei: FAST_LIMITS.maxCostWei.toString(),
      amount_usd_tolerance_bps: FAST_LIMITS.amountUsdToleranceBps,
      min_notional_usd: LIMITS.minNotionalUsd,
      min_out_band_bps: BAND_BPS,
      permit_expiry_s: LIMITS.permitTradeExpiryS,
    },
    fee: {
      schedule: FEE_SCHEDULE,
      class: "major" as const,
      tier_bps: fee.tier,
      bps: fee.bps,
      shield_add_bps: SHIELD_ADD_BPS,
      posted_bps: Math.max(...MAJOR_TIERS.map((t) => t.bps)),
      recipient: d.config.feeRecipient,
    },
    base_fee_wei: head.baseFee.toString(),
    max_notional_usd: LIMITS.maxNotionalUsd,
    mark_max_age_s: FEED_HEARTBEAT_S + FEED_GRACE_S,
    slippage_tolerance_by_size: LIMITS.slippageBySize,
    stock_session_open: stockMarketOpen(now),
    server_time: now,
  };
}
