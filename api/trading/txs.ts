import { decodeAbiParameters, decodeFunctionData, encodeAbiParameters, encodeFunctionData, getAddress, parseAbi, zeroAddress, type Address, type Hex } from "viem";
import { erc20Abi } from "../../abis/erc20.js";
import { launchpadAbi } from "../../abis/fixtures.js";
import { permit2Abi, permitSingleParams, permitSingleTypes } from "../../abis/permit2.js";
import { exactInputSingleParams, V4Action } from "../../abis/uniswapV4.js";
import { CONTRACT_BALANCE, Command, ROUTER_ADDRESS_THIS, ROUTER_MSG_SENDER, universalRouterAbi } from "../../abis/universalRouter.js";
import { inputs, routerProgram, v4, v4SwapInput, type RouterStep } from "../../lib/router.js";
import type { CurveRoute, PoolRoute } from "./routing.js";

/**
 * Plan building: the exact transactions of a trade, as pure encoding. Every input a plan needs is
 * passed in (amounts, fee, deadline, permit), so the same call rebuilds the same bytes; the relay
 * compares signed transactions against what this produced.
 */
export type PlanTx = { to: Address; data: Hex; value: string; chain_id: number };
export type Step = { kind: "approve" | "sign_permit" | "fee_transfer" | "swap"; why: string; tx: PlanTx | null; decoded: Record<string, unknown> };

export type PermitSingle = { details: { token: Address; amount: bigint; expiration: number; nonce: number }; spender: Address; sigDeadline: bigint };
export type FeeSpec = { side: "input" | "output"; bps: number; recipient: Address; amount: bigint };

/** ERC-7579 batch mode (call type 0x01, default exec type): the stateless delegator's execute. */
export const BATCH_DEFAULT_MODE = "0x0100000000000000000000000000000000000000000000000000000000000000" as const;
export const delegatorExecuteAbi = parseAbi(["function execute(bytes32 mode, bytes executionCalldata) payable"]);
const executionsParam = [{ type: "tuple[]", components: [{ name: "target", type: "address" }, { name: "value", type: "uint256" }, { name: "callData", type: "bytes" }] }] as const;

export const COMMAND_NAMES: Record<number, string> = Object.fromEntries(Object.entries(Command).map(([k, v]) => [v, k]));

const tx = (chainId: number, to: Address, data: Hex, value = 0n): PlanTx => ({ to: getAddress(to), data, value: value.toString(), chain_id: chainId });

/**
 * Universal Router `execute` for a pool route. Input-side fee: a TRANSFER of exactly `fee.amount`
 * of the input before the swap; output-side: a PAY_PORTION of `fee.bps` of the output after it.
 * The output is swept to the caller with `amountOutMin` as the one minimum check. WETH is unwrapped
 * before and wrapped after (pools trade native ETH).
 */
export function buildRouterSwap(p: {
  chainId: number;
  router: Address;
  route: PoolRoute;
  tokenIn: Address;
  tokenOut: Address;
  weth: Address;
  amountIn: bigint;
  amountOutMin: bigint;
  fee: FeeSpec;
  deadline: number;
  permit?: { permit: PermitSingle; signature: Hex } | null;
}): PlanTx {
  const ethIn = p.tokenIn === zeroAddress;
  const wethIn = p.tokenIn.toLowerCase() === p.weth.toLowerCase();
  const wethOut = p.tokenOut.toLowerCase() === p.weth.toLowerCase();
  const first = p.route.hops[0]!;
  const last = p.route.hops[p.route.hops.length - 1]!;
  const swapIn = p.fee.side === "input" ? p.amountIn - p.fee.amount : p.amountIn;
  const steps: RouterStep[] = [];
  if (p.permit) steps.push({ command: Command.PERMIT2_PERMIT, input: inputs.permit2Permit(p.permit.permit, p.permit.signature) });
  if (!ethIn) steps.push({ command: Command.PERMIT2_TRANSFER_FROM, input: inputs.permit2TransferFrom(p.tokenIn, ROUTER_ADDRESS_THIS, p.amountIn) });
  if (p.fee.side === "input") steps.push({ command: Command.TRANSFER, input: inputs.transfer(p.tokenIn, p.fee.recipient, p.fee.amount) });
  if (wethIn) steps.push({ command: Command.UNWRAP_WETH, input: encodeAbiParameters([{ type: "address" }, { type: "uint256" }], [ROUTER_ADDRESS_THIS, swapIn]) });
  steps.push({
    command: Command.V4_SWAP,
    input: v4SwapInput([
      v4.settle(first.currencyIn, swapIn, false),
      ...p.route.hops.map((h, i) => v4.swapExactInSingle({ poolKey: h.key, zeroForOne: h.zeroForOne, amountIn: i === 0 ? swapIn : 0n, amountOutMinimum: 0n })),
      v4.take(last.currencyOut, ROUTER_ADDRESS_THIS, 0n),
    ]),
  });
  if (wethOut) steps.push({ command: Command.WRAP_ETH, input: encodeAbiParameters([{ type: "address" }, { type: "uint256" }], [ROUTER_ADDRESS_THIS, CONTRACT_BALANCE]) });
  if (p.fee.side === "output") steps.push({ command: Command.PAY_PORTION, input: inputs.payPortion(p.tokenOut, p.fee.recipient, BigInt(p.fee.bps)) });
  steps.push({ command: Command.SWEEP, input: inputs.sweep(p.tokenOut, ROUTER_MSG_SENDER, p.amountOutMin) });
  const { commands, inputs: ins } = routerProgram(steps);
  const data = encodeFunctionData({ abi: universalRouterAbi, functionName: "execute", args: [commands, ins, BigInt(p.deadline)] });
  return tx(p.chainId, p.router, data, ethIn ? p.amountIn : 0n);
}

