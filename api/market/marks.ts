import { onClock } from "../../lib/cacheClock.js";
import { LRUCache } from "lru-cache";
import { zeroAddress, type Address, type Hex, type PublicClient } from "viem";
import type { Config, TokenEntry } from "../../lib/config.js";
import { priceFromX96 } from "../../lib/twap.js";
import { curveBefore, curvePrice, MARK_WINDOW_S, windowPrice } from "../../lib/markSource.js";
import type { PoolState, SqlIndexedReads } from "../ports/indexed.js";
import { markStale } from "./stale.js";
import { lc } from "../../lib/address.js";
import type { Common } from "../ports/common.js";
import { createBookReader, type FreshBook } from "./book.js";

/** Where a mark comes from: the independent ones (oracle, twap, fixed) and the trading-only ones. */
export type MarkSource = "oracle" | "twap" | "fixed" | "pool-mid" | "curve";
/** A USD price for one whole token, and where it came from. */
export type Mark = { usd: number; source: MarkSource; age_s: number | null; stale: boolean };

/** Why a token has no independent price (SPEC.md Holding `unpriced`). */
export type Unpriced = "NO_INDEPENDENT_MARK" | "MARK_UNAVAILABLE";
/** A token's independent mark, or the reason it has none. */
export type IndependentMark = { mark: Mark; unpriced: null } | { mark: null; unpriced: Unpriced };
/** How SPEC prices a core asset independently, decided by config alone. */
export type IndependentBasis = "fixed" | "oracle" | "twap";

/** The partner token is valued at its USDG pool's time-weighted mean over this window. */
export const TWAP_WINDOW_S = 1_800;
/** Pools, feeds and TWAPs are re-read from the indexer at most this often. */
const TTL_MS = 1_000;

/**
 * SPEC.md's independent marks: USDG at $1, an oracle feed (ETH, WETH, the BTC asset, stock tokens
 * with one), the partner token at its pool's 30-minute TWAP. Anything else has none.
 */
export function independentBasis(t: TokenEntry | undefined): IndependentBasis | null {
  if (!t) return null;
  if (t.symbol === "USDG") return "fixed";
  if (t.feed) return "oracle";
  if (t.kind === "partner") return "twap";
  return null;
}

/** The deepest pool holding exactly `a` and `b` (by in-range liquidity), or null. */
export function deepestPool<P extends Pick<PoolState, "currency0" | "currency1" | "liquidity">>(
  pools: P[],
  a: Address,
  b: Address,
): P | null {
  const pair = pools.filter(
    (x) =>
      (lc(x.currency0) === lc(a) && lc(x.currency1) === lc(b)) ||
      (lc(x.currency1) === lc(a) && lc(x.currency0) === lc(b)),
  );
  return pair.sort((x, y) => (y.liquidity > x.liquidity ? 1 : y.liquidity < x.liquidity ? -1 : 0))[0] ?? null;
}

const priced = (mark: Mark): IndependentMark => ({ mark, unpriced: null });
const unavailableUnlessPriced = (mark: Mark | null): IndependentMark =>
  mark ? priced(mark) : { mark: null, unpriced: "MARK_UNAVAILABLE" };

/** `chain`: the head the pool book is judged against (createBookReader); without it there is no book. */
type MarketDeps = Pick<Common, "config" | "clock"> & { indexed: SqlIndexedReads; chain?: PublicClient };

/** One market's reads and short-lived copies (see createMarket). */
type MarketState = {
  config: Config;
  indexed: SqlIndexedReads;
  coreByAddress: Map<string, TokenEntry>;
  stockFeeds: Set<string>;
  usdg: TokenEntry;
  now: () => number;
  poolCache: LRUCache<"pools", PoolState[]>;
  // Values are boxed: a feed without an answer (or a pool without history) is a cached null.
  feedCache: LRUCache<string, { mark: Mark | null }>;
  twapCache: LRUCache<string, { x96: bigint | null }>;
};

