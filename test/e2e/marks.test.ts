import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseEther, parseUnits, type Hex } from "viem";
import type { Devnet } from "../helpers/devnet.js";
import type { Api } from "../helpers/api.js";
import { startStack, withTwapHistory, type Stack } from "../helpers/stack.js";
import { approveForRouter, poolKeyOf, routerSwap } from "../helpers/trades.js";
import { stateViewAbi } from "../../abis/uniswapV4.js";
import { priceFromX96, priceX96FromSqrt } from "../../lib/twap.js";

/**
 * The partner token's independent mark (SPEC "me/portfolio", "League"): its pool's 30-minute
 * TWAP, not the spot mid, and no NO_INDEPENDENT_MARK to accept before trading it.
 */
let dn: Devnet;
let api: Api;
let stack: Stack;
let nowMs = Date.now();
const clock = () => nowMs;
let key: string;

const WINDOW_S = 1_800;
const latestTime = async () => Number((await dn.pub.getBlock()).timestamp);
const post = (path: string, body: unknown) =>
  api.call("POST", `/api/v1${path}`, body, { authorization: `Bearer ${key}` });

/** The pool's priceX96 (currency1 atoms per currency0 atom × 2^96) at a block, read from the chain. */
async function priceX96At(poolId: Hex, blockNumber: bigint): Promise<bigint> {
  const [sqrt] = await dn.pub.readContract({
    address: dn.universe.contracts.stateView,
    abi: stateViewAbi,
    functionName: "getSlot0",
    args: [poolId],
    blockNumber,
  });
  return priceX96FromSqrt(sqrt);
}

beforeAll(async () => {
  stack = await startStack({ clock, before: withTwapHistory });
  ({ dn, api } = stack);
  nowMs = (await latestTime()) * 1000;
  key = await stack.agent.signIn(await dn.freshWallet());
}, 120_000);
afterAll(() => stack?.stop());

describe("the partner token's mark", () => {
  it("trades without accepting NO_INDEPENDENT_MARK: its record's reference is its USDG pool's TWAP", async () => {
    const a = await dn.freshWallet(parseEther("5"));
    const k = await stack.agent.signIn(a);
    const p = await stack.agent.post(
      "/live/prepare",
      { wallet: a.address, token_in: "ETH", token_out: "ORBIO", notional_usd: 50 },
      k,
    );
    expect(p.status, JSON.stringify(p.json)).toBe(200);
    expect(p.json.risks.map((r: { code: string }) => r.code)).not.toContain("NO_INDEPENDENT_MARK");
    const rec = await stack.agent.get("/tokens/ORBIO", k);
    expect(rec.json.reference).toEqual({
      source: "twap",
      pool_id: poolKeyOf(dn, "ORBIO", "USDG").id,
      window_s: WINDOW_S,
    });
    expect(rec.json.risks.map((r: { code: string }) => r.code)).not.toContain("NO_INDEPENDENT_MARK");
  });

  it("prices sizing and marks at the 30-minute TWAP: a big swap moves the spot, barely the mark", async () => {
    const pool = poolKeyOf(dn, "ORBIO", "USDG");
    const orbio = dn.token("ORBIO");
    // The pool's price is currency1 per currency0; ORBIO's side depends on how the addresses sort (on chain
    // 4663's addresses USDG sorts first, so the service inverts the mean of the pool's own price).
    const orbioUsd = (x96: bigint) =>
      pool.currency0 === orbio ? priceFromX96(x96, 18, 6) : 1 / priceFromX96(x96, 6, 18);
    const before = await dn.pub.getBlockNumber();
    // Sell 200,000 ORBIO into a pool holding about 500,000: the spot falls by about a third.
    const whale = await dn.freshWallet(parseEther("1"), [[orbio, parseUnits("200000", 18)]]);
    await approveForRouter(dn, whale, orbio);
    const receipt = await routerSwap(dn, whale, {
      poolKey: pool,
      tokenIn: orbio,
      tokenOut: dn.token("USDG"),
      amountIn: parseUnits("200000", 18),
      minOut: 0n,
      feeBips: 0n,
      feeRecipient: whale.address,
    });
    await stack.ix.waitFor(receipt.blockNumber);
    const swappedAt = Number((await dn.pub.getBlock({ blockNumber: receipt.blockNumber })).timestamp);
    const p0 = await priceX96At(pool.id, before);
    const p1 = await priceX96At(pool.id, receipt.blockNumber);
    // Ten minutes after the swap: the window holds 20 minutes of the old price and 10 of the new.
    const now = swappedAt + 600;
    nowMs = now * 1000;
    const twapX96 = (p0 * BigInt(swappedAt - (now - WINDOW_S)) + p1 * BigInt(now - swappedAt)) / BigInt(WINDOW_S);
    const twap = orbioUsd(twapX96);
    const spot = orbioUsd(p1);
    expect(spot / orbioUsd(p0)).toBeLessThan(0.75);

    const q = await post("/live/quote", { token_in: "ORBIO", token_out: "USDG", notional_usd: 100 });
    expect(q.status, JSON.stringify(q.json)).toBe(200);
    expect(q.json.marks.token_in.source).toBe("twap");
    expect(q.json.marks.token_in.usd / twap).toBeCloseTo(1, 9);
    expect(Math.abs(q.json.marks.token_in.usd / spot - 1)).toBeGreaterThan(0.2);
    // The dollar size is converted at the same mark.
    expect(Number(q.json.amount_in) / 1e18).toBeCloseTo(100 / twap, 6);
  });
});
