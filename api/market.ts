import { zeroAddress, type Address } from "viem";
import type { Config, TokenEntry } from "../lib/config.js";
import { priceFromX96 } from "../lib/twap.js";
import type { PoolState, SqlIndexedReads } from "./indexed.js";

/** A USD price for one whole token, and where it came from. */
export type Mark = { usd: number; source: "oracle" | "pool-mid" | "curve"; age_s: number | null; stale: boolean };

/** An oracle answer older than this is reported stale (STALE_MARK); it still prices. */
export const MARK_STALE_S = 3_600;
/** Pools and marks are re-read from the indexer at most this often. */
const TTL_MS = 1_000;

const lc = (a: string) => a.toLowerCase();

/**
 * Market reads from the indexer's tables: pool states (for routes and mids) and USD marks. One
 * short-lived copy per instance, so a burst of quotes costs one read of each.
 */
export function createMarket(d: { config: Config; indexed: SqlIndexedReads; clock: () => number }) {
  const { config, indexed } = d;
  const coreByAddress = new Map(Object.values(config.tokens).map((t) => [lc(t.address), t] as const));
  const usdg = config.tokens.USDG!;
  const now = () => Math.floor(d.clock() / 1000);
  let poolsAt = 0;
  let poolsP: Promise<PoolState[]> | null = null;
  const oracle = new Map<string, { at: number; p: Promise<Mark | null> }>();

  function pools(): Promise<PoolState[]> {
    if (!poolsP || d.clock() - poolsAt > TTL_MS) {
      poolsAt = d.clock();
      poolsP = indexed.pools();
      poolsP.catch(() => (poolsP = null));
    }
    return poolsP;
  }

  function oracleMark(feed: Address): Promise<Mark | null> {
    const hit = oracle.get(lc(feed));
    if (hit && d.clock() - hit.at <= TTL_MS) return hit.p;
    const p = indexed.latestMark(feed, now()).then((m) =>
      m && m.answer > 0n ? { usd: Number(m.answer) / 1e8, source: "oracle" as const, age_s: m.ageS, stale: m.ageS > MARK_STALE_S } : null,
    );
    oracle.set(lc(feed), { at: d.clock(), p });
    p.catch(() => oracle.delete(lc(feed)));
    return p;
  }

  /** Mid of `token` in `quote` (whole units) from the deepest pool holding both, or null. */
  async function midOf(token: Address, quote: Address, decimals?: number): Promise<number | null> {
    const p = (await pools())
      .filter((x) => (lc(x.currency0) === lc(token) && lc(x.currency1) === lc(quote)) || (lc(x.currency1) === lc(token) && lc(x.currency0) === lc(quote)))
      .sort((a, b) => (b.liquidity > a.liquidity ? 1 : -1))[0];
    if (!p || p.liquidity === 0n) return null;
    // Tokens outside config hold raw atoms in the pool: scale by the token's own decimals.
    const dec = (a: Address) => (a === zeroAddress ? 18 : (coreByAddress.get(lc(a))?.decimals ?? (lc(a) === lc(token) ? decimals : undefined)));
    const d0 = dec(p.currency0);
    const d1 = dec(p.currency1);
    if (d0 === undefined || d1 === undefined) return null;
    const mid = priceFromX96(p.priceX96, d0, d1);
    return lc(p.currency0) === lc(token) ? mid : 1 / mid;
  }

  /**
   * The USD mark of a token: its oracle feed; else its pool mid against USDG (or ETH times ETH's
   * mark); else its launchpad curve's spot. `decimals` is needed only for tokens outside config.
   */
  async function mark(token: Address, decimals?: number): Promise<Mark | null> {
    const core = coreByAddress.get(lc(token));
    if (core?.feed) return oracleMark(core.feed);
    const viaUsdg = await midOf(token, usdg.address, decimals);
    if (viaUsdg !== null) return { usd: viaUsdg, source: "pool-mid", age_s: null, stale: false };
    const eth = config.tokens.ETH?.feed ? await oracleMark(config.tokens.ETH.feed) : null;
    if (!eth) return null;
    const viaEth = await midOf(token, zeroAddress, decimals);
    if (viaEth !== null) return { usd: viaEth * eth.usd, source: "pool-mid", age_s: null, stale: eth.stale };
    const curve = await indexed.curveToken(token).catch(() => null);
    if (curve && !curve.graduated && curve.virtualToken > 0n) {
      return { usd: (Number(curve.virtualEth) / Number(curve.virtualToken)) * eth.usd, source: "curve", age_s: null, stale: eth.stale };
    }
    return null;
  }

  return { pools, mark, midOf, oracleMark, core: (a: Address): TokenEntry | undefined => coreByAddress.get(lc(a)) };
}

export type Market = ReturnType<typeof createMarket>;