function marketState(d: MarketDeps): MarketState {
  const { config, indexed } = d;
  const fresh = { ttl: TTL_MS, ...onClock(d.clock) };
  const now = () => Math.floor(d.clock() / 1000);
  const m: MarketState = {
    config,
    indexed,
    coreByAddress: new Map(Object.values(config.tokens).map((t) => [lc(t.address), t] as const)),
    stockFeeds: new Set(
      Object.values(config.tokens).flatMap((t) => (t.kind === "stock" && t.feed ? [lc(t.feed)] : [])),
    ),
    usdg: config.tokens.USDG!,
    now,
    poolCache: new LRUCache<"pools", PoolState[]>({ max: 1, ...fresh, fetchMethod: () => indexed.pools() }),
    feedCache: new LRUCache<string, { mark: Mark | null }>({
      max: 1_000,
      ...fresh,
      fetchMethod: async (feed) => ({ mark: await readFeed(m, feed as Address) }),
    }),
    twapCache: new LRUCache<string, { x96: bigint | null }>({
      max: 1_000,
      ...fresh,
      fetchMethod: async (poolId) => {
        const to = now();
        return { x96: await indexed.twapX96(poolId as Hex, to - TWAP_WINDOW_S, to) };
      },
    }),
  };
  return m;
}

async function pools(m: MarketState): Promise<PoolState[]> {
  return (await m.poolCache.fetch("pools"))!;
}

async function readFeed(m: MarketState, feed: Address): Promise<Mark | null> {
  const r = await m.indexed.latestMark(feed, m.now());
  if (!r || r.answer <= 0n) return null;
  return {
    usd: Number(r.answer) / 1e8,
    source: "oracle",
    age_s: r.ageS,
    stale: markStale({ updatedAt: r.updatedAt, now: m.now(), stock: m.stockFeeds.has(lc(feed)) }),
  };
}

async function oracleMark(m: MarketState, feed: Address): Promise<Mark | null> {
  return (await m.feedCache.fetch(lc(feed)))!.mark;
}

/** ETH's oracle mark, or null without a feed or an answer. */
const ethMark = (m: MarketState): Promise<Mark | null> =>
  m.config.tokens.ETH?.feed ? oracleMark(m, m.config.tokens.ETH.feed) : Promise.resolve(null);

/** The partner token at its deepest USDG pool's 30-minute TWAP; null while the pool has no such history. */
async function twapMark(m: MarketState, t: TokenEntry): Promise<Mark | null> {
  const { usdg } = m;
  const pool = deepestPool(await pools(m), t.address, usdg.address);
  if (!pool) return null;
  const x96 = (await m.twapCache.fetch(lc(pool.id)))!.x96;
  if (x96 === null || x96 <= 0n) return null;
  const tokenIs0 = lc(pool.currency0) === lc(t.address);
  const price = priceFromX96(x96, tokenIs0 ? t.decimals : usdg.decimals, tokenIs0 ? usdg.decimals : t.decimals);
  return { usd: tokenIs0 ? price : 1 / price, source: "twap", age_s: null, stale: false };
}

/**
 * A token's independent mark (portfolio valuation, league): NO_INDEPENDENT_MARK when SPEC gives
 * it none, MARK_UNAVAILABLE when its source has nothing to say now. Indexer errors throw.
 */
async function independentMark(m: MarketState, token: Address): Promise<IndependentMark> {
  const core = m.coreByAddress.get(lc(token));
  const basis = independentBasis(core);
  if (basis === "fixed") return priced({ usd: 1, source: "fixed", age_s: null, stale: false });
  if (basis === "oracle") return unavailableUnlessPriced(await oracleMark(m, core!.feed!));
  if (basis === "twap") return unavailableUnlessPriced(await twapMark(m, core!));
  return { mark: null, unpriced: "NO_INDEPENDENT_MARK" };
}

