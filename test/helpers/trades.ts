import { encodeFunctionData, maxUint160, maxUint256, zeroAddress, type Address, type Hex } from "viem";
import type { privateKeyToAccount } from "viem/accounts";
import { erc20Abi } from "../../abis/erc20.js";
import { PERMIT2_ADDRESS, permit2Abi } from "../../abis/permit2.js";
import { quoteExactInputSingle } from "../../lib/quoter.js";
import { Command, ROUTER_ADDRESS_THIS, ROUTER_MSG_SENDER, universalRouterAbi } from "../../abis/universalRouter.js";
import { inputs, routerProgram, v4, v4SwapInput } from "../../lib/router/encode.js";
import type { PoolKey } from "../../lib/v4.js";
import type { Devnet } from "./devnet.js";

type Account = ReturnType<typeof privateKeyToAccount>;

export function poolKeyOf(dn: Devnet, a: string, b: string): PoolKey & { id: Hex } {
  const p = dn.universe.pools.find((x) => (x.symbol0 === a && x.symbol1 === b) || (x.symbol0 === b && x.symbol1 === a));
  if (!p) throw new Error(`no pool ${a}/${b}`);
  return {
    id: p.id,
    currency0: p.currency0,
    currency1: p.currency1,
    fee: p.fee,
    tickSpacing: p.tickSpacing,
    hooks: p.hooks,
  };
}

export const quoteExactIn = (dn: Devnet, poolKey: PoolKey, zeroForOne: boolean, exactAmount: bigint) =>
  quoteExactInputSingle(dn.pub, dn.universe.contracts.v4Quoter, poolKey, zeroForOne, exactAmount);

const deadline = () => BigInt(Math.floor(Date.now() / 1000) + 3600 * 24 * 365);

/**
 * Router calldata for an exact-in single-pool swap whose output fee is a PAY_PORTION to
 * `feeRecipient` (output lands in the router, portion paid, rest swept to the caller).
 */
export function swapCalldata(p: {
  poolKey: PoolKey;
  tokenIn: Address;
  tokenOut: Address;
  amountIn: bigint;
  minOut: bigint;
  feeBips: bigint;
  feeRecipient: Address;
}): Hex {
  const zeroForOne = p.tokenIn === p.poolKey.currency0;
  const { commands, inputs: ins } = routerProgram([
    {
      command: Command.V4_SWAP,
      input: v4SwapInput([
        v4.swapExactInSingle({ poolKey: p.poolKey, zeroForOne, amountIn: p.amountIn, amountOutMinimum: p.minOut }),
        v4.settleAll(p.tokenIn, p.amountIn),
        v4.take(p.tokenOut, ROUTER_ADDRESS_THIS, 0n),
      ]),
    },
    { command: Command.PAY_PORTION, input: inputs.payPortion(p.tokenOut, p.feeRecipient, p.feeBips) },
    { command: Command.SWEEP, input: inputs.sweep(p.tokenOut, ROUTER_MSG_SENDER, 0n) },
  ]);
  return encodeFunctionData({ abi: universalRouterAbi, functionName: "execute", args: [commands, ins, deadline()] });
}

/** One-time approvals so the router may pull `token` through Permit2. */
export async function approveForRouter(dn: Devnet, account: Account, token: Address) {
  const wallet = dn.walletFor(account);
  await dn.mined(
    await wallet.writeContract({
      address: token,
      abi: erc20Abi,
      functionName: "approve",
      args: [PERMIT2_ADDRESS, maxUint256],
    }),
  );
  await dn.mined(
    await wallet.writeContract({
      address: PERMIT2_ADDRESS,
      abi: permit2Abi,
      functionName: "approve",
      args: [token, dn.universe.contracts.universalRouter, maxUint160, 2 ** 47],
    }),
  );
}

/** Sends a router swap and returns its receipt; `gas` set means no estimation (for reverts). */
export async function routerSwap(
  dn: Devnet,
  account: Account,
  p: Parameters<typeof swapCalldata>[0] & { gas?: bigint },
) {
  const hash = await dn.walletFor(account).sendTransaction({
    to: dn.universe.contracts.universalRouter,
    data: swapCalldata(p),
    value: p.tokenIn === zeroAddress ? p.amountIn : 0n,
    gas: p.gas,
  });
  return dn.mined(hash);
}
