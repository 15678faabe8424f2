import { encodeAbiParameters, encodeFunctionData, getAddress, zeroAddress, type Address, type Hex } from "viem";
import { permitSingleTypes } from "../../abis/permit2.js";
import {
  CONTRACT_BALANCE,
  Command,
  ROUTER_ADDRESS_THIS,
  ROUTER_MSG_SENDER,
  universalRouterAbi,
} from "../../abis/universalRouter.js";
import { inputs, routerProgram, v4, v4SwapInput, type RouterStep } from "./encode.js";
import type { PoolKey } from "../v4.js";

/**
 * The Universal Router swap call, as pure encoding shared by the server's plans, fast mode's
 * rebuild and the SDK's fast transactions: the same inputs give the same bytes everywhere.
 */
export type PlanTx = { to: Address; data: Hex; value: string; chain_id: number };
export type PermitSingle = {
  details: { token: Address; amount: bigint; expiration: number; nonce: number };
  spender: Address;
  sigDeadline: bigint;
};
export type FeeSpec = { side: "input" | "output"; bps: number; recipient: Address; amount: bigint };
/** One pool hop as the encoder needs it. */
export type SwapHop = { key: PoolKey; zeroForOne: boolean; currencyIn: Address; currencyOut: Address };

export const planTx = (chainId: number, to: Address, data: Hex, value = 0n): PlanTx => ({
  to: getAddress(to),
  data,
  value: value.toString(),
  chain_id: chainId,
});

/**
 * Universal Router `execute` for a pool route. Input-side fee: a TRANSFER of exactly `fee.amount`
 * of the input before the swap; output-side: a PAY_PORTION of `fee.bps` of the output after it.
 * The output is swept to the caller with `amountOutMin` as the one minimum check. WETH is unwrapped
 * before and wrapped after (pools trade native ETH).
 */
export function buildRouterSwap(p: {
  chainId: number;
  router: Address;
  route: { hops: SwapHop[] };
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
  if (p.permit)
    steps.push({ command: Command.PERMIT2_PERMIT, input: inputs.permit2Permit(p.permit.permit, p.permit.signature) });
  if (!ethIn)
    steps.push({
      command: Command.PERMIT2_TRANSFER_FROM,
      input: inputs.permit2TransferFrom(p.tokenIn, ROUTER_ADDRESS_THIS, p.amountIn),
    });
  if (p.fee.side === "input")
    steps.push({ command: Command.TRANSFER, input: inputs.transfer(p.tokenIn, p.fee.recipient, p.fee.amount) });
  if (wethIn)
    steps.push({
      command: Command.UNWRAP_WETH,
      input: encodeAbiParameters([{ type: "address" }, { type: "uint256" }], [ROUTER_ADDRESS_THIS, swapIn]),
    });
  steps.push({
    command: Command.V4_SWAP,
    input: v4SwapInput([
      v4.settle(first.currencyIn, swapIn, false),
      ...p.route.hops.map((h, i) =>
        v4.swapExactInSingle({
          poolKey: h.key,
          zeroForOne: h.zeroForOne,
          amountIn: i === 0 ? swapIn : 0n,
          amountOutMinimum: 0n,
        }),
      ),
      v4.take(last.currencyOut, ROUTER_ADDRESS_THIS, 0n),
    ]),
  });
  if (wethOut)
    steps.push({
      command: Command.WRAP_ETH,
      input: encodeAbiParameters([{ type: "address" }, { type: "uint256" }], [ROUTER_ADDRESS_THIS, CONTRACT_BALANCE]),
    });
  if (p.fee.side === "output")
    steps.push({
      command: Command.PAY_PORTION,
      input: inputs.payPortion(p.tokenOut, p.fee.recipient, BigInt(p.fee.bps)),
    });
  steps.push({ command: Command.SWEEP, input: inputs.sweep(p.tokenOut, ROUTER_MSG_SENDER, p.amountOutMin) });
  const { commands, inputs: ins } = routerProgram(steps);
  const data = encodeFunctionData({
    abi: universalRouterAbi,
    functionName: "execute",
    args: [commands, ins, BigInt(p.deadline)],
  });
  return planTx(p.chainId, p.router, data, ethIn ? p.amountIn : 0n);
}

/** Permit2 PermitSingle typed data (domain: name "Permit2", chain, the permit contract). */
export function permitTypedData(chainId: number, permit2: Address, permit: PermitSingle) {
  return {
    domain: { name: "Permit2", chainId, verifyingContract: permit2 },
    types: permitSingleTypes,
    primaryType: "PermitSingle" as const,
    message: permit,
  };
}