/** The curve's own call: buy with ETH (value) or sell tokens, output straight to the wallet. */
export function buildCurveSwap(p: { chainId: number; launchpad: Address; route: CurveRoute; wallet: Address; amountIn: bigint; amountOutMin: bigint }): PlanTx {
  const data = p.route.buy
    ? encodeFunctionData({ abi: launchpadAbi, functionName: "buy", args: [p.route.token, p.amountOutMin, p.wallet] })
    : encodeFunctionData({ abi: launchpadAbi, functionName: "sell", args: [p.route.token, p.amountIn, p.amountOutMin, p.wallet] });
  return tx(p.chainId, p.launchpad, data, p.route.buy ? p.amountIn : 0n);
}

/** Plain ETH to the fee recipient (the fee_transfer of a two-step curve plan). */
export const buildFeeTransfer = (chainId: number, recipient: Address, amount: bigint): PlanTx => tx(chainId, recipient, "0x", amount);

/** One transaction from a 7702-delegated wallet to itself: fee and curve swap in one batch. */
export function buildBatch(chainId: number, wallet: Address, calls: PlanTx[]): PlanTx {
  const executionCalldata = encodeAbiParameters(executionsParam, [calls.map((c) => ({ target: c.to, value: BigInt(c.value), callData: c.data }))]);
  const total = calls.reduce((s, c) => s + BigInt(c.value), 0n);
  return tx(chainId, wallet, encodeFunctionData({ abi: delegatorExecuteAbi, functionName: "execute", args: [BATCH_DEFAULT_MODE, executionCalldata] }), total);
}

export const buildApprove = (chainId: number, token: Address, spender: Address, amount: bigint): PlanTx =>
  tx(chainId, token, encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [spender, amount] }));

export const buildPermit2Approve = (chainId: number, permit2: Address, token: Address, spender: Address, amount: bigint, expiration: number): PlanTx =>
  tx(chainId, permit2, encodeFunctionData({ abi: permit2Abi, functionName: "approve", args: [token, spender, amount, expiration] }));

export const lockdownAbi = parseAbi(["function lockdown((address token, address spender)[] approvals)"]);
export const buildLockdown = (chainId: number, permit2: Address, pairs: { token: Address; spender: Address }[]): PlanTx =>
  tx(chainId, permit2, encodeFunctionData({ abi: lockdownAbi, functionName: "lockdown", args: [pairs] }));

/** Permit2 PermitSingle typed data (domain: name "Permit2", chain, the permit contract). */
export function permitTypedData(chainId: number, permit2: Address, permit: PermitSingle) {
  return {
    domain: { name: "Permit2", chainId, verifyingContract: permit2 },
    types: permitSingleTypes,
    primaryType: "PermitSingle" as const,
    message: permit,
  };
}

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
        const [token, , amount] = decodeAbiParameters([{ type: "address" }, { type: "address" }, { type: "uint160" }], input);
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
            const [, to] = decodeAbiParameters([{ type: "address" }, { type: "address" }, { type: "uint256" }], params[j]!);
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
    if (d.functionName === "buy") return { function: "buy", token: d.args[0].toLowerCase(), amount_out_min: d.args[1].toString(), recipient: d.args[2].toLowerCase() };
    if (d.functionName === "sell") return { function: "sell", token: d.args[0].toLowerCase(), amount_in: d.args[1].toString(), amount_out_min: d.args[2].toString(), recipient: d.args[3].toLowerCase() };
    return { function: d.functionName };
  } catch {
    return { function: "unknown" };
  }
}