/** Mid of `token` in `quote` (whole units) from the deepest pool holding both, or null. */
async function midOf(m: MarketState, token: Address, quote: Address, decimals?: number): Promise<number | null> {
  const p = deepestPool(await pools(m), token, quote);
  if (!p || p.liquidity === 0n) return null;
  // Tokens outside config hold raw atoms in the pool: scale by the token's own decimals.
  const dec = (a: Address) =>
    a === zeroAddress ? 18 : (m.coreByAddress.get(lc(a))?.decimals ?? (lc(a) === lc(token) ? decimals : undefined));
  const d0 = dec(p.currency0);
  const d1 = dec(p.currency1);
  if (d0 === undefined || d1 === undefined) return null;
  const mid = priceFromX96(p.priceX96, d0, d1);
  return lc(p.currency0) === lc(token) ? mid : 1 / mid;
}

/**
 * The USD mark trading sizes, charges and counts volume by: its oracle feed; USDG at $1 without
 * one; the partner token at its TWAP (its spot mid only while the pool is younger than the
 * window, so a fresh deployment can still size trades); else its pool mid against USDG (or ETH
 * times ETH's mark); else its launchpad curve's spot. `decimals` is needed only for tokens
 * outside config.
 */
async function mark(m: MarketState, token: Address, decimals?: number): Promise<Mark | null> {
  const core = m.coreByAddress.get(lc(token));
  const basis = independentBasis(core);
  if (core?.feed) return oracleMark(m, core.feed);
  if (basis === "fixed") return { usd: 1, source: "fixed", age_s: null, stale: false };
  if (basis === "twap") {
    const twap = await twapMark(m, core!);
    if (twap) return twap;
  }
  const viaUsdg = await midOf(m, token, m.usdg.address, decimals);
  if (viaUsdg !== null) return { usd: viaUsdg, source: "pool-mid", age_s: null, stale: false };
  const eth = await ethMark(m);
  if (!eth) return null;
  const viaEth = await midOf(m, token, zeroAddress, decimals);
  if (viaEth !== null) return { usd: viaEth * eth.usd, source: "pool-mid", age_s: null, stale: eth.stale };
  const curve = await m.indexed.curveToken(token);
  if (curve && !curve.graduated && curve.virtualToken > 0n) {
    return {
      usd: (Number(curve.virtualEth) / Number(curve.virtualToken)) * eth.usd,
      source: "curve",
      age_s: null,
      stale: eth.stale,
    };
  }
  return null;
}

type WindowToken = { address: Address; currency: Address; decimals: number };

/** windowMark on a launchpad curve: its trades' prices in ETH, times ETH's mark; depth its virtual ETH. */
async function curveWindowMark(
  m: MarketState,
  t: WindowToken,
  eth: Mark | null,
  from: number,
  to: number,
  bandBps: number,
): Promise<WindowMark | null> {
  const [curve, trades] = await Promise.all([
    m.indexed.curveToken(t.address),
    m.indexed.curveTradesFor(t.address, from, to),
  ]);
  if (!eth || !curve || curve.graduated || curve.launchedAt > from || curve.virtualToken === 0n) return null;
  const atStart = trades[0] && trades[0].timestamp <= from ? trades[0] : trades[0] ? curveBefore(trades[0]) : curve;
  const steps = trades.map((x) => ({
    ts: x.timestamp,
    price: curvePrice(x.virtualEth, x.virtualToken, t.decimals),
  }));
  const w = windowPrice(curvePrice(atStart.virtualEth, atStart.virtualToken, t.decimals), steps, from, to, bandBps);
  return {
    usd: w.median * eth.usd,
    stableShare: w.stableShare,
    depthUsd: (Number(curve.virtualEth) / 1e18) * eth.usd,
  };
}

