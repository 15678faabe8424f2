import type { Address, PublicClient } from "viem";
import { v4QuoterAbi } from "../abis/uniswapV4.js";
import type { PoolKey } from "./v4.js";

/** V4Quoter's exact-input quote for one pool (its first return value: the amount out). */
export async function quoteExactInputSingle(chain: PublicClient, quoter: Address, poolKey: PoolKey, zeroForOne: boolean, exactAmount: bigint, blockNumber?: bigint): Promise<bigint> {
  const { currency0, currency1, fee, tickSpacing, hooks } = poolKey;
  const { result } = await chain.simulateContract({
    address: quoter,
    abi: v4QuoterAbi,
    functionName: "quoteExactInputSingle",
    args: [{ poolKey: { currency0, currency1, fee, tickSpacing, hooks }, zeroForOne, exactAmount, hookData: "0x" }],
    ...(blockNumber !== undefined ? { blockNumber } : {}),
  });
  return result[0];
}
