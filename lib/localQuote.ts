import { createRequire } from "node:module";
import type * as V3 from "@uniswap/v3-sdk";
import type JSBIType from "jsbi";
import { zeroAddress, type Address, type Hex } from "viem";
import type { PoolKey } from "./v4.js";

type TickListDataProvider = V3.TickListDataProvider;

/**
 * The SDK, loaded at the first local quote: its CommonJS build (its ESM build imports directories, which Node's ESM
 * loader refuses), ~300 ms of loading that a process which never quotes (an indexer, a signing service) does not pay.
 */
let loaded: { sdk: typeof V3; JSBI: typeof JSBIType; minSqrt: bigint; maxSqrt: bigint } | null = null;
function sdk() {
  if (!loaded) {
    const require = createRequire(import.meta.url);
    const v3 = require("@uniswap/v3-sdk") as typeof V3;
    loaded = {
      sdk: v3,
      JSBI: require("jsbi") as typeof JSBIType,
      minSqrt: BigInt(v3.TickMath.MIN_SQRT_RATIO.toString()),
      maxSqrt: BigInt(v3.TickMath.MAX_SQRT_RATIO.toString()),
    };
  }
  return loaded;
}

/**
 * Loads the SDK now rather than at the first local quote: a process that will quote locally (the book reader is
 * built only then) pays its ~300 ms of synchronous loading just after it starts, not inside an agent's first quote.
 */
export function preloadSwapMath(): void {
  setTimeout(() => void sdk(), 0).unref();
}

/**
 * Exact-input quotes computed here from a v4 pool's state (issue 31 point 2), with Uniswap's own
 * swap loop (@uniswap/v3-sdk v3Swap: SwapMath, TickMath, SqrtPriceMath and the tick bitmap's
 * one-word steps, ported from the contracts). A hookless v4 pool with a static fee and no protocol
 * fee swaps exactly as v3 does with its fee in pips; anything else (hooks, the dynamic-fee flag,
 * a protocol fee, a fee of 100 %) is not ours to compute and goes to the V4Quoter.
 */

/** One initialised tick of a pool: its net liquidity change when crossed left to right. */
export type BookTick = { tick: number; liquidityNet: bigint };

/** A pool's state at the book's block: its slot0, active liquidity and every initialised tick (ascending). */
export type BookPool = {
  id: Hex;
  key: PoolKey;
  sqrtPriceX96: bigint;
  tick: number;
  liquidity: bigint;
  protocolFee: number;
  ticks: BookTick[];
};

/** Every pool the indexer follows, exactly as the chain had them at `block` (the indexer's head). */
export type PoolBook = { block: number; timestamp: number; pools: Map<string, BookPool> };

/** LPFeeLibrary.DYNAMIC_FEE_FLAG: the pool's hooks set the fee per swap. */
export const DYNAMIC_FEE_FLAG = 0x800000;
/** The largest amount the quoter takes (uint128 cast to int128 inside: -int256(int128(x))). */
const MAX_EXACT_IN = (1n << 127n) - 1n;

/**
 * Gas the V4Quoter's gasEstimate reports, modelled for a local answer (the row's venue gas): per hop,
 * and per initialised tick crossed (measured on the devnet's pools, test/e2e/localQuote.test.ts).
 */
export const LOCAL_GAS = { first: 90_000n, hop: 70_000n, crossing: 32_000n } as const;

/** Why a pool cannot be quoted here, or null when it can. */
export function notLocal(p: Pick<BookPool, "key" | "protocolFee">): string | null {
  if (p.key.hooks.toLowerCase() !== zeroAddress) return "hooked pool";
  if (p.key.fee & DYNAMIC_FEE_FLAG) return "dynamic fee";
  if (p.key.fee >= 1_000_000) return "fee of 100 %";
  if (p.protocolFee !== 0) return "protocol fee";
  return null;
}

/** Each pool's ticks as the SDK's provider, built (and checked: sorted, spaced, netting to zero) once per book. */
const providers = new WeakMap<BookPool, TickListDataProvider>();
function providerOf(p: BookPool): TickListDataProvider {
  let t = providers.get(p);
  if (!t) {
    t = new (sdk().sdk.TickListDataProvider)(
      p.ticks.map((x) => ({ index: x.tick, liquidityNet: x.liquidityNet.toString(), liquidityGross: "1" })),
      p.key.tickSpacing,
    );
    providers.set(p, t);
  }
  return t;
}

/**
 * Steps (one tick-bitmap word or one initialised tick each) one local swap may take; past it the quoter answers.
 * The loop runs on the event loop: a swap walked through thousands of empty words (a large size, or a gap an
 * attacker's narrow position opens) must not stall every other request (a step costs tens of µs).
 */
