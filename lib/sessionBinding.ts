import { keccak256, stringToBytes, type Address, type Hex } from "viem";
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
};

/** Schedule 2's fee terms as a binding carries them. */
export const feeTermsOfSchedule2 = (): SessionBinding["fee"] => ({
  schedule: FEE_SCHEDULE,
  major_min_bps: Math.min(...MAJOR_TIERS.map((t) => t.bps)),
  major_max_bps: Math.max(...MAJOR_TIERS.map((t) => t.bps)),
  other_bps: OTHER_BPS,
  shield_add_bps: SHIELD_ADD_BPS,
});

/**
 * Canonical JSON: object keys sorted, no whitespace, arrays in order, only strings, finite
 * numbers, booleans and null (anything else throws rather than hash differently per runtime).
 */
export function canonicalJson(v: unknown): string {
  if (v === null || typeof v === "boolean" || typeof v === "string") return JSON.stringify(v);
  if (typeof v === "number") {
    if (!Number.isFinite(v)) throw new Error("canonical JSON has no NaN or Infinity");
    return JSON.stringify(v);
  }
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(",")}]`;
  if (typeof v === "object") {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
      .join(",")}}`;
  }
  throw new Error(`canonical JSON cannot hold a ${typeof v}`);
}

/** keccak256 of the canonical JSON: the root's salt (as uint256). */
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
