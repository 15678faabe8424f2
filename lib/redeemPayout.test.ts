import { describe, expect, it } from "vitest";
import { encodeFunctionData, erc20Abi, parseEther, toHex, zeroAddress, type Address } from "viem";
import { launchpadAbi } from "../abis/fixtures.js";
import { Command, universalRouterAbi } from "../abis/universalRouter.js";
import type { Execution } from "./delegation.js";
import { payoutProblems } from "./redeemPayout.js";
import { inputs } from "./router/encode.js";

const a = (n: number) => `0x${n.toString(16).padStart(40, "0")}` as Address;
const pins = { router: a(0xe1), launchpad: a(0xe2), weth: a(0xe3), feeRecipient: a(0xfe) };
const wallet = a(0xaa);
const thief = a(0xbad);
const token = a(0x70c);
const ctx = { ...pins, wallet, feeBps: 100 };

/** A curve buy of 1 ETH in all: 1 % to the fee recipient, the rest to the curve, tokens to `to`. */
const curveBuy = (to: Address = wallet, fee = parseEther("0.01")): Execution[] => [
  { target: pins.feeRecipient, value: fee, callData: "0x" },
  {
    target: pins.launchpad,
    value: parseEther("1") - fee,
    callData: encodeFunctionData({ abi: launchpadAbi, functionName: "buy", args: [token, 1n, to] }),
  },
];
const routerCall = (steps: [number, `0x${string}`][], value = 0n): Execution => ({
  target: pins.router,
  value,
  callData: encodeFunctionData({
    abi: universalRouterAbi,
    functionName: "execute",
    args: [toHex(Uint8Array.from(steps.map(([c]) => c))), steps.map(([, i]) => i), 2n ** 40n],
  }),
});

describe("the executor signing service's own reading of a redeem's payout", () => {
  it("passes a curve buy paying the wallet and exactly the plan's fee, in either order", () => {
    expect(payoutProblems(curveBuy(), ctx)).toEqual([]);
    expect(payoutProblems([...curveBuy()].reverse(), ctx)).toEqual([]);
  });

  it(
    "refuses output to anyone but the wallet, another fee than the plan's, a missing fee, a second trade or any " +
      "other call",
    () => {
      expect(payoutProblems(curveBuy(thief), ctx).join()).toMatch(/SESSION_RECIPIENTS.*not the wallet/);
      expect(payoutProblems(curveBuy(wallet, parseEther("0.005")), ctx).join()).toMatch(/the plan says 100/);
      expect(payoutProblems(curveBuy(), { ...ctx, feeBps: 50 }).join()).toMatch(/pays 100 bps.*the plan says 50/);
      expect(payoutProblems([curveBuy()[1]!], ctx).join()).toMatch(/exactly one fee payment/);
      expect(payoutProblems([...curveBuy(), curveBuy()[1]!], ctx).join()).toMatch(/exactly one trade, not 2/);
      const steal: Execution = {
        target: token,
        value: 0n,
        callData: encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [thief, 1n] }),
      };
      expect(payoutProblems([...curveBuy(), steal], ctx).join()).toMatch(
        /calls 0x000000000000000000000000000000000000070c: neither/,
      );
      expect(payoutProblems([{ target: thief, value: 1n, callData: "0x" }], ctx).join()).toMatch(
        /exactly one trade, not 0/,
      );
    },
  );

  it(
    "refuses a router call sweeping the wallet's ETH to a thief, and a router trade with a separate fee " + "payment",
    () => {
      const drain = routerCall([[Command.SWEEP, inputs.sweep(zeroAddress, thief, 0n)]], parseEther("0.01"));
      expect(payoutProblems([drain], ctx).join()).toMatch(/SESSION_RECIPIENTS/);
      const toWallet = routerCall([[Command.SWEEP, inputs.sweep(zeroAddress, wallet, 0n)]]);
      expect(payoutProblems([toWallet, { target: pins.feeRecipient, value: 1n, callData: "0x" }], ctx).join()).toMatch(
        /takes its fee inside the router call/,
      );
    },
  );
});
