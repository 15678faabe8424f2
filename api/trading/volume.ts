import { onClock, upTo } from "../../lib/cacheClock.js";
import { LRUCache } from "lru-cache";
import type { Address } from "viem";
import { MAJOR_TIERS, majorSymbols, majorTierBps } from "../../lib/fees.js";
import type { Market } from "../market/index.js";
import type { Ledger } from "./ledger.js";
import type { Common } from "../ports/common.js";

export const VOLUME_WINDOW_DAYS = 30;
/** A wallet's volume is counted at most once a minute per instance. */
const VOLUME_TTL_MS = 60_000;

/** SPEC.md me/portfolio `volume`: the 30-day volume and where it puts the wallet's major fee. */
export type VolumeTier = {
  window_days: number;
  volume_usd: number;
  tier_bps: number;
  posted_bps: number;
  next_tier: { bps: number; min_30d_volume_usd: number; volume_to_next_usd: number } | null;
  tiers: typeof MAJOR_TIERS;
};

/**
 * 30-day volume through the service: every trade the service relayed for the wallet and the
 * relay watcher saw mined (the app store's outcome), valued on its major side at today's marks (a trade with no
 * major side
 * counts nothing). It sets the wallet's major fee tier.
 */
export function createVolume(d: Pick<Common, "config" | "clock"> & { ledger: Ledger; market: Market }) {
  const majors = new Set(majorSymbols(d.config.tokens));
  const cache = new LRUCache<string, number>({
    ...upTo(50_000),
    ttl: VOLUME_TTL_MS,
    ...onClock(d.clock),
    fetchMethod: (wallet) => count(wallet as Address),
  });

  async function count(wallet: Address): Promise<number> {
    const since = Math.floor(d.clock() / 1000) - VOLUME_WINDOW_DAYS * 86_400;
    let usd = 0;
    for (const t of await d.ledger.minedSince(wallet, since)) {
      for (const [token, amount] of [
        [t.tokenIn, t.amountIn],
        [t.tokenOut, t.amountOut],
      ] as const) {
        const core = token ? d.market.core(token) : undefined;
        if (!core || !majors.has(core.symbol) || amount === null) continue;
        const m = await d.market.mark(core.address);
        if (m) {
          usd += (Number(amount) / 10 ** core.decimals) * m.usd;
          break;
        }
      }
    }
    return usd;
  }

  /** The wallet's 30-day volume in USD. */
  const usd30d = async (wallet: Address): Promise<number> => (await cache.fetch(wallet.toLowerCase())) ?? 0;

  async function tier(wallet: Address): Promise<VolumeTier> {
    const volume = await usd30d(wallet);
    const next = MAJOR_TIERS.find((t) => t.min_30d_volume_usd > volume) ?? null;
    return {
      window_days: VOLUME_WINDOW_DAYS,
      volume_usd: Math.round(volume * 100) / 100,
      tier_bps: majorTierBps(volume),
      posted_bps: MAJOR_TIERS[0]!.bps,
      next_tier: next
        ? {
            bps: next.bps,
            min_30d_volume_usd: next.min_30d_volume_usd,
            volume_to_next_usd: Math.round((next.min_30d_volume_usd - volume) * 100) / 100,
          }
        : null,
      tiers: MAJOR_TIERS,
    };
  }

  return { usd30d, tier };
}

export type Volume = ReturnType<typeof createVolume>;
