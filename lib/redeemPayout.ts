import { decodeFunctionData, type Address } from "viem";
import { launchpadAbi } from "../abis/fixtures.js";
import { readCurveTrade } from "./curveRead.js";
import type { Execution } from "./delegation.js";
import { readFeeBps, readRouterCall, type RouterReading } from "./router/read.js";
import { sameAddress as same } from "./address.js";

/**
 * Where a session redeem's money goes, read again by the executor signing service from the inner
 * executions themselves (one per single-execution redeem item, or a batch's calls): exactly one
 * trade (a Universal Router call or a launchpad curve call with its plain-ETH fee), every output
 * and refund to the wallet, and the fee to the fee recipient at exactly the plan's bps. Whoever
 * holds only the co-signer's key can sign a leaf for any execution; the executor refuses to redeem
 * one that pays anybody else, so a stolen co-signer alone moves nothing.
 */
export type PayoutContext = {
  router: Address;
  launchpad: Address;
  weth: Address;
  feeRecipient: Address;
  /** The session wallet: the root's delegator (whose funds the redeem moves). */
  wallet: Address;
  /** The fee the plan states (bps of the side the fee is taken from). */
  feeBps: number;
  /**
   * The launchpad's quoteSell of a curve sale's amount (a sale's fee is bps of what the curve pays); null when unread.
   */
  sellQuote?: bigint | null;
};

/** A curve sale in these executions: the token and amount to quote, or null. */
export function curveSaleOf(executions: Execution[], launchpad: Address): { token: Address; amount: bigint } | null {
  const call = executions.find((e) => same(e.target, launchpad));
  if (!call) return null;
  try {
    const d = decodeFunctionData({ abi: launchpadAbi, data: call.callData });
    return d.functionName === "sell" ? { token: d.args[0] as Address, amount: d.args[1] as bigint } : null;
  } catch {
    return null;
  }
}

/** Every reason not to sign a redeem of `executions` (empty: it pays only the wallet, and the plan's fee). */
export function payoutProblems(executions: Execution[], ctx: PayoutContext): string[] {
  const problems: string[] = [];
  const fees = executions.filter((e) => same(e.target, ctx.feeRecipient) && e.callData === "0x");
  const trades = executions.filter((e) => same(e.target, ctx.router) || same(e.target, ctx.launchpad));
  const other = executions.filter((e) => !fees.includes(e) && !trades.includes(e));
  for (const e of other)
    problems.push(
      `an execution calls ${e.target}: neither the router, the launchpad nor a plain fee to the fee recipient`,
    );
  if (trades.length !== 1) return [...problems, `a redeem carries exactly one trade, not ${trades.length}`];
  const trade = trades[0]!;
  let reading: RouterReading;
  if (same(trade.target, ctx.router)) {
    if (fees.length) problems.push("a router trade takes its fee inside the router call, not as a separate payment");
    reading = readRouterCall(trade.target, trade.value, trade.callData, {
      router: ctx.router,
      wallet: ctx.wallet,
      feeRecipient: ctx.feeRecipient,
      weth: ctx.weth,
    });
  } else {
    if (fees.length !== 1) return [...problems, `a curve trade carries exactly one fee payment, not ${fees.length}`];
    let token: string;
    try {
      token = decodeFunctionData({ abi: launchpadAbi, data: trade.callData }).args[0] as string;
    } catch {
      return [...problems, "the launchpad call does not decode"];
    }
    // The curve root bounds which tokens; here only where the money goes matters.
    reading = readCurveTrade(trade, fees[0]!, {
      launchpad: ctx.launchpad,
      wallet: ctx.wallet,
      feeRecipient: ctx.feeRecipient,
      curveTokens: [token],
      sellQuote: ctx.sellQuote,
    });
  }
  problems.push(...reading.failures.map((f) => `${f.rule}: ${f.message}`));
  const paid = readFeeBps(reading);
  if (paid !== ctx.feeBps)
    problems.push(`the calldata pays ${paid ?? "no single"} bps to the fee recipient; the plan says ${ctx.feeBps}`);
  return problems;
}
