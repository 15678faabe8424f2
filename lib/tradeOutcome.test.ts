import { describe, expect, it } from "vitest";
import {
  encodeAbiParameters,
  encodeEventTopics,
  getAddress,
  parseAbi,
  zeroAddress,
  type Address,
  type Hex,
} from "viem";
import { poolManagerAbi } from "../abis/uniswapV4.js";
import { launchpadAbi } from "../abis/fixtures.js";
import { relayedOutcome, type RawLog, type RelayedPlan } from "./tradeOutcome.js";

// Logs encoded with the contracts' own ABIs: what eth_getTransactionReceipt would carry.
const erc20Events = parseAbi([
  "event Transfer(address indexed from, address indexed to, uint256 value)",
  "event Deposit(address indexed dst, uint256 wad)",
  "event Withdrawal(address indexed src, uint256 wad)",
]);
const a = (n: number) => getAddress(`0x${n.toString(16).padStart(40, "0")}`);
const wallet = a(0xa11ce);
const router = a(0x7007e7);
const poolManager = a(0x9001);
const launchpad = a(0x1a0c4);
const platform = a(0xfee);
const usdg = a(0x05d6);
const weth = a(0x3e74);
const meme = a(0x3e3e);
const contracts = { poolManager, router, launchpad };
let index = 0;
const log = (address: Address, topics: Hex[], data: Hex): RawLog => ({ address, topics, data, logIndex: index++ });
const transfer = (token: Address, from: Address, to: Address, value: bigint) =>
  log(
    token,
    encodeEventTopics({ abi: erc20Events, eventName: "Transfer", args: { from, to } }) as Hex[],
    encodeAbiParameters([{ type: "uint256" }], [value]),
  );
const deposit = (dst: Address, wad: bigint) =>
  log(
    weth,
    encodeEventTopics({ abi: erc20Events, eventName: "Deposit", args: { dst } }) as Hex[],
    encodeAbiParameters([{ type: "uint256" }], [wad]),
  );
const swap = (sender: Address, amount0: bigint, amount1: bigint) =>
  log(
    poolManager,
    encodeEventTopics({
      abi: poolManagerAbi,
      eventName: "Swap",
      args: { id: `0x${"11".repeat(32)}`, sender },
    }) as Hex[],
    encodeAbiParameters(
      [
        { type: "int128" },
        { type: "int128" },
        { type: "uint160" },
        { type: "uint128" },
        { type: "int24" },
        { type: "uint24" },
      ],
      [amount0, amount1, 2n ** 96n, 10n ** 18n, -200, 3000],
    ),
  );
const curveTrade = (token: Address, trader: Address, isBuy: boolean, ethAmount: bigint, tokenAmount: bigint) =>
  log(
    launchpad,
    encodeEventTopics({ abi: launchpadAbi, eventName: "Trade", args: { token, trader } }) as Hex[],
    encodeAbiParameters(
      Array(6)
        .fill({ type: "uint256" })
        .map((t, i) => (i === 0 ? { type: "bool" } : t)) as never,
      [isBuy, ethAmount, tokenAmount, 1n, 2n, 3n] as never,
    ),
  );
const ok = (logs: RawLog[]) => ({ status: "0x1", logs });
const plan = (p: Partial<RelayedPlan> & Pick<RelayedPlan, "tokenIn" | "tokenOut">): RelayedPlan => ({
  wallet,
  execution: "router",
  txValue: 0n,
  fee: { side: "input", bps: 25, token: p.tokenIn, recipient: platform, amount: 0n },
  ...p,
});

