import { describe, expect, it } from "vitest";
import { encodeAbiParameters, encodeFunctionData, getAddress, toHex, zeroAddress, type Address, type Hex } from "viem";
import {
  Command,
  CONTRACT_BALANCE,
  ROUTER_ADDRESS_THIS,
  ROUTER_MSG_SENDER,
  universalRouterAbi,
} from "../../abis/universalRouter.js";
import { V4Action } from "../../abis/uniswapV4.js";
import { inputs, v4, v4SwapInput } from "./encode.js";
import { readRouterCall } from "./read.js";

const router = "0x00000000000000000000000000000000000000aa" as Address;
const wallet = "0x00000000000000000000000000000000000000bb" as Address;
const fee = "0x00000000000000000000000000000000000000cc" as Address;
const weth = "0x00000000000000000000000000000000000000dd" as Address;
const usdg = "0x00000000000000000000000000000000000000ee" as Address;
const thief = "0x0000000000000000000000000000000000000bad" as Address;
const ctx = { router, wallet, feeRecipient: fee, weth };
const key = { currency0: zeroAddress, currency1: usdg, fee: 500, tickSpacing: 10, hooks: zeroAddress };
const deadline = 2_000_000_000n;

const call = (steps: [number, Hex][]) =>
  encodeFunctionData({
    abi: universalRouterAbi,
    functionName: "execute",
    args: [toHex(Uint8Array.from(steps.map((s) => s[0]))), steps.map((s) => s[1]), deadline],
  });
const swap = (amount: bigint, hooks: Address = zeroAddress, takeTo: Address = ROUTER_ADDRESS_THIS) =>
  v4SwapInput([
    v4.settle(zeroAddress, amount, false),
    v4.swapExactInSingle({ poolKey: { ...key, hooks }, zeroForOne: true, amountIn: amount, amountOutMinimum: 0n }),
    v4.take(usdg, takeTo, 0n),
  ]);
/** ETH -> USDG as the service builds it: fee TRANSFER of the input, the swap, SWEEP to the caller with the minimum. */
const honest = (over: Partial<Record<"fee" | "sweepTo" | "min" | "swapIn", unknown>> = {}): [number, Hex][] => [
  [Command.TRANSFER, inputs.transfer(zeroAddress, fee, (over.fee as bigint) ?? 25n)],
  [Command.V4_SWAP, swap((over.swapIn as bigint) ?? 9_975n)],
  [Command.SWEEP, inputs.sweep(usdg, (over.sweepTo as Address) ?? ROUTER_MSG_SENDER, (over.min as bigint) ?? 900n)],
];
const rules = (value: bigint, steps: [number, Hex][], target: Address = router) =>
  readRouterCall(target, value, call(steps), ctx).failures.map((f) => f.rule);