/** windowMark on a pool against USDG or ETH: its logged price steps; depth the priced side's virtual reserves. */
async function poolWindowMark(
  m: MarketState,
  t: WindowToken,
  source: PoolState,
  eth: Mark | null,
  from: number,
  to: number,
  bandBps: number,
): Promise<WindowMark | null> {
  const { usdg } = m;
  const tokenIs0 = lc(source.currency0) === lc(t.currency);
  const against = tokenIs0 ? source.currency1 : source.currency0;
  const againstUsd = lc(against) === lc(usdg.address) ? 1 : against === zeroAddress ? (eth?.usd ?? null) : null;
  const againstDecimals = lc(against) === lc(usdg.address) ? usdg.decimals : 18;
  const rows = await m.indexed.poolStepsFor(source.id, from, to);
  if (againstUsd === null || !rows[0] || rows[0].ts > from || rows.some((r) => r.priceX96 <= 0n)) return null;
  const inAgainst = (px96: bigint) => {
    const p01 = priceFromX96(px96, tokenIs0 ? t.decimals : againstDecimals, tokenIs0 ? againstDecimals : t.decimals);
    return tokenIs0 ? p01 : 1 / p01;
  };
  const w = windowPrice(
    inAgainst(rows[0].priceX96),
    rows.slice(1).map((r) => ({ ts: r.ts, price: inAgainst(r.priceX96) })),
    from,
    to,
    bandBps,
  );
  // Virtual reserves of the priced side: L·sqrtP (currency1) or L/sqrtP (currency0), in atoms
  // (see MIN_MARK_DEPTH_USD).
  const sqrtP = Number(source.sqrtPriceX96) / 2 ** 96;
  const againstAtoms = tokenIs0 ? Number(source.liquidity) * sqrtP : Number(source.liquidity) / sqrtP;
  return {
    usd: w.median * againstUsd,
    stableShare: w.stableShare,
    depthUsd: (againstAtoms / 10 ** againstDecimals) * againstUsd,
  };
}

/**
 * A feedless token at a signed mark's source (a pool against USDG or ETH, or its launchpad curve)
 * from the indexer's price steps over [to - MARK_WINDOW_S, to]: the time-weighted median in USD
 * and its stability at `bandBps` (lib/markSource windowPrice, as the co-signer and the SDK read
 * it from the chain), and the source's depth on its priced side in USD. null while the source is
 * younger than the window, has no price, or ETH has no mark.
 */
async function windowMark(
  m: MarketState,
  t: WindowToken,
  source: PoolState | "curve",
  to: number,
  bandBps: number,
): Promise<WindowMark | null> {
  const eth = await ethMark(m);
  const from = to - MARK_WINDOW_S;
  return source === "curve"
    ? curveWindowMark(m, t, eth, from, to, bandBps)
    : poolWindowMark(m, t, source, eth, from, to, bandBps);
}

/**
 * Market reads from the indexer's tables: pool states (for routes and mids) and USD marks. One
 * short-lived copy per instance (lru-cache fetches, shared by concurrent callers), so a burst of
 * quotes costs one read of each.
 */
export function createMarket(d: MarketDeps) {
  const m = marketState(d);
  const chain = d.chain;
  const book =
    chain && d.config.localQuotes
      ? createBookReader({ indexed: d.indexed, chain, clock: d.clock, devnet: d.config.devnet })
      : async (): Promise<FreshBook | null> => null;
  return {
    pools: () => pools(m),
    /** The indexer's pool book when it is fresh against the chain's head (local quotes), else null. */
    book,
    mark: (token: Address, decimals?: number) => mark(m, token, decimals),
    independentMark: (token: Address) => independentMark(m, token),
    midOf: (token: Address, quote: Address, decimals?: number) => midOf(m, token, quote, decimals),
    oracleMark: (feed: Address) => oracleMark(m, feed),
    windowMark: (t: WindowToken, source: PoolState | "curve", to: number, bandBps: number) =>
      windowMark(m, t, source, to, bandBps),
    core: (a: Address): TokenEntry | undefined => m.coreByAddress.get(lc(a)),
  };
}

export type Market = ReturnType<typeof createMarket>;
/**
 * A feedless token at its mark's source: the window's time-weighted median (USD) and stability
 * (lib/markSource WindowPrice), depth on the priced side (USD).
 */
export type WindowMark = { usd: number; stableShare: number; depthUsd: number };
