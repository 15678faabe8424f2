import {
  decodeAbiParameters,
  decodeFunctionData,
  encodeAbiParameters,
  encodeFunctionData,
  parseAbi,
  type Address,
  type Hex,
} from "viem";
import { erc20Abi } from "../../abis/erc20.js";
import { launchpadAbi } from "../../abis/fixtures.js";
import { permit2Abi, permitSingleParams } from "../../abis/permit2.js";
import { exactInputSingleParams, V4Action } from "../../abis/uniswapV4.js";
import { Command, ROUTER_MSG_SENDER, universalRouterAbi } from "../../abis/universalRouter.js";
import {
  buildRouterSwap,
  permitTypedData,
  planTx,
  type FeeSpec,
  type PermitSingle,
  type PlanTx,
} from "../../lib/router/swap.js";
import type { CurveRoute } from "./routing.js";

/**
 * Plan building: the exact transactions of a trade, as pure encoding. Every input a plan needs is
 * passed in (amounts, fee, deadline, permit), so the same call rebuilds the same bytes; the relay
 * compares signed transactions against what this produced. The router swap itself is lib's.
 */
export { buildRouterSwap, permitTypedData, type FeeSpec, type PermitSingle, type PlanTx };
export type Step = {
  kind: "approve" | "sign_permit" | "fee_transfer" | "swap";
  why: string;
  tx: PlanTx | null;
  decoded: Record<string, unknown>;
};

/** ERC-7579 batch mode (call type 0x01, default exec type): the stateless delegator's execute. */
export const BATCH_DEFAULT_MODE = "0x0100000000000000000000000000000000000000000000000000000000000000" as const;
export const delegatorExecuteAbi = parseAbi(["function execute(bytes32 mode, bytes executionCalldata) payable"]);
const executionsParam = [
  {
    type: "tuple[]",
    components: [
      { name: "target", type: "address" },
      { name: "value", type: "uint256" },
      { name: "callData", type: "bytes" },
    ],
  },
] as const;

export const COMMAND_NAMES: Record<number, string> = Object.fromEntries(
  Object.entries(Command).map(([k, v]) => [v, k]),
);

const tx = planTx;

/** The curve's own call: buy with ETH (value) or sell tokens, output straight to the wallet. */
export function buildCurveSwap(p: {
  chainId: number;
  launchpad: Address;
  route: CurveRoute;
  wallet: Address;
  amountIn: bigint;
  amountOutMin: bigint;
}): PlanTx {
  const data = p.route.buy
    ? encodeFunctionData({ abi: launchpadAbi, functionName: "buy", args: [p.route.token, p.amountOutMin, p.wallet] })
    : encodeFunctionData({
        abi: launchpadAbi,
        functionName: "sell",
        args: [p.route.token, p.amountIn, p.amountOutMin, p.wallet],
      });
  return tx(p.chainId, p.launchpad, data, p.route.buy ? p.amountIn : 0n);
}

/** Plain ETH to the fee recipient (the fee_transfer of a two-step curve plan). */
export const buildFeeTransfer = (chainId: number, recipient: Address, amount: bigint): PlanTx =>
  tx(chainId, recipient, "0x", amount);

/** One transaction from a 7702-delegated wallet to itself: fee and curve swap in one batch. */
export function buildBatch(chainId: number, wallet: Address, calls: PlanTx[]): PlanTx {
  const executionCalldata = encodeAbiParameters(executionsParam, [
    calls.map((c) => ({ target: c.to, value: BigInt(c.value), callData: c.data })),
  ]);
  const total = calls.reduce((s, c) => s + BigInt(c.value), 0n);
  return tx(
    chainId,
    wallet,
    encodeFunctionData({
      abi: delegatorExecuteAbi,
      functionName: "execute",
      args: [BATCH_DEFAULT_MODE, executionCalldata],
    }),
    total,
  );
}

export const buildApprove = (chainId: number, token: Address, spender: Address, amount: bigint): PlanTx =>
  tx(chainId, token, encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [spender, amount] }));

export const buildPermit2Approve = (
  chainId: number,
  permit2: Address,
  token: Address,
  spender: Address,
  amount: bigint,
  expiration: number,
): PlanTx =>
  tx(
    chainId,
    permit2,
    encodeFunctionData({ abi: permit2Abi, functionName: "approve", args: [token, spender, amount, expiration] }),
  );

export const lockdownAbi = parseAbi(["function lockdown((address token, address spender)[] approvals)"]);
export const buildLockdown = (
  chainId: number,
  permit2: Address,
  pairs: { token: Address; spender: Address }[],
): PlanTx => tx(chainId, permit2, encodeFunctionData({ abi: lockdownAbi, functionName: "lockdown", args: [pairs] }));