export const MAX_SWAP_STEPS = 256;

/** Why a local swap stopped short: the quoter answers it (or reverts, as the quoter would, when nothing is left). */
class Declined extends Error {}

/**
 * The pool's provider, counting the initialised ticks one swap crosses (v3Swap reads a tick only to cross it), and
 * declining a swap past MAX_SWAP_STEPS or past the last initialised tick in its direction: liquidity is zero from
 * there, no input is spent, and the quoter reverts (NotEnoughLiquidity) at the price limit the walk would reach.
 */
function counting(p: BookPool) {
  const inner = providerOf(p);
  const [first, last] = [p.ticks[0]!.tick, p.ticks.at(-1)!.tick];
  let steps = 0;
  const c = {
    crossed: 0,
    getTick: (tick: number) => {
      c.crossed++;
      return inner.getTick(tick);
    },
    nextInitializedTickWithinOneWord: (tick: number, lte: boolean, spacing: number) => {
      if (++steps > MAX_SWAP_STEPS) throw new Declined(`more than ${MAX_SWAP_STEPS} steps`);
      if (lte ? tick < first : tick >= last) throw new Declined("no liquidity left in the swap's direction");
      return inner.nextInitializedTickWithinOneWord(tick, lte, spacing);
    },
  };
  return c;
}

/**
 * One hop's exact-input swap: the amount out and the ticks crossed, or null where the V4Quoter
 * would not answer with an amount (zero in, an amount past int128, the pool out of liquidity before
 * the input is spent: its NotEnoughLiquidity).
 */
export async function swapExactIn(
  p: BookPool,
  zeroForOne: boolean,
  amountIn: bigint,
): Promise<{ amountOut: bigint; crossed: number } | null> {
  if (notLocal(p) !== null || amountIn <= 0n || amountIn > MAX_EXACT_IN || p.sqrtPriceX96 === 0n) return null;
  if (!p.ticks.length) return null;
  let ticks: ReturnType<typeof counting>;
  try {
    ticks = counting(p);
  } catch {
    return null;
  }
  // The SDK's invariants (a malformed tick list, a price at its bound) throw: then the quoter answers.
  const { sdk: v3, JSBI, minSqrt, maxSqrt } = sdk();
  const r = await v3
    .v3Swap(
      JSBI.BigInt(p.key.fee),
      JSBI.BigInt(p.sqrtPriceX96.toString()),
      p.tick,
      JSBI.BigInt(p.liquidity.toString()),
      p.key.tickSpacing,
      ticks,
      zeroForOne,
      JSBI.BigInt(amountIn.toString()),
    )
    .catch(() => null);
  if (!r) return null;
  // At the price limit the input may not all be spent: the quoter reverts there; not ours to say.
  const limit = zeroForOne ? minSqrt + 1n : maxSqrt - 1n;
  if (BigInt(r.sqrtRatioX96.toString()) === limit) return null;
  const amountOut = -BigInt(r.amountCalculated.toString());
  return amountOut >= 0n ? { amountOut, crossed: ticks.crossed } : null;
}

/** A hop of a route as the book sees it: the pool's id and the swap's direction. */
export type BookHop = { id: Hex; zeroForOne: boolean };

/**
 * A route's exact-input quote from the book, as the V4Quoter's quoteExactInput(Single) would answer
 * it at the book's block: [amount out, gas estimate]; null when any hop is not in the book or not
 * ours to compute (the caller asks the quoter).
 */
export async function quoteFromBook(
  book: PoolBook,
  hops: BookHop[],
  amountIn: bigint,
): Promise<readonly [bigint, bigint] | null> {
  const pools = hops.map((h) => book.pools.get(h.id.toLowerCase()));
  if (!hops.length || pools.some((p) => !p || notLocal(p) !== null)) return null;
  let amount = amountIn;
  let gas = LOCAL_GAS.first - LOCAL_GAS.hop;
  for (const [i, h] of hops.entries()) {
    const r = await swapExactIn(pools[i]!, h.zeroForOne, amount);
    if (!r) return null;
    amount = r.amountOut;
    gas += LOCAL_GAS.hop + LOCAL_GAS.crossing * BigInt(r.crossed);
  }
  return [amount, gas] as const;
}

/** The pool's key as a PoolKey (the book keeps it as the indexer logged it). */
export const keyOf = (p: {
  currency0: Address;
  currency1: Address;
  fee: number;
  tickSpacing: number;
  hooks: Address;
}): PoolKey => ({
  currency0: p.currency0,
  currency1: p.currency1,
  fee: p.fee,
  tickSpacing: p.tickSpacing,
  hooks: p.hooks,
});
