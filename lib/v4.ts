import { encodeAbiParameters, keccak256, type Address, type Hex } from "viem";
import { poolKeyParam } from "../abis/uniswapV4.js";

export type PoolKey = {
  currency0: Address;
  currency1: Address;
  fee: number;
  tickSpacing: number;
  hooks: Address;
};

export const Q96 = 1n << 96n;
export const MIN_TICK = -887272;
export const MAX_TICK = 887272;

/**
 * Ids computed, by the key's fields as given (a key viem would refuse is never cached): hashing was 6 % of a paper
 * tick. A plain map emptied when full, not an LRU: the SDK bundles this file, and a service sees a few pools.
 */
const ids = new Map<string, Hex>();
const MAX_IDS = 4096;

/** PoolId = keccak256(abi.encode(PoolKey)), as PoolIdLibrary computes it. */
export function poolId(key: PoolKey): Hex {
  const k = `${key.currency0}${key.currency1}${key.fee}/${key.tickSpacing}${key.hooks}`;
  let id = ids.get(k);
  if (id === undefined) {
    id = keccak256(encodeAbiParameters([poolKeyParam], [key]));
    if (ids.size >= MAX_IDS) ids.clear();
    ids.set(k, id);
  }
  return id;
}

export function sortCurrencies(a: Address, b: Address): [Address, Address] {
  return BigInt(a) < BigInt(b) ? [a, b] : [b, a];
}

export function isqrt(n: bigint): bigint {
  if (n < 0n) throw new Error("isqrt of negative");
  if (n < 2n) return n;
  let x = BigInt(Math.floor(Math.sqrt(Number(n))));
  // Newton steps from the float estimate until stable.
  for (;;) {
    const y = (x + n / x) >> 1n;
    if (y >= x && x * x <= n && (x + 1n) * (x + 1n) > n) return x;
    x = y;
  }
}

/** sqrtPriceX96 for a pool holding `amount0` of currency0 against `amount1` of currency1 (atoms). */
export function sqrtPriceX96FromAmounts(amount0: bigint, amount1: bigint): bigint {
  return isqrt((amount1 << 192n) / amount0);
}

/** Float approximation of TickMath.getSqrtPriceAtTick; good to ~1e-12 relative, enough for sizing. */
export function approxSqrtPriceAtTick(tick: number): bigint {
  return BigInt(Math.floor(1.0001 ** (tick / 2) * 2 ** 96));
}

export function fullRangeTicks(tickSpacing: number): [number, number] {
  return [Math.ceil(MIN_TICK / tickSpacing) * tickSpacing, Math.floor(MAX_TICK / tickSpacing) * tickSpacing];
}

/** Liquidity a full-range position gets from at most amount0/amount1 at price sqrtP. */
export function fullRangeLiquidity(sqrtP: bigint, tickSpacing: number, amount0: bigint, amount1: bigint): bigint {
  const [lo, hi] = fullRangeTicks(tickSpacing);
  const sqrtLo = approxSqrtPriceAtTick(lo);
  const sqrtHi = approxSqrtPriceAtTick(hi);
  const l0 = (amount0 * ((sqrtP * sqrtHi) / Q96)) / (sqrtHi - sqrtP);
  const l1 = (amount1 * Q96) / (sqrtP - sqrtLo);
  return l0 < l1 ? l0 : l1;
}

/** Mid price of currency0 in currency1, both as human units, from sqrtPriceX96. */
export function midPrice(sqrtPriceX96: bigint, decimals0: number, decimals1: number): number {
  const p = Number(sqrtPriceX96) / 2 ** 96;
  return p * p * 10 ** (decimals0 - decimals1);
}
