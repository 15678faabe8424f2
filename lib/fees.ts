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

/** The major fee class: every core symbol but the partner token (stock tokens named by address join via their beacon). */
export const majorSymbols = (tokens: Record<string, { symbol: string; kind: string }>): string[] =>
  Object.values(tokens).filter((t) => t.kind !== "partner").map((t) => t.symbol);

export type FeeClass = "major" | "other";

/** The volume tier's major rate: the highest threshold the 30-day volume reaches. */
export function majorTierBps(volume30dUsd: number): number {
  let bps: number = MAJOR_TIERS[0]!.bps;
  for (const t of MAJOR_TIERS) if (volume30dUsd >= t.min_30d_volume_usd) bps = t.bps;
  return bps;
}

/**
 * A trade's fee under schedule 2: `tier` is the rate before Shield (the class rate, for major
 * from the wallet's volume tier), `bps` adds Shield and is capped at the maximum.
 */
export function feeFor(p: { feeClass: FeeClass; volume30dUsd: number; shield: boolean }): { bps: number; tier: number } {
  const tier = p.feeClass === "major" ? majorTierBps(p.volume30dUsd) : OTHER_BPS;
  return { tier, bps: Math.min(MAX_FEE_BPS, tier + (p.shield ? SHIELD_ADD_BPS : 0)) };
}
