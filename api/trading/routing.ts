import { zeroAddress, type Address, type Hex } from "viem";
import { launchpadAbi } from "../../abis/fixtures.js";
import { v4QuoterAbi } from "../../abis/uniswapV4.js";
import { Q96, type PoolKey } from "../../lib/v4.js";
import type { PoolState } from "../ports/indexed.js";
import { quoteFromBook, type PoolBook } from "../../lib/localQuote.js";
import { lc, sameAddress as same } from "../../lib/address.js";

/** Venues a plan can be built through (SPEC.md's pool and curve venues). */
export const POOL_VENUE = "v4";
export const CURVE_VENUE = "curve";
export const BUILDABLE_VENUES = [POOL_VENUE, CURVE_VENUE] as const;

export type PoolHop = {
  key: PoolKey;
  id: Hex;
  zeroForOne: boolean;
  currencyIn: Address;
  currencyOut: Address;
  fee: number;
  priceX96: bigint;
};
export type PoolRoute = { id: string; venue: typeof POOL_VENUE; label: string; hops: PoolHop[] };
export type CurveRoute = { id: string; venue: typeof CURVE_VENUE; label: string; token: Address; buy: boolean };
export type Route = PoolRoute | CurveRoute;

/**
 * One route's answer from the chain: amount out for the swap amount, and the venue's gas guess.
 * `failed`: the venue's read itself failed (reverted), as against answering no output.
 */
export type RouteQuote = {
  route: Route;
  ok: boolean;
  failed: boolean;
  amountOut: bigint;
  gas: bigint;
  error: string | null;
};

/** Gas outside the venue's own estimate: the transaction, the router, pulling an ERC-20 in, the fee command. */
export const GAS = {
  tx: 21_000n,
  router: 45_000n,
  pullErc20: 40_000n,
  fee: 25_000n,
  wrap: 30_000n,
  curve: 110_000n,
  approve: 50_000n,
  permit: 60_000n,
} as const;
/** At most this many candidate routes are quoted per request. */
export const MAX_CANDIDATES = 12;

function hop(p: PoolState, currencyIn: Address): PoolHop {
  const zeroForOne = same(p.currency0, currencyIn);
  return {
    key: { currency0: p.currency0, currency1: p.currency1, fee: p.fee, tickSpacing: p.tickSpacing, hooks: p.hooks },
    id: p.id,
    zeroForOne,
    currencyIn: zeroForOne ? p.currency0 : p.currency1,
    currencyOut: zeroForOne ? p.currency1 : p.currency0,
    fee: p.fee,
    priceX96: p.priceX96,
  };
}

const holds = (p: PoolState, a: Address) => same(p.currency0, a) || same(p.currency1, a);

/**
 * Candidate routes between two pool currencies (ETH as 0x0): every hookless pool holding both,
 * and two hops through each connector (USDG, ETH); plus the launchpad curve for a curve token
 * against ETH. Deepest pools first, at most MAX_CANDIDATES.
 */
export function candidateRoutes(p: {
  pools: PoolState[];
  currencyIn: Address;
  currencyOut: Address;
  connectors: Address[];
  venues: readonly string[];
  curveToken: Address | null;
}): Route[] {
  const usable = p.pools
    .filter((x) => x.liquidity > 0n && x.hooks === zeroAddress)
    .sort((a, b) => (b.liquidity > a.liquidity ? 1 : -1));
  const out: Route[] = [];
  if (p.venues.includes(POOL_VENUE)) {
    for (const pool of usable.filter((x) => holds(x, p.currencyIn) && holds(x, p.currencyOut))) {
      out.push({
        id: `v4:${pool.id}`,
        venue: POOL_VENUE,
        label: `v4 ${pool.fee / 10_000}%`,
        hops: [hop(pool, p.currencyIn)],
      });
    }
    for (const mid of p.connectors) {
      if (same(mid, p.currencyIn) || same(mid, p.currencyOut)) continue;
      for (const a of usable.filter((x) => holds(x, p.currencyIn) && holds(x, mid))) {
        for (const b of usable.filter((x) => holds(x, mid) && holds(x, p.currencyOut))) {
          out.push({
            id: `v4:${a.id},${b.id}`,
            venue: POOL_VENUE,
            label: `v4 via ${mid === zeroAddress ? "ETH" : "USDG"}`,
            hops: [hop(a, p.currencyIn), hop(b, mid)],
          });
        }
      }
    }
  }
  if (p.venues.includes(CURVE_VENUE) && p.curveToken) {
    const buy = p.currencyIn === zeroAddress && same(p.currencyOut, p.curveToken);
    const sell = same(p.currencyIn, p.curveToken) && p.currencyOut === zeroAddress;
    if (buy || sell)
      out.push({
        id: `curve:${lc(p.curveToken)}`,
        venue: CURVE_VENUE,
        label: "launchpad curve",
        token: p.curveToken,
        buy,
      });
  }
  return out.slice(0, MAX_CANDIDATES);
}