describe("relayedOutcome: a relayed trade's outcome from its receipt and its plan, no trace", () => {
  it(
    "ETH -> USDG, input-side ETH fee: ETH in is the value, the fee the TRANSFER's exact amount, USDG out from " +
      "Transfer",
    () => {
      const p = plan({
        tokenIn: zeroAddress,
        tokenOut: usdg,
        txValue: 10n ** 17n,
        fee: { side: "input", bps: 25, token: zeroAddress, recipient: platform, amount: 25n * 10n ** 13n },
      });
      // The router swaps 0.09975 ETH: amount0 negative (paid by the router), amount1 positive (USDG to it).
      const o = relayedOutcome(
        ok([
          swap(router, -(10n ** 17n - 25n * 10n ** 13n), 299_000_000n),
          transfer(usdg, poolManager, router, 299_000_000n),
          transfer(usdg, router, wallet, 299_000_000n),
        ]),
        p,
        contracts,
      );
      expect(o).toEqual({
        status: "mined",
        tokenIn: zeroAddress,
        amountIn: 10n ** 17n,
        tokenOut: usdg,
        amountOut: 299_000_000n,
        feeToken: zeroAddress,
        feeAmount: 25n * 10n ** 13n,
        eth: ["tx_value"],
      });
    },
  );

  it(
    "USDG -> ETH, output-side ETH fee: the last hop's Swap gives the gross, PAY_PORTION takes bps, SWEEP the " + "rest",
    () => {
      const p = plan({
        tokenIn: usdg,
        tokenOut: zeroAddress,
        fee: { side: "output", bps: 25, token: zeroAddress, recipient: platform, amount: 1n },
      });
      const gross = 66_543_210_987_654_321n;
      // Two hops USDG -> X -> ETH: the last Swap (amount0 > 0) is the ETH out; another sender's Swap is not ours.
      const o = relayedOutcome(
        ok([
          transfer(usdg, wallet, router, 200_000_000n),
          swap(router, 5n, -200_000_000n),
          swap(router, gross, -5n),
          swap(a(0xbeef), 10n ** 18n, -1n),
        ]),
        p,
        contracts,
      );
      const fee = (gross * 25n) / 10_000n;
      expect(o).toMatchObject({
        status: "mined",
        tokenIn: usdg,
        amountIn: 200_000_000n,
        tokenOut: zeroAddress,
        amountOut: gross - fee,
        feeToken: zeroAddress,
        feeAmount: fee,
        eth: ["v4_swap"],
      });
    },
  );

  it(
    "USDG -> ETH, input-side USDG fee: the fee is the Transfer to the recipient, ETH out the whole Swap " + "output",
    () => {
      const p = plan({
        tokenIn: usdg,
        tokenOut: zeroAddress,
        fee: { side: "input", bps: 25, token: usdg, recipient: platform, amount: 500_000n },
      });
      const o = relayedOutcome(
        ok([
          transfer(usdg, wallet, router, 200_000_000n),
          transfer(usdg, router, platform, 500_000n),
          swap(router, 66n * 10n ** 15n, -199_500_000n),
        ]),
        p,
        contracts,
      );
      expect(o).toMatchObject({
        amountIn: 200_000_000n,
        amountOut: 66n * 10n ** 15n,
        feeToken: usdg,
        feeAmount: 500_000n,
      });
    },
  );

  it("USDG -> WETH: WETH out is the SWEEP's Transfer after the router's Deposit", () => {
    const p = plan({
      tokenIn: usdg,
      tokenOut: weth,
      fee: { side: "input", bps: 25, token: usdg, recipient: platform, amount: 500_000n },
    });
    const o = relayedOutcome(
      ok([
        transfer(usdg, wallet, router, 200_000_000n),
        transfer(usdg, router, platform, 500_000n),
        swap(router, 66n * 10n ** 15n, -199_500_000n),
        deposit(router, 66n * 10n ** 15n),
        transfer(weth, router, wallet, 66n * 10n ** 15n),
      ]),
      p,
      contracts,
    );
    expect(o).toMatchObject({
      tokenOut: weth,
      amountOut: 66n * 10n ** 15n,
      feeToken: usdg,
      feeAmount: 500_000n,
      eth: [],
    });
  });

  it("curve buy two_step: tokens out from Transfer, the fee paid only when the fee transaction mined", () => {
    const p = plan({
      execution: "curve",
      tokenIn: zeroAddress,
      tokenOut: meme,
      txValue: 4975n * 10n ** 13n,
      fee: { side: "input", bps: 50, token: zeroAddress, recipient: platform, amount: 25n * 10n ** 13n },
    });
    const logs = [
      transfer(meme, zeroAddress, wallet, 123_456n),
      curveTrade(meme, wallet, true, 4975n * 10n ** 13n, 123_456n),
    ];
    expect(relayedOutcome(ok(logs), p, contracts, { status: "0x1" })).toMatchObject({
      amountIn: 4975n * 10n ** 13n,
      amountOut: 123_456n,
      feeToken: zeroAddress,
      feeAmount: 25n * 10n ** 13n,
    });
    expect(relayedOutcome(ok(logs), p, contracts, { status: "0x0" })).toMatchObject({
      amountOut: 123_456n,
      feeToken: null,
      feeAmount: null,
    });
  });

  it("curve sell two_step pays ethAmount to the wallet; a batch sale nets the fee it paid inside", () => {
    const fee = { side: "output" as const, bps: 50, token: zeroAddress, recipient: platform, amount: 10n ** 14n };
    const logs = [transfer(meme, wallet, launchpad, 1_000n), curveTrade(meme, wallet, false, 2n * 10n ** 16n, 1_000n)];
    expect(
      relayedOutcome(ok(logs), plan({ execution: "curve", tokenIn: meme, tokenOut: zeroAddress, fee }), contracts, {
        status: "0x1",
      }),
    ).toMatchObject({
      amountIn: 1_000n,
      amountOut: 2n * 10n ** 16n,
      feeToken: zeroAddress,
      feeAmount: 10n ** 14n,
      eth: ["curve_trade"],
    });
    expect(
      relayedOutcome(
        ok(logs),
        plan({ execution: "batch", tokenIn: meme, tokenOut: zeroAddress, txValue: 10n ** 14n, fee }),
        contracts,
      ),
    ).toMatchObject({ amountOut: 2n * 10n ** 16n - 10n ** 14n, feeAmount: 10n ** 14n });
  });

  it("a reverted trade moved nothing; a two_step fee that went first is still paid", () => {
    const p = plan({
      execution: "curve",
      tokenIn: zeroAddress,
      tokenOut: meme,
      txValue: 1n,
      fee: { side: "input", bps: 50, token: zeroAddress, recipient: platform, amount: 7n },
    });
    expect(relayedOutcome({ status: "0x0", logs: [] }, p, contracts, { status: "0x1" })).toEqual({
      status: "reverted",
      tokenIn: zeroAddress,
      amountIn: null,
      tokenOut: meme,
      amountOut: null,
      feeToken: zeroAddress,
      feeAmount: 7n,
      eth: [],
    });
    expect(
      relayedOutcome(
        { status: "reverted", logs: [] },
        plan({ tokenIn: zeroAddress, tokenOut: usdg, txValue: 1n }),
        contracts,
      ),
    ).toMatchObject({ status: "reverted", amountOut: null, feeAmount: null });
  });
});
