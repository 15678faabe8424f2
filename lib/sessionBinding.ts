import { keccak256, stringToBytes, type Address, type Hex } from "viem";
import { canonicalJson } from "./canonicalJson.js";
import { FEE_SCHEDULE, MAJOR_TIERS, OTHER_BPS, SHIELD_ADD_BPS, type FeeClass } from "./fees.js";

/**
 * A session's limits binding (version 3: limits, fee terms under schedule 2, risk terms, tokens).
 * Its hash is the root delegation's salt, so the wallet's one signature commits to the off-chain
 * limits the co-signer holds: a stored binding that no longer hashes to the salt is refused
 * (SESSION_BOUND) instead of trusted.
 */
export const BINDING_VERSION = 3;
/** A trade this close to the session's end is refused (SESSION_EXPIRY): its leaf could outlive the session. */
export const EXPIRY_MARGIN_S = 10;

export type SessionBinding = {
  version: typeof BINDING_VERSION;
  chain_id: number;
  wallet: Address;
  executor: Address;
  cosigner: Address;
  /** Token addresses (ETH is the zero address), lowercase, sorted. */
  tokens: string[];
  limits: { max_trade_usd: number; max_day_usd: number; max_trades: number };
  expires: number;
  setup_budget_usd: number;
  fee: { schedule: number; major_min_bps: number; major_max_bps: number; other_bps: number; shield_add_bps: number };
  risk_terms: { accept_risks: string[]; shield: boolean; policies: string[] };
  /**
   * Owner-signed marks of the session's feedless tokens (no oracle feed), keyed by lowercase
   * address: the co-signer prices those sides at them (SIGNED_MARK_PRICE) because a thin pool can
   * be moved at trade time; it refuses to hold a root whose mark is far from its own read of the
   * source (CAP_PRICE). Absent when every token has a feed, so such bindings hash as before.
   */
  marks?: Record<string, SignedMark>;
  /** The launchpad curve tokens the session's curve root lets the executor trade (lowercase). */
  curve_tokens?: string[];
};

/** Where a signed mark was read, so the co-signer can read it again itself. */
export type MarkSource =
  | {
      kind: "pool";
      currency0: string;
      currency1: string;
      fee: number;
      tick_spacing: number;
      hooks: string;
      against: string;
    }
  | { kind: "curve"; launchpad: string };
export type SignedMark = { usd: number; decimals: number; source: MarkSource };

/** Schedule 2's fee terms as a binding carries them. */
export const feeTermsOfSchedule2 = (): SessionBinding["fee"] => ({
  schedule: FEE_SCHEDULE,
  major_min_bps: Math.min(...MAJOR_TIERS.map((t) => t.bps)),
  major_max_bps: Math.max(...MAJOR_TIERS.map((t) => t.bps)),
  other_bps: OTHER_BPS,
  shield_add_bps: SHIELD_ADD_BPS,
});

/** keccak256 of the canonical JSON: the root's salt (as uint256). */
export { canonicalJson };
export const bindingHash = (b: SessionBinding): Hex => keccak256(stringToBytes(canonicalJson(b)));
export const bindingSalt = (b: SessionBinding): bigint => BigInt(bindingHash(b));

/**
 * The fees a binding allows for a trade of `feeClass`: major, any pinned tier between its minimum
 * and maximum; other, exactly other_bps; Shield adds its bps when the binding's terms turn it on.
 */
export function allowedFeeBps(b: SessionBinding, feeClass: FeeClass): number[] {
  const add = b.risk_terms.shield ? b.fee.shield_add_bps : 0;
  if (feeClass === "other") return [b.fee.other_bps + add];
  return MAJOR_TIERS.map((t) => t.bps)
    .filter((bps) => bps >= b.fee.major_min_bps && bps <= b.fee.major_max_bps)
    .map((bps) => bps + add);
}
