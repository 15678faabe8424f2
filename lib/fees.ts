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
