import { decodeAbiParameters, decodeFunctionData, getAddress, zeroAddress, type Address, type Hex } from "viem";
import { delegationArrayParam, delegationManagerAbi } from "../abis/delegation.js";

/** keccak256("Transfer(address,address,uint256)") */
export const TRANSFER_TOPIC = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";
/** keccak256("Withdrawal(address,uint256)") (WETH9 unwrap) */
export const WITHDRAWAL_TOPIC = "0x7fcf532c15f0a6db0bd6d0e038bea71d30d808c7d98cb3bf7268a95bf5081b65";

export type RawLog = { address: Address; topics: Hex[]; data: Hex; logIndex: Hex | number };
export type CallFrame = { from: Address; to?: Address; value?: Hex; type?: string; error?: string; calls?: CallFrame[] };
export type Leg = { token: Address; from: Address; to: Address; amount: string };

const topicAddress = (t: Hex | undefined): Address => getAddress(`0x${(t ?? "0x").slice(-40)}`);
const same = (a: string | null | undefined, b: string | null | undefined) => !!a && !!b && a.toLowerCase() === b.toLowerCase();

/** ERC-20 transfers of a receipt's logs (3 topics: Transfer(address indexed, address indexed, uint256)). */
export function transfersOf(logs: RawLog[]): Leg[] {
  return logs
    .filter((l) => l.topics[0] === TRANSFER_TOPIC && l.topics.length === 3)
    .map((l) => ({ token: getAddress(l.address), from: topicAddress(l.topics[1]), to: topicAddress(l.topics[2]), amount: BigInt(l.data).toString() }));
}

/** Native ETH moved by successful calls of a callTracer frame tree (reverted subtrees skipped). */
export function ethMovesOf(frame: CallFrame): Leg[] {
  const out: Leg[] = [];
  const walk = (f: CallFrame) => {
    if (f.error) return;
    const value = f.value ? BigInt(f.value) : 0n;
    if (value > 0n && f.to && (f.type ?? "CALL") !== "DELEGATECALL") out.push({ token: zeroAddress, from: getAddress(f.from), to: getAddress(f.to), amount: value.toString() });
    for (const c of f.calls ?? []) walk(c);
  };
  walk(frame);
  return out;
}

/** The root delegator of redeemDelegations calldata: the last delegation of the first context. */
export function rootDelegator(input: Hex): Address | null {
  try {
    const { functionName, args } = decodeFunctionData({ abi: delegationManagerAbi, data: input });
    if (functionName !== "redeemDelegations") return null;
    const [contexts] = args as readonly [readonly Hex[], readonly Hex[], readonly Hex[]];
    const [chain] = decodeAbiParameters([delegationArrayParam], contexts[0]!);
    return chain.length ? getAddress(chain[chain.length - 1]!.delegator) : null;
  } catch {
    return null;
  }
}

export type Outcome = {
  tokenIn: Address | null;
  amountIn: bigint | null;
  tokenOut: Address | null;
  amountOut: bigint | null;
  feeToken: Address | null;
  feeAmount: bigint | null;
  legs: Leg[];
};

/**
 * What left and reached the wallet, and what reached the platform, from the transaction's
 * ERC-20 transfers and native ETH moves. Net per token: the token the wallet lost most is the
 * input, the one it gained most the output.
 */
export function tradeOutcome(wallet: Address, platform: Address, moves: Leg[]): Outcome {
  const net = new Map<Address, bigint>();
  const legs: Leg[] = [];
  let feeToken: Address | null = null;
  let feeAmount: bigint | null = null;
  for (const m of moves) {
    // The first value reaching the platform is the fee, from the router or (a Permit2
    // transfer) straight from the wallet.
    if (feeToken === null && same(m.to, platform)) {
      feeToken = m.token;
      feeAmount = BigInt(m.amount);
    }
    if (same(m.from, wallet) === same(m.to, wallet)) continue;
    legs.push(m);
    const signed = same(m.to, wallet) ? BigInt(m.amount) : -BigInt(m.amount);
    net.set(m.token, (net.get(m.token) ?? 0n) + signed);
  }
  let tokenIn: Address | null = null;
  let amountIn: bigint | null = null;
  let tokenOut: Address | null = null;
  let amountOut: bigint | null = null;
  for (const [token, v] of net) {
    if (v < 0n && (amountIn === null || -v > amountIn)) [tokenIn, amountIn] = [token, -v];
    if (v > 0n && (amountOut === null || v > amountOut)) [tokenOut, amountOut] = [token, v];
  }
  return { tokenIn, amountIn, tokenOut, amountOut, feeToken, feeAmount, legs };
}
