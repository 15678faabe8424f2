import { decodeAbiParameters, decodeFunctionData, type Address, type Hex, type PublicClient } from "viem";
import { exactInputSingleParams, V4Action } from "../../abis/uniswapV4.js";
import { Command, COMMAND_TYPE_MASK, universalRouterAbi } from "../../abis/universalRouter.js";
import { quoteExactInputSingle } from "../../lib/quoter.js";
import type { PoolKey } from "../../lib/v4.js";

type Hop = { poolKey: PoolKey; zeroForOne: boolean; amountIn: bigint };

/**
 * The V4 hops of a router call, in order, sub-plans included (SWAP_EXACT_IN_SINGLE actions of its
 * V4_SWAP commands).
 */
export function hopsOf(data: Hex): Hop[] {
  const d = decodeFunctionData({ abi: universalRouterAbi, data });
  const [commands, inputs] = d.args as unknown as [Hex, Hex[]];
  return programHops(commands, inputs);
}

function programHops(commands: Hex, inputs: readonly Hex[]): Hop[] {
  const types = (commands.slice(2).match(/../g) ?? []).map((b) => parseInt(b, 16) & COMMAND_TYPE_MASK);
  return types.flatMap((t, i): Hop[] => {
    if (t === Command.EXECUTE_SUB_PLAN) {
      const [c, ins] = decodeAbiParameters([{ type: "bytes" }, { type: "bytes[]" }], inputs[i]!) as unknown as [
        Hex,
        Hex[],
      ];
      return programHops(c, ins);
    }
    if (t !== Command.V4_SWAP) return [];
    const [actions, params] = decodeAbiParameters([{ type: "bytes" }, { type: "bytes[]" }], inputs[i]!) as unknown as [
      Hex,
      Hex[],
    ];
    const codes = (actions.slice(2).match(/../g) ?? []).map((b) => parseInt(b, 16));
    return codes.flatMap((c, j) => {
      if (c !== V4Action.SWAP_EXACT_IN_SINGLE) return [];
      const [p] = decodeAbiParameters(exactInputSingleParams, params[j]!) as unknown as [Hop];
      return [{ poolKey: p.poolKey, zeroForOne: p.zeroForOne, amountIn: p.amountIn }];
    });
  });
}

/**
 * The client's own quote of the call's swap: the pinned V4Quoter asked hop by hop on the client's
 * own RPC (a hop's input is the one before's output). Null when the call has no V4 hop.
 */
export async function ownQuote(chain: PublicClient, quoter: Address, data: Hex): Promise<bigint | null> {
  const hops = hopsOf(data);
  return hops.length ? quoteHops(chain, quoter, hops, hops[0]!.amountIn) : null;
}

/** `amountIn` through the hops in order on the pinned V4Quoter (a hop's input is the one before's output). */
export async function quoteHops(
  chain: PublicClient,
  quoter: Address,
  hops: { poolKey: PoolKey; zeroForOne: boolean }[],
  amountIn: bigint,
): Promise<bigint> {
  let amount = amountIn;
  for (const h of hops) amount = await quoteExactInputSingle(chain, quoter, h.poolKey, h.zeroForOne, amount);
  return amount;
}

/** The slice of a trade whose quote stands for the pools' marginal price (fees included, impact negligible). */
const MARGINAL_DIVISOR = 1_000n;

/**
 * The price impact of the call's swap in bps by the client's own quotes: what the size gets per
 * unit against what a thousandth of it gets. Pool fees cancel out, as in the server's impact
 * (vs_mid_bps less the pools' fees). Null when the call has no V4 hop or the slice quotes nothing.
 */
export async function ownImpactBps(chain: PublicClient, quoter: Address, data: Hex): Promise<number | null> {
  const hops = hopsOf(data);
  if (!hops.length) return null;
  const size = hops[0]!.amountIn;
  const slice = size / MARGINAL_DIVISOR;
  if (slice === 0n) return null;
  const [atSize, atSlice] = await Promise.all([
    quoteHops(chain, quoter, hops, size),
    quoteHops(chain, quoter, hops, slice),
  ]);
  if (atSlice === 0n) return null;
  const ideal = atSlice * MARGINAL_DIVISOR;
  return Math.max(0, Number(((ideal - atSize) * 10_000n) / ideal));
}

/** The pools' LP fees along the call's hops, in bps. */
export const hopFeesBps = (data: Hex): number => hopsOf(data).reduce((s, h) => s + h.poolKey.fee / 100, 0);