/**
 * What a router call does, field by field: the words the relay's `diffs` and the steps' `decoded`
 * use. Unknown shapes decode as far as they go; `commands` always names every command.
 */
export function describeRouterCall(data: Hex): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  let commands: Hex;
  let ins: readonly Hex[];
  try {
    const d = decodeFunctionData({ abi: universalRouterAbi, data });
    commands = d.args[0];
    ins = d.args[1];
    out.deadline = d.args.length > 2 ? String((d.args as readonly unknown[])[2]) : null;
  } catch {
    return { function: "unknown" };
  }
  const bytes = commands.slice(2).match(/../g) ?? [];
  out.commands = bytes.map((b) => COMMAND_NAMES[parseInt(b, 16) & 0x3f] ?? `0x${b}`).join(",");
  const addr = [{ type: "address" }, { type: "address" }, { type: "uint256" }] as const;
  bytes.forEach((b, i) => {
    const cmd = parseInt(b, 16) & 0x3f;
    const input = ins[i] ?? "0x";
    try {
      if (cmd === Command.PERMIT2_TRANSFER_FROM) {
        const [token, , amount] = decodeAbiParameters(
          [{ type: "address" }, { type: "address" }, { type: "uint160" }],
          input,
        );
        out.token_in = token.toLowerCase();
        out.amount_in = amount.toString();
      } else if (cmd === Command.TRANSFER) {
        const [token, to, value] = decodeAbiParameters(addr, input);
        out.fee_token = token.toLowerCase();
        out.fee_recipient = to.toLowerCase();
        out.fee_amount = value.toString();
      } else if (cmd === Command.PAY_PORTION) {
        const [token, to, bips] = decodeAbiParameters(addr, input);
        out.fee_token = token.toLowerCase();
        out.fee_recipient = to.toLowerCase();
        out.fee_bps = bips.toString();
      } else if (cmd === Command.SWEEP) {
        const [token, to, min] = decodeAbiParameters(addr, input);
        out.token_out = token.toLowerCase();
        out.recipient = to.toLowerCase() === ROUTER_MSG_SENDER ? "msg.sender" : to.toLowerCase();
        out.amount_out_min = min.toString();
      } else if (cmd === Command.PERMIT2_PERMIT) {
        const [permit] = decodeAbiParameters(permitSingleParams, input);
        out.permit_amount = permit.details.amount.toString();
        out.permit_spender = permit.spender.toLowerCase();
      } else if (cmd === Command.V4_SWAP) {
        const [actions, params] = decodeAbiParameters([{ type: "bytes" }, { type: "bytes[]" }], input);
        const acts = actions.slice(2).match(/../g) ?? [];
        const pools: string[] = [];
        acts.forEach((a, j) => {
          const code = parseInt(a, 16);
          if (code === V4Action.SWAP_EXACT_IN_SINGLE) {
            const [sp] = decodeAbiParameters(exactInputSingleParams, params[j]!);
            pools.push(`${sp.poolKey.currency0.toLowerCase()}/${sp.poolKey.currency1.toLowerCase()}/${sp.poolKey.fee}`);
            if (j <= 1 && sp.amountIn > 0n) out.swap_amount = sp.amountIn.toString();
          } else if (code === V4Action.TAKE) {
            const [, to] = decodeAbiParameters(
              [{ type: "address" }, { type: "address" }, { type: "uint256" }],
              params[j]!,
            );
            out.take_to = to.toLowerCase();
          }
        });
        out.pools = pools.join(" > ");
      }
    } catch {
      out[`input_${i}`] = "undecodable";
    }
  });
  return out;
}

/** What a curve call does (buy/sell arguments), for diffs and decoded steps. */
export function describeCurveCall(data: Hex): Record<string, string | null> {
  try {
    const d = decodeFunctionData({ abi: launchpadAbi, data });
    if (d.functionName === "buy")
      return {
        function: "buy",
        token: d.args[0].toLowerCase(),
        amount_out_min: d.args[1].toString(),
        recipient: d.args[2].toLowerCase(),
      };
    if (d.functionName === "sell")
      return {
        function: "sell",
        token: d.args[0].toLowerCase(),
        amount_in: d.args[1].toString(),
        amount_out_min: d.args[2].toString(),
        recipient: d.args[3].toLowerCase(),
      };
    return { function: d.functionName };
  } catch {
    return { function: "unknown" };
  }
}
