import { decodeFunctionData, zeroAddress, type Address } from "viem";
import { launchpadAbi } from "../abis/fixtures.js";
import type { Execution } from "./delegation.js";
import type { RouterFailure, RouterReading } from "./router/read.js";
import { sameAddress as same } from "./address.js";

/**
 * A strict reading of a session's launchpad curve trade: the fee execution (plain ETH to the fee
 * recipient, empty calldata) and the curve call (`buy` or `sell` of a token the session's curve
 * root lists, paying the wallet). Same shape as a router reading, so the co-signer's rules apply
 * unchanged. `sellQuote` is the co-signer's own `quoteSell` of the amount: a sale's fee is bps of
 * what the curve pays, which the calldata does not say.
 *
 * Rules: SESSION_ROOT_ALLOWS (another target, method or token than the curve root allows),
 * SESSION_RECIPIENTS (output or fee to anyone else), SESSION_EXECUTION (ETH with a sale, calldata
 * with the fee, no fee).
 */
export type CurveContext = {
  launchpad: Address;
  wallet: Address;
  feeRecipient: Address;
  curveTokens: string[];
  sellQuote?: bigint | null;
};

export function readCurveTrade(
  swap: Execution,
  fee: Execution,
  ctx: CurveContext,
): RouterReading & { buy: boolean | null; token: Address | null } {
  const failures: RouterFailure[] = [];
  const fail = (rule: RouterFailure["rule"], message: string) => failures.push({ rule, message });
  const empty = {
    failures,
    tokenIn: null,
    amountIn: 0n,
    tokenOut: null,
    minOut: 0n,
    fees: [],
    deadline: null,
    buy: null,
    token: null,
  };

  if (!same(fee.target, ctx.feeRecipient))
    fail("SESSION_RECIPIENTS", `the fee goes to ${fee.target}, not the fee recipient`);
  if (fee.callData !== "0x") fail("SESSION_EXECUTION", "the fee is plain ETH: no calldata");
  if (fee.value === 0n) fail("SESSION_EXECUTION", "the fee pays nothing");
  if (!same(swap.target, ctx.launchpad)) {
    fail("SESSION_ROOT_ALLOWS", `the curve root allows the launchpad only, not ${swap.target}`);
    return { ...empty, failures };
  }
  let call: ReturnType<typeof decodeFunctionData<typeof launchpadAbi>>;
  try {
    call = decodeFunctionData({ abi: launchpadAbi, data: swap.callData });
  } catch {
    fail("SESSION_ROOT_ALLOWS", "the launchpad call is not buy or sell");
    return { ...empty, failures };
  }
  if (call.functionName !== "buy" && call.functionName !== "sell") {
    fail("SESSION_ROOT_ALLOWS", `the curve root allows buy and sell, not ${call.functionName}`);
    return { ...empty, failures };
  }
  const token = call.args[0] as Address;
  if (!ctx.curveTokens.some((t) => same(t, token)))
    fail("SESSION_ROOT_ALLOWS", `${token} is not one of the session's curve tokens`);
  const fees = [
    { token: zeroAddress, amount: fee.value, bps: null as bigint | null, command: "FEE_TRANSFER" as const },
  ];
  if (call.functionName === "buy") {
    const [, minTokensOut, to] = call.args as readonly [Address, bigint, Address];
    if (!same(to, ctx.wallet)) fail("SESSION_RECIPIENTS", `the curve pays ${to}, not the wallet`);
    // A buy's fee is input side: bps of everything the wallet puts in (fee + the curve's ETH).
    return {
      failures,
      tokenIn: zeroAddress,
      amountIn: swap.value + fee.value,
      tokenOut: token,
      minOut: minTokensOut,
      fees,
      deadline: null,
      buy: true,
      token,
    };
  }
  const [, tokensIn, minEthOut, to] = call.args as readonly [Address, bigint, bigint, Address];
  if (!same(to, ctx.wallet)) fail("SESSION_RECIPIENTS", `the curve pays ${to}, not the wallet`);
  if (swap.value !== 0n) fail("SESSION_EXECUTION", "a sale sends no ETH to the curve");
  // A sale's fee is output side: its bps of what the curve pays now, to the nearest bps.
  const q = ctx.sellQuote ?? null;
  fees[0]!.bps = q && q > 0n ? (fee.value * 10_000n + q / 2n) / q : null;
  if (fees[0]!.bps === null) fail("SESSION_EXECUTION", "the co-signer could not quote the sale to read its fee");
  // The curve pays the gross; the wallet pays the fee from it: what the wallet keeps is the minimum less the fee.
  return {
    failures,
    tokenIn: token,
    amountIn: tokensIn,
    tokenOut: zeroAddress,
    minOut: minEthOut > fee.value ? minEthOut - fee.value : 0n,
    fees,
    deadline: null,
    buy: false,
    token,
  };
}
