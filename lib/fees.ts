/**
 * Fee schedule 2 (SPEC.md "Limits": major posted 25 bps down to the lowest volume tier 10 bps;
 * other 50 bps; Shield adds 10 bps; max 100 bps). Pure numbers shared by /config, quotes and
 * the co-signer; the server sets every fee from these, clients may only cap it.
 */
export const FEE_SCHEDULE = 2;
export const MAJOR_TIERS = [
  { min_30d_volume_usd: 0, bps: 25 },
  { min_30d_volume_usd: 100_000, bps: 20 },
  { min_30d_volume_usd: 1_000_000, bps: 15 },
  { min_30d_volume_usd: 10_000_000, bps: 10 },
] as const;
export const OTHER_BPS = 50;
export const SHIELD_ADD_BPS = 10;
export const MAX_FEE_BPS = 100;

/**
 * The major fee class: every core symbol but the partner token (stock tokens named by address join via their beacon).
 */
export const majorSymbols = (tokens: Record<string, { symbol: string; kind: string }>): string[] =>
  Object.values(tokens)
    .filter((t) => t.kind !== "partner")
    .map((t) => t.symbol);

export type FeeClass = "major" | "other";

/** A schedule's numbers; schedule 2 is the one served. Tests pass others to reach the cap. */
export type FeeSchedule = {
  majorTiers: readonly { min_30d_volume_usd: number; bps: number }[];
  otherBps: number;
  shieldAddBps: number;
  maxBps: number;
};
export const SCHEDULE_2: FeeSchedule = {
  majorTiers: MAJOR_TIERS,
  otherBps: OTHER_BPS,
  shieldAddBps: SHIELD_ADD_BPS,
  maxBps: MAX_FEE_BPS,
};

/** The volume tier's major rate: the highest threshold the 30-day volume reaches. */
export function majorTierBps(volume30dUsd: number, tiers: FeeSchedule["majorTiers"] = MAJOR_TIERS): number {
  let bps: number = tiers[0]!.bps;
  for (const t of tiers) if (volume30dUsd >= t.min_30d_volume_usd) bps = t.bps;
  return bps;
}

/**
 * A trade's fee under schedule 2: `tier` is the rate before Shield (the class rate, for major
 * from the wallet's volume tier), `bps` adds Shield and is capped at the maximum.
 */
export function feeFor(
  p: { feeClass: FeeClass; volume30dUsd: number; shield: boolean },
  schedule: FeeSchedule = SCHEDULE_2,
): { bps: number; tier: number } {
  const tier = p.feeClass === "major" ? majorTierBps(p.volume30dUsd, schedule.majorTiers) : schedule.otherBps;
  return { tier, bps: Math.min(schedule.maxBps, tier + (p.shield ? schedule.shieldAddBps : 0)) };
}

/** `bps` of `amount`, rounded down: the fee the router's TRANSFER carries and PAY_PORTION pays. */
export const bpsOf = (amount: bigint, bps: number | bigint): bigint => (amount * BigInt(bps)) / 10_000n;
