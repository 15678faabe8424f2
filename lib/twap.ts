/**
 * Integer price accumulator behind the indexed TWAPs. priceX96 = sqrtPriceX96² >> 96 is currency1
 * atoms per currency0 atom times 2^96; the accumulator sums priceX96 × seconds, exactly.
 */
export const priceX96FromSqrt = (sqrtPriceX96: bigint): bigint => (sqrtPriceX96 * sqrtPriceX96) >> 96n;

export function accumulate(
  prev: { priceX96: bigint; cumulativeX96: bigint; timestamp: bigint },
  timestamp: bigint,
): bigint {
  const dt = timestamp > prev.timestamp ? timestamp - prev.timestamp : 0n;
  return prev.cumulativeX96 + prev.priceX96 * dt;
}

/** Human price of currency0 in currency1 from priceX96 and the two decimals. */
export function priceFromX96(priceX96: bigint, decimals0: number, decimals1: number): number {
  return (Number(priceX96) / 2 ** 96) * 10 ** (decimals0 - decimals1);
}
