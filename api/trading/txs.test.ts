import { describe, expect, it } from "vitest";
import { decodeFunctionData, getAddress, zeroAddress, type Address } from "viem";
import { universalRouterAbi } from "../../abis/universalRouter.js";
import { buildRouterSwap, describeRouterCall, type PlanTx } from "./txs.js";
import { diffTx } from "./relay.js";
import { candidateRoutes, routeMidAtoms, type PoolRoute } from "./routing.js";
import type { PoolState } from "../ports/indexed.js";
import { fingerprint } from "./ledger.js";
import { Q96 } from "../../lib/v4.js";

const USDG = getAddress("0xe7f1725e7734ce288f8367e1bb143e90bb3f0512");
const TSLA = getAddress("0x5f3f1dbd7b74c6b46e8c44f98792a1daf8d69154");
const WETH = getAddress("0x5fbdb2315678afecb367f032d93f642f64180aa3");
const ROUTER = getAddress("0x2279b7a0a67db372996a5fab50d91eaa73d2ebe6");
const FEE_TO = getAddress("0x70997970c51812dc3a010c7d01b50e0d17dc79c8");

const pool = (
  id: string,
  a: Address,
  b: Address,
  priceX96: bigint,
  liquidity = 10n ** 18n,
  hooks: Address = zeroAddress,
): PoolState => {
  const [currency0, currency1] = BigInt(a) < BigInt(b) ? [a, b] : [b, a];
  return {
    id: id as `0x${string}`,
    currency0,
    currency1,
    fee: 3000,
    tickSpacing: 60,
    hooks,
    sqrtPriceX96: 1n,
    priceX96,
    tick: 0,
    liquidity,
    swaps: 0,
    block: 1,
    timestamp: 1,
  };
};

describe("routing", () => {
  const ethUsdg = pool("0x01", zeroAddress, USDG, (3000n * 10n ** 6n * Q96) / 10n ** 18n);
  const tslaUsdg = pool("0x02", TSLA, USDG, Q96 / 2n);
  it("finds direct pools and two hops through a connector, never hooked or empty pools", () => {
    const hooked = pool("0x03", zeroAddress, TSLA, Q96, 10n ** 18n, "0x0000000000000000000000000000000000000bad");
    const empty = pool("0x04", zeroAddress, TSLA, Q96, 0n);
    const routes = candidateRoutes({
      pools: [ethUsdg, tslaUsdg, hooked, empty],
      currencyIn: zeroAddress,
      currencyOut: TSLA,
      connectors: [USDG, zeroAddress],
      venues: ["v4"],
      curveToken: null,
    });
    expect(routes.map((r) => r.id)).toEqual(["v4:0x01,0x02"]);
    const hops = (routes[0] as PoolRoute).hops;
    expect(hops.map((h) => [h.currencyIn, h.currencyOut])).toEqual([
      [zeroAddress, USDG],
      [USDG, TSLA],
    ]);
    expect(
      candidateRoutes({
        pools: [ethUsdg],
        currencyIn: zeroAddress,
        currencyOut: USDG,
        connectors: [USDG, zeroAddress],
        venues: ["curve"],
        curveToken: null,
      }),
    ).toEqual([]);
  });

  it("a route's mid is the product of its pools' mids in the swap direction", () => {
    const [r] = candidateRoutes({
      pools: [ethUsdg],
      currencyIn: USDG,
      currencyOut: zeroAddress,
      connectors: [],
      venues: ["v4"],
      curveToken: null,
    });
    const mid = routeMidAtoms(r!)!;
    expect((mid * 3000 * 1e6) / 1e18).toBeCloseTo(1, 6);
  });
});

describe("router calldata and relay diffs", () => {
  const [route] = candidateRoutes({
    pools: [pool("0x01", zeroAddress, USDG, (3000n * 10n ** 6n * Q96) / 10n ** 18n)],
    currencyIn: USDG,
    currencyOut: zeroAddress,
    connectors: [],
    venues: ["v4"],
    curveToken: null,
  }) as PoolRoute[];
  const build = (over: Partial<Parameters<typeof buildRouterSwap>[0]> = {}) =>
    buildRouterSwap({
      chainId: 4663,
      router: ROUTER,
      route: route!,
      tokenIn: USDG,
      tokenOut: zeroAddress,
      weth: WETH,
      amountIn: 1_000_000n,
      amountOutMin: 300n,
      fee: { side: "input", bps: 25, recipient: FEE_TO, amount: 2_500n },
      deadline: 1_900_000_000,
      ...over,
    });

  it("input-side fee: pull, TRANSFER of exactly the fee, swap, sweep with the minimum", () => {
    const tx = build();
    expect(tx).toMatchObject({ to: ROUTER, value: "0", chain_id: 4663 });
    expect(describeRouterCall(tx.data)).toMatchObject({
      commands: "PERMIT2_TRANSFER_FROM,TRANSFER,V4_SWAP,SWEEP",
      amount_in: "1000000",
      fee_amount: "2500",
      fee_recipient: FEE_TO.toLowerCase(),
      recipient: "msg.sender",
      amount_out_min: "300",
      swap_amount: "997500",
      deadline: "1900000000",
    });
    expect(decodeFunctionData({ abi: universalRouterAbi, data: tx.data }).functionName).toBe("execute");
  });

  it("output-side fee: PAY_PORTION of the bps after the swap; WETH out wraps first", () => {
    const d = describeRouterCall(
      build({ tokenOut: WETH, fee: { side: "output", bps: 50, recipient: FEE_TO, amount: 0n } }).data,
    );
    expect(d).toMatchObject({
      commands: "PERMIT2_TRANSFER_FROM,V4_SWAP,WRAP_ETH,PAY_PORTION,SWEEP",
      fee_bps: "50",
      fee_token: WETH.toLowerCase(),
      token_out: WETH.toLowerCase(),
    });
  });

  it("the same inputs build the same bytes (the relay's fingerprint), and a change is named", () => {
    const a = build();
    expect(build()).toEqual(a);
    expect(fingerprint(a)).toBe(fingerprint(build()));
    const b: PlanTx = build({ amountOutMin: 1n });
    expect(fingerprint(b)).not.toBe(fingerprint(a));
    expect(diffTx(a, b)).toEqual([{ field: "amount_out_min", built: "300", signed: "1" }]);
    expect(diffTx(a, { ...a, chain_id: 1 })).toEqual([{ field: "chain_id", built: "4663", signed: "1" }]);
    expect(diffTx(a, a)).toEqual([]);
  });
});