describe("readRouterCall: the co-signer's strict reading of a router call", () => {
  it("reads the honest trade: input, output and minimum, the fee, no failure", () => {
    const r = readRouterCall(router, 10_000n, call(honest()), ctx);
    expect(r.failures).toEqual([]);
    expect(r).toMatchObject({
      tokenIn: zeroAddress,
      amountIn: 10_000n,
      tokenOut: getAddress(usdg),
      minOut: 900n,
      deadline,
    });
    expect(r.fees).toEqual([{ token: zeroAddress, amount: 25n, bps: null, command: "TRANSFER" }]);
  });

  it(
    "refuses any recipient but the wallet, the router and the fee recipient: SWEEP, TRANSFER, V4 TAKE, WRAP_ETH, a " +
      "Permit2 pull",
    () => {
      expect(rules(10_000n, honest({ sweepTo: thief }))).toContain("SESSION_RECIPIENTS");
      expect(rules(10_000n, [...honest(), [Command.TRANSFER, inputs.transfer(usdg, thief, 1n)]])).toContain(
        "SESSION_RECIPIENTS",
      );
      expect(
        rules(10_000n, [honest()[0]!, [Command.V4_SWAP, swap(9_975n, zeroAddress, thief)], honest()[2]!]),
      ).toContain("SESSION_RECIPIENTS");
      expect(
        rules(10_000n, [
          ...honest(),
          [
            Command.WRAP_ETH,
            encodeAbiParameters([{ type: "address" }, { type: "uint256" }], [thief, CONTRACT_BALANCE]),
          ],
        ]),
      ).toContain("SESSION_RECIPIENTS");
      expect(
        rules(0n, [[Command.PERMIT2_TRANSFER_FROM, inputs.permit2TransferFrom(usdg, thief, 5n)], ...honest().slice(1)]),
      ).toContain("SESSION_RECIPIENTS");
      // Output straight to the wallet skips the SWEEP's minimum: refused too.
      expect(
        rules(10_000n, [honest()[0]!, [Command.V4_SWAP, swap(9_975n, zeroAddress, wallet)], honest()[2]!]),
      ).toContain("SESSION_EXECUTION");
    },
  );

  it("reads sub-plans: a theft one or two levels down is found; three levels are refused", () => {
    const sub = (steps: [number, Hex][]) =>
      encodeAbiParameters(
        [{ type: "bytes" }, { type: "bytes[]" }],
        [toHex(Uint8Array.from(steps.map((s) => s[0]))), steps.map((s) => s[1])],
      );
    const theft: [number, Hex] = [Command.SWEEP, inputs.sweep(usdg, thief, 0n)];
    expect(rules(10_000n, [...honest(), [Command.EXECUTE_SUB_PLAN, sub([theft])]])).toEqual(["SESSION_RECIPIENTS"]);
    expect(
      rules(10_000n, [...honest(), [Command.EXECUTE_SUB_PLAN, sub([[Command.EXECUTE_SUB_PLAN, sub([theft])]])]]),
    ).toEqual(["SESSION_RECIPIENTS"]);
    const deep = sub([
      [
        Command.EXECUTE_SUB_PLAN,
        sub([[Command.EXECUTE_SUB_PLAN, sub([[Command.SWEEP, inputs.sweep(usdg, ROUTER_MSG_SENDER, 0n)]])]]),
      ],
    ]);
    expect(rules(10_000n, [...honest(), [Command.EXECUTE_SUB_PLAN, deep]])).toContain("SESSION_EXECUTION");
  });

  it(
    "refuses other targets and functions, revert-allowed commands, unknown commands and V4 actions, hooked " + "pools",
    () => {
      expect(rules(10_000n, honest(), thief)).toEqual(["SESSION_TARGET"]);
      const noDeadline = encodeFunctionData({
        abi: universalRouterAbi,
        functionName: "execute",
        args: [toHex(Uint8Array.from([Command.SWEEP])), [inputs.sweep(usdg, ROUTER_MSG_SENDER, 0n)]],
      });
      expect(readRouterCall(router, 0n, noDeadline, ctx).failures.map((f) => f.rule)).toEqual(["SESSION_TARGET"]);
      expect(
        rules(
          10_000n,
          honest().map(([c, i]) => [c === Command.TRANSFER ? c | 0x80 : c, i] as [number, Hex]),
        ),
      ).toContain("SESSION_EXECUTION");
      expect(rules(10_000n, [...honest(), [Command.PERMIT2_PERMIT, "0x"]])).toContain("SESSION_EXECUTION");
      expect(rules(10_000n, [...honest(), [0x40, "0x"]])).toContain("SESSION_EXECUTION"); // the bridge deposit
      const takeAll = v4SwapInput([
        v4.settle(zeroAddress, 9_975n, false),
        {
          action: V4Action.TAKE_ALL,
          params: encodeAbiParameters([{ type: "address" }, { type: "uint256" }], [usdg, 0n]),
        },
      ]);
      expect(rules(10_000n, [honest()[0]!, [Command.V4_SWAP, takeAll], honest()[2]!])).toContain("SESSION_EXECUTION");
      expect(rules(10_000n, [honest()[0]!, [Command.V4_SWAP, swap(9_975n, thief)], honest()[2]!])).toContain(
        "SESSION_EXECUTION",
      );
    },
  );

  it("refuses input left in the router for the next caller, two inputs, nothing swept", () => {
    expect(rules(10_000n, honest({ swapIn: 9_000n }))).toContain("SESSION_EXECUTION");
    expect(
      rules(10_000n, [
        [Command.PERMIT2_TRANSFER_FROM, inputs.permit2TransferFrom(usdg, ROUTER_ADDRESS_THIS, 5n)],
        ...honest(),
      ]),
    ).toContain("SESSION_EXECUTION");
    expect(rules(10_000n, honest().slice(0, 2))).toContain("SESSION_EXECUTION");
    expect(rules(0n, honest())).toContain("SESSION_EXECUTION");
  });

  it(
    "refuses input parked in the router for anyone to sweep: a transfer to the router, a fixed wrap, a swap smaller " +
      "than settled, a take of the input",
    () => {
      const parked = (steps: [number, Hex][]) => rules(10_000n, steps);
      // The fee's TRANSFER to the router itself would count 25 as handed on while it stays there.
      expect(
        parked([[Command.TRANSFER, inputs.transfer(zeroAddress, ROUTER_ADDRESS_THIS, 25n)], ...honest().slice(1)]),
      ).toContain("SESSION_EXECUTION");
      // 9,000 wrapped to WETH in the router, 975 swapped.
      expect(
        parked([
          honest()[0]!,
          [
            Command.WRAP_ETH,
            encodeAbiParameters([{ type: "address" }, { type: "uint256" }], [ROUTER_ADDRESS_THIS, 9_000n]),
          ],
          [Command.V4_SWAP, swap(975n)],
          honest()[2]!,
        ]),
      ).toContain("SESSION_EXECUTION");
      // Settles 9,975 but swaps 975: the rest of the settled input is taken back to the router.
      const short = v4SwapInput([
        v4.settle(zeroAddress, 9_975n, false),
        v4.swapExactInSingle({ poolKey: key, zeroForOne: true, amountIn: 975n, amountOutMinimum: 0n }),
        v4.take(usdg, ROUTER_ADDRESS_THIS, 0n),
        v4.take(zeroAddress, ROUTER_ADDRESS_THIS, 0n),
      ]);
      expect(parked([honest()[0]!, [Command.V4_SWAP, short], honest()[2]!])).toContain("SESSION_EXECUTION");
      // The honest shape still reads clean.
      expect(parked(honest())).toEqual([]);
    },
  );
});