/** The multicall entry quoting one route for `amountIn` (V4Quoter or the curve's own quote). */
export function quoteCall(route: Route, amountIn: bigint, c: { v4Quoter: Address; launchpad: Address }) {
  if (route.venue === CURVE_VENUE) {
    return route.buy
      ? ({ address: c.launchpad, abi: launchpadAbi, functionName: "quoteBuy", args: [route.token, amountIn] } as const)
      : ({
          address: c.launchpad,
          abi: launchpadAbi,
          functionName: "quoteSell",
          args: [route.token, amountIn],
        } as const);
  }
  if (route.hops.length === 1) {
    const h = route.hops[0]!;
    return {
      address: c.v4Quoter,
      abi: v4QuoterAbi,
      functionName: "quoteExactInputSingle",
      args: [{ poolKey: h.key, zeroForOne: h.zeroForOne, exactAmount: amountIn, hookData: "0x" }],
    } as const;
  }
  return {
    address: c.v4Quoter,
    abi: v4QuoterAbi,
    functionName: "quoteExactInput",
    args: [
      {
        exactCurrency: route.hops[0]!.currencyIn,
        path: route.hops.map((h) => ({
          intermediateCurrency: h.currencyOut,
          fee: h.key.fee,
          tickSpacing: h.key.tickSpacing,
          hooks: h.key.hooks,
          hookData: "0x" as Hex,
        })),
        exactAmount: amountIn,
      },
    ],
  } as const;
}

/** Reads a quoteCall's multicall result into a RouteQuote. */
export function readQuote(
  route: Route,
  r: { status: "success" | "failure"; result?: unknown; error?: Error },
): RouteQuote {
  if (r.status !== "success")
    return {
      route,
      ok: false,
      failed: true,
      amountOut: 0n,
      gas: 0n,
      error: (r.error?.message ?? "quote reverted").split("\n")[0]!.slice(0, 160),
    };
  const [amountOut, second] = r.result as readonly [bigint, bigint];
  // quoteBuy/quoteSell answer (out, curve fee); the v4 quoter (out, gas estimate).
  const gas = route.venue === CURVE_VENUE ? GAS.curve : second;
  return { route, ok: amountOut > 0n, failed: false, amountOut, gas, error: amountOut > 0n ? null : "no output" };
}

/** The route's mid: output atoms per input atom with no size, no fee (product of its pools' mids). */
export function routeMidAtoms(route: Route, curve?: { virtualEth: bigint; virtualToken: bigint }): number | null {
  if (route.venue === CURVE_VENUE) {
    if (!curve || curve.virtualEth === 0n || curve.virtualToken === 0n) return null;
    return route.buy
      ? Number(curve.virtualToken) / Number(curve.virtualEth)
      : Number(curve.virtualEth) / Number(curve.virtualToken);
  }
  let mid = 1;
  for (const h of route.hops) {
    const p = Number(h.priceX96) / Number(Q96);
    if (!(p > 0)) return null;
    mid *= h.zeroForOne ? p : 1 / p;
  }
  return mid;
}

/** Pool fees along a route in bps (the curve's fee is read with its quote). */
export const routeFeeBps = (route: Route): number =>
  route.venue === CURVE_VENUE ? 0 : route.hops.reduce((s, h) => s + h.fee / 100, 0);

/** The pools of `routes` a pool book can quote (hookless v4 pools), each once: what a quote asks the book for. */
export function bookPoolIds(routes: readonly Route[]): Hex[] {
  const ids = new Set<Hex>();
  for (const r of routes)
    if (r.venue === POOL_VENUE) for (const h of r.hops) if (lc(h.key.hooks) === zeroAddress) ids.add(lc(h.id) as Hex);
  return [...ids];
}

/**
 * The route's quote computed from the pool book (lib/localQuote), in the multicall's words
 * ([amount out, gas estimate], as the V4Quoter answers); null for the curve, a hooked or unknown
 * pool, or a swap the quoter would refuse: those go to the chain.
 */
export async function quoteLocally(route: Route, amountIn: bigint, book: PoolBook | null) {
  if (!book || route.venue !== POOL_VENUE) return null;
  const r = await quoteFromBook(book, route.hops, amountIn);
  return r ? { ok: true as const, result: r } : null;
}
