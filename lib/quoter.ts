import type { Address, PublicClient } from "viem";
import { v4QuoterAbi } from "../abis/uniswapV4.js";
import type { PoolKey } from "./v4.js";

/**
 * Gas one quote may burn (V4Quoter, one or two hops). Measured on the devnet: a 2-hop quote crossing
 * no initialized tick takes 170k, and each initialized tick crossed about 32k more (100 narrow
 * positions a side on WBTC/USDG and ORBIO/USDG: 6.7M for 200 crossings). 2M fits an honest 2-hop
 * quote crossing about 55 initialized ticks, ten times the usual, and bounds what a pool's hooks
 * (code anyone deploys) can make a quote cost; 12 such quotes (trading's MAX_CANDIDATES) keep a
 * trade's snapshot under a node's 30M call gas.
 */
export const QUOTE_GAS = 2_000_000n;

/**
 * V4Quoter's exact-input quote for one pool (its first return value: the amount out), capped at QUOTE_GAS: the pool's
 * hooks may be anyone's code.
 */
export async function quoteExactInputSingle(
  chain: PublicClient,
  quoter: Address,
  poolKey: PoolKey,
  zeroForOne: boolean,
  exactAmount: bigint,
  blockNumber?: bigint,
): Promise<bigint> {
  const { currency0, currency1, fee, tickSpacing, hooks } = poolKey;
  const { result } = await chain.simulateContract({
    address: quoter,
    abi: v4QuoterAbi,
    functionName: "quoteExactInputSingle",
    args: [{ poolKey: { currency0, currency1, fee, tickSpacing, hooks }, zeroForOne, exactAmount, hookData: "0x" }],
    gas: QUOTE_GAS,
    ...(blockNumber !== undefined ? { blockNumber } : {}),
  });
  return result[0];
}
