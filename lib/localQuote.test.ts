import { describe, expect, it } from "vitest";
import { zeroAddress, type Hex } from "viem";
import { MAX_SWAP_STEPS, quoteFromBook, swapExactIn, type BookPool, type PoolBook } from "./localQuote.js";
import { fullRangeTicks } from "./v4.js";

/** sqrt(1) in Q96: a price of one. */
const Q96 = 2n ** 96n;

/** A hookless pool at price one with one position of `liquidity` over [lower, upper). */
function pool(tickSpacing: number, [lower, upper]: [number, number], liquidity: bigint): BookPool {
  return {
    id: `0x${"11".repeat(32)}` as Hex,
    key: {
      currency0: zeroAddress,
      currency1: "0x00000000000000000000000000000000000000aa",
      fee: 100,
      tickSpacing,
      hooks: zeroAddress,
    },
    sqrtPriceX96: Q96,
    tick: 0,
    liquidity: lower <= 0 && 0 < upper ? liquidity : 0n,
    protocolFee: 0,
    ticks: [
      { tick: lower, liquidityNet: liquidity },
      { tick: upper, liquidityNet: -liquidity },
    ],
  };
}

describe("a local swap's bounds (the event loop is shared: a long walk goes to the quoter)", () => {
  it("answers a swap within its step budget, and declines one that would walk past it", async () => {
    const p = pool(1, fullRangeTicks(1), 10n ** 18n);
    const small = await swapExactIn(p, true, 10n ** 15n);
    expect(small?.amountOut).toBeGreaterThan(0n);
    // Pushing the price down by a factor of ~1e30 walks ~1e30 → 690,000 ticks: ~2,700 words of 256, past the budget.
    expect(MAX_SWAP_STEPS).toBeLessThan(2_700);
    expect(await swapExactIn(p, true, 10n ** 33n)).toBeNull();
  });

  it("declines past the last initialised tick in the swap's direction (nothing left to swap against)", async () => {
    // A narrow position [-60, 60): a swap that empties it would walk empty words to the price limit.
    const p = pool(1, [-60, 60], 10n ** 18n);
    expect((await swapExactIn(p, false, 10n ** 12n))?.amountOut).toBeGreaterThan(0n);
    expect(await swapExactIn(p, false, 10n ** 20n)).toBeNull();
    expect(await swapExactIn(p, true, 10n ** 20n)).toBeNull();
  });

  it("a route over a pool the book does not hold, or a hooked one, is not ours to quote", async () => {
    const p = pool(10, fullRangeTicks(10), 10n ** 18n);
    const book: PoolBook = { block: 1, timestamp: 1, pools: new Map([[p.id, p]]) };
    expect(await quoteFromBook(book, [{ id: p.id, zeroForOne: true }], 10n ** 15n)).not.toBeNull();
    expect(await quoteFromBook(book, [{ id: `0x${"22".repeat(32)}`, zeroForOne: true }], 10n ** 15n)).toBeNull();
    const hooked = { ...p, key: { ...p.key, hooks: "0x0000000000000000000000000000000000001000" as const } };
    const withHook: PoolBook = { ...book, pools: new Map([[p.id, hooked]]) };
    expect(await quoteFromBook(withHook, [{ id: p.id, zeroForOne: true }], 10n ** 15n)).toBeNull();
  });
});
