import { encodeAbiParameters, toHex, type Address, type Hex } from "viem";
import { exactInputSingleParams, V4Action } from "../../abis/uniswapV4.js";
import { permitSingleParams } from "../../abis/permit2.js";
import type { PoolKey } from "../v4.js";

/**
 * Universal Router calldata pieces (commands + inputs), built exactly as the 2.1 router decodes
 * them. Pure encoding: which pieces to use for a plan is the routing module's choice.
 */
export type RouterStep = { command: number; input: Hex };

export function routerProgram(steps: RouterStep[]): { commands: Hex; inputs: Hex[] } {
  return { commands: toHex(Uint8Array.from(steps.map((s) => s.command))), inputs: steps.map((s) => s.input) };
}

const addr = { type: "address" } as const;
const u256 = { type: "uint256" } as const;

/** V4_SWAP input: abi.encode(bytes actions, bytes[] params). */
export function v4SwapInput(actions: { action: number; params: Hex }[]): Hex {
  return encodeAbiParameters(
    [{ type: "bytes" }, { type: "bytes[]" }],
    [toHex(Uint8Array.from(actions.map((a) => a.action))), actions.map((a) => a.params)],
  );
}

export const v4 = {
  swapExactInSingle(p: {
    poolKey: PoolKey;
    zeroForOne: boolean;
    amountIn: bigint;
    amountOutMinimum: bigint;
    hookData?: Hex;
  }) {
    return {
      action: V4Action.SWAP_EXACT_IN_SINGLE,
      params: encodeAbiParameters(exactInputSingleParams, [{ ...p, hookData: p.hookData ?? "0x" }]),
    };
  },
  /** Pays the pool from the user (via Permit2) or, for native ETH, from the router's ETH. */
  settleAll(currency: Address, maxAmount: bigint) {
    return { action: V4Action.SETTLE_ALL, params: encodeAbiParameters([addr, u256], [currency, maxAmount]) };
  },
  /** amount 0 = the whole open debt; payerIsUser false = the router pays from its own balance. */
  settle(currency: Address, amount: bigint, payerIsUser: boolean) {
    return {
      action: V4Action.SETTLE,
      params: encodeAbiParameters([addr, u256, { type: "bool" }], [currency, amount, payerIsUser]),
    };
  },
  /** Sends the whole output to the router's caller. */
  takeAll(currency: Address, minAmount: bigint) {
    return { action: V4Action.TAKE_ALL, params: encodeAbiParameters([addr, u256], [currency, minAmount]) };
  },
  /** amount 0 = the whole open credit. */
  take(currency: Address, recipient: Address, amount: bigint) {
    return { action: V4Action.TAKE, params: encodeAbiParameters([addr, addr, u256], [currency, recipient, amount]) };
  },
};

export const inputs = {
  /** PAY_PORTION: bips of the router's balance of token to recipient. */
  payPortion: (token: Address, recipient: Address, bips: bigint) =>
    encodeAbiParameters([addr, addr, u256], [token, recipient, bips]),
  /** TRANSFER: value of the router's balance of token to recipient. */
  transfer: (token: Address, recipient: Address, value: bigint) =>
    encodeAbiParameters([addr, addr, u256], [token, recipient, value]),
  /** SWEEP: all of the router's token to recipient, at least amountMin. */
  sweep: (token: Address, recipient: Address, amountMin: bigint) =>
    encodeAbiParameters([addr, addr, u256], [token, recipient, amountMin]),
  /** PERMIT2_TRANSFER_FROM: pull amount of token from the caller to recipient. */
  permit2TransferFrom: (token: Address, recipient: Address, amount: bigint) =>
    encodeAbiParameters([addr, addr, { type: "uint160" }], [token, recipient, amount]),
  permit2Permit: (
    permit: {
      details: { token: Address; amount: bigint; expiration: number; nonce: number };
      spender: Address;
      sigDeadline: bigint;
    },
    signature: Hex,
  ) => encodeAbiParameters(permitSingleParams, [permit, signature]),
};
