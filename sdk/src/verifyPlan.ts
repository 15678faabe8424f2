import { decodeFunctionData, erc20Abi, getAddress, zeroAddress, type Address, type Hex } from "viem";
import { readFeeBps, readRouterCall, type RouterReading } from "../../lib/router/read.js";
import { poolId } from "../../lib/v4.js";
import { verificationFailed } from "./errors.js";
import { hopsOf } from "./quote.js";
import { pinnedSymbol, withPinnedSymbols, type Pins } from "./pins.js";
import { sameAddress as same } from "../../lib/address.js";

/** The parts of a prepare answer (SPEC "Plan") the SDK re-derives before signing. */
export type PlanAnswer = {
  tx: { to: string; data: Hex; value: string; chain_id: number; gas?: number } | null;
  amount_in: string;
  amount_out_min: string;
  amount_out_expected?: string;
  fee_bps: number;
  fee_class: "major" | "other";
  shield?: boolean | { on?: boolean };
  risks?: { code: string }[] | string[];
  /** The chosen route's quote; vs_mid_bps is the server's measure of the fill against the pools' mid. */
  quote?: { vs_mid_bps: number | null };
  accepted_risks?: string[];
};
export type TradeIntent = {
  wallet: Address;
  tokenIn: string;
  tokenOut: string;
  slippageBps: number;
  acceptRisks: string[];
  shield: boolean;
  amountIn?: bigint;
};
/** A pool's LP fee above this (1 %) is no market this client trades through. */
export const MAX_POOL_FEE = 10_000;

const riskCodes = (r: PlanAnswer["risks"]) => (r ?? []).map((x) => (typeof x === "string" ? x : x.code));

/**
 * Checks a plan's swap transaction against what the client asked and pinned, from its calldata
 * alone (lib/router/read, the co-signer's reader): the router, every recipient (sub-plans too),
 * the hooks and every hop's pool (V4_HOOKS: a pinned canonical pool, by id), the fee's class,
 * rate and recipient, the tokens, the amount in and the minimum out.
 * Throws VERIFICATION_FAILED with the rule; answers the reading when all pass.
 */
export function verifyPlan(plan: PlanAnswer, asked: TradeIntent, pins: Pins) {
  // Symbols as the server matches them: `eth` is the pinned ETH (and so a major for the fee class).
  const intent = withPinnedSymbols(pins, asked);
  const tx = plan.tx;
  if (!tx) throw verificationFailed("RECIPIENT", "the plan has no transaction to check");
  if (tx.chain_id !== pins.chainId)
    throw verificationFailed("RECIPIENT", `the transaction is for chain ${tx.chain_id}, not ${pins.chainId}`);
  if (!same(tx.to, pins.router))
    throw verificationFailed("RECIPIENT", `the transaction goes to ${tx.to}, not the pinned router ${pins.router}`);
  const tokenIn = pins.tokens[intent.tokenIn]?.address;
  const tokenOut = pins.tokens[intent.tokenOut]?.address;
  if (!tokenIn || !tokenOut)
    throw verificationFailed("RECIPIENT", `${intent.tokenIn}/${intent.tokenOut} are not pinned tokens`);
  const weth = pins.tokens.WETH?.address ?? zeroAddress;
  const r = readRouterCall(getAddress(tx.to), BigInt(tx.value), tx.data, {
    router: pins.router,
    wallet: intent.wallet,
    feeRecipient: pins.feeRecipient,
    weth,
    permit: true,
  });
  for (const f of r.failures) {
    if (/hook/i.test(f.message)) throw verificationFailed("V4_HOOKS", f.message);
    throw verificationFailed("RECIPIENT", f.message);
  }
  // Exactly the tokens asked: ETH is the call's value, never a pull of the wallet's WETH.
  if (!r.tokenIn || !same(r.tokenIn, tokenIn) || !r.tokenOut || !same(r.tokenOut, tokenOut))
    throw verificationFailed(
      "RECIPIENT",
      `the calldata trades ${r.tokenIn} for ${r.tokenOut}, not ${intent.tokenIn} for ${intent.tokenOut}`,
    );
  if (r.amountIn !== BigInt(plan.amount_in))
    throw verificationFailed("RECIPIENT", `the calldata spends ${r.amountIn}, the plan says ${plan.amount_in}`);
  if (intent.amountIn !== undefined && r.amountIn !== intent.amountIn)
    throw verificationFailed("RECIPIENT", `the calldata spends ${r.amountIn}, not the ${intent.amountIn} asked`);
  checkPools(tx.data, pins);
  checkPermits(r, tokenIn, intent);
  checkFee(plan, intent, pins, r);
  checkMinOut(plan, intent, r);
  checkRiskCodes(plan, intent, pins);
  return r;
}

/**
 * V4_HOOKS: every hop through a pinned canonical pool (a hookless pool of pinned tokens the server
 * made is no market of the client's); FEE_BPS: no pool's LP fee above MAX_POOL_FEE.
 */
function checkPools(data: Hex, pins: Pins) {
  const pinnedPools = new Set(pins.pools.map((p) => p.id.toLowerCase()));
  for (const h of hopsOf(data)) {
    const id = poolId(h.poolKey).toLowerCase();
    if (!pinnedPools.has(id))
      throw verificationFailed(
        "V4_HOOKS",
        `the route goes through pool ${id} (${h.poolKey.currency0}/${h.poolKey.currency1}, fee ${h.poolKey.fee}, ` +
          `hooks ${h.poolKey.hooks}), not one of the pinned canonical pools`,
      );
    if (h.poolKey.fee > MAX_POOL_FEE)
      throw verificationFailed("FEE_BPS", `the route's pool charges an LP fee of ${h.poolKey.fee / 100} bps`);
  }
}

/** A permit inside the call lets the router take exactly this trade's input, nothing else. */
function checkPermits(r: RouterReading, tokenIn: Address, intent: TradeIntent) {
  for (const p of r.permits ?? [])
    if (!same(p.token, tokenIn) || p.amount !== r.amountIn)
      throw verificationFailed(
        "RECIPIENT",
        `the call's permit lets the router take ${p.amount} of ${p.token}, ` +
          `not this trade's ${r.amountIn} of ${intent.tokenIn}`,
      );
}

/**
 * FEE_CLASS: the class is the client's own (major when both tokens are the schedule's major
 * symbols); FEE_BPS: the calldata pays the plan's rate, within the pinned schedule for that class.
 */
function checkFee(plan: PlanAnswer, intent: TradeIntent, pins: Pins, r: RouterReading) {
  const ownClass =
    pins.majorSymbols.includes(intent.tokenIn) && pins.majorSymbols.includes(intent.tokenOut) ? "major" : "other";
  if (plan.fee_class !== ownClass)
    throw verificationFailed(
      "FEE_CLASS",
      `the plan charges class ${plan.fee_class}; ${intent.tokenIn}/${intent.tokenOut} is ${ownClass}`,
    );
  const bps = readFeeBps(r);
  const add = intent.shield ? pins.fee.shieldAddBps : 0;
  const allowed =
    ownClass === "major"
      ? [pins.fee.majorMinBps + add, pins.fee.majorMaxBps + add]
      : [pins.fee.otherBps + add, pins.fee.otherBps + add];
  if (bps === null || bps !== plan.fee_bps || bps < allowed[0]! || bps > Math.min(allowed[1]!, pins.fee.maxBps))
    throw verificationFailed(
      "FEE_BPS",
      `the calldata pays ${bps ?? "an unreadable"} bps (plan: ${plan.fee_bps}); ` +
        `${ownClass} pays ${allowed[0]}-${allowed[1]}`,
    );
}

/** MIN_OUT: the calldata's minimum is the plan's, and at most the asked slippage under the expected output. */
function checkMinOut(plan: PlanAnswer, intent: TradeIntent, r: RouterReading) {
  if (r.minOut !== BigInt(plan.amount_out_min))
    throw verificationFailed(
      "MIN_OUT",
      `the calldata's minimum out is ${r.minOut}, the plan says ${plan.amount_out_min}`,
    );
  if (plan.amount_out_expected !== undefined) {
    const floor = (BigInt(plan.amount_out_expected) * BigInt(10_000 - intent.slippageBps)) / 10_000n;
    if (r.minOut < floor)
      throw verificationFailed(
        "MIN_OUT",
        `minimum out ${r.minOut} is below the expected ${plan.amount_out_expected} less ${intent.slippageBps} bps`,
      );
  }
}

/**
 * RISK_CODES: every code the plan lists is one of the pinned table's (an unknown code cannot be
 * accepted knowingly). RISK_NOT_ACCEPTED: every code the pinned table calls severe is accepted, as
 * the server requires (SPEC "Risk disclosure table"); the server cannot make a severe code info.
 */
function checkRiskCodes(plan: PlanAnswer, intent: TradeIntent, pins: Pins) {
  const codes = riskCodes(plan.risks);
  const unknown = codes.filter((c) => pins.risks[c] === undefined);
  if (unknown.length)
    throw verificationFailed(
      "RISK_CODES",
      `the plan lists risk codes the pinned table does not know: ${unknown.join(", ")}`,
    );
  const unaccepted = codes.filter((c) => pins.risks[c] === "severe" && !intent.acceptRisks.includes(c));
  if (unaccepted.length)
    throw verificationFailed(
      "RISK_NOT_ACCEPTED",
      `the plan carries severe risks not accepted: ${unaccepted.join(", ")}`,
    );
}

/**
 * The risk codes a price impact measured by the client itself calls for (SPEC: PRICE_IMPACT from
 * price_impact_bps, HIGH_PRICE_IMPACT from high_price_impact_bps); RISK_CODES when the plan hides
 * one. A lower impact than the server's is the server's caution, not a refusal.
 */
export function checkImpactRisks(plan: PlanAnswer, intent: TradeIntent, pins: Pins, ownImpactBps: number) {
  const codes = riskCodes(plan.risks);
  const needed =
    ownImpactBps >= pins.impactBps.high
      ? ["HIGH_PRICE_IMPACT"]
      : ownImpactBps >= pins.impactBps.info
        ? ["PRICE_IMPACT", "HIGH_PRICE_IMPACT"]
        : [];
  if (needed.length && !needed.some((c) => codes.includes(c)))
    throw verificationFailed(
      "RISK_CODES",
      `the client measures a price impact of ${ownImpactBps} bps; the plan does not list ${needed[0]}`,
    );
  if (needed[0] === "HIGH_PRICE_IMPACT" && !intent.acceptRisks.includes("HIGH_PRICE_IMPACT"))
    throw verificationFailed(
      "RISK_NOT_ACCEPTED",
      `the client measures a price impact of ${ownImpactBps} bps (HIGH_PRICE_IMPACT), not accepted`,
    );
}

/** The approve step of a plan: the input token's approve(Permit2, exactly the amount in). */
export function verifyApprove(
  tx: { to: string; data: Hex; value: string; chain_id: number },
  intent: TradeIntent,
  pins: Pins,
  amountIn: bigint,
) {
  const token = pins.tokens[pinnedSymbol(pins, intent.tokenIn)]?.address;
  if (!token || !same(tx.to, token) || tx.chain_id !== pins.chainId || BigInt(tx.value) !== 0n)
    throw verificationFailed("RECIPIENT", `the approve step goes to ${tx.to}, not ${intent.tokenIn}`);
  let spender: Address;
  let amount: bigint;
  try {
    const d = decodeFunctionData({ abi: erc20Abi, data: tx.data });
    if (d.functionName !== "approve") throw new Error(d.functionName);
    [spender, amount] = d.args as [Address, bigint];
  } catch (err) {
    throw verificationFailed(
      "RECIPIENT",
      `the approve step is not approve(spender, amount): ${(err as Error).message.split("\n")[0]}`,
    );
  }
  if (!same(spender, pins.permit2))
    throw verificationFailed(
      "RECIPIENT",
      `the approve step lets ${spender} spend the wallet's ${intent.tokenIn}, not the pinned Permit2 ${pins.permit2}`,
    );
  if (amount !== amountIn)
    throw verificationFailed("RECIPIENT", `the approve step approves ${amount}, not this trade's ${amountIn}`);
}

/**
 * The Permit2 PermitSingle the wallet signs: the pinned Permit2 and chain, the router as spender, this
 * trade's token and amount, 30 minutes at most.
 */
export function verifyPermit(
  typed: {
    domain: { name?: string; chainId?: number; verifyingContract?: string };
    message: {
      details: { token: string; amount: string; expiration: number | string };
      spender: string;
      sigDeadline: string | number;
    };
  },
  intent: TradeIntent,
  pins: Pins,
  amountIn: bigint,
  nowS: number,
) {
  const d = typed.domain;
  const m = typed.message;
  if (
    d.name !== "Permit2" ||
    Number(d.chainId) !== pins.chainId ||
    !d.verifyingContract ||
    !same(d.verifyingContract, pins.permit2)
  )
    throw verificationFailed("RECIPIENT", "the permit is not for the pinned Permit2 on this chain");
  if (!same(m.spender, pins.router))
    throw verificationFailed("RECIPIENT", `the permit lets ${m.spender} spend, not the pinned router ${pins.router}`);
  if (
    !same(m.details.token, pins.tokens[pinnedSymbol(pins, intent.tokenIn)]?.address ?? "") ||
    BigInt(m.details.amount) !== amountIn
  )
    throw verificationFailed(
      "RECIPIENT",
      `the permit covers ${m.details.amount} of ${m.details.token}, not this trade's ${amountIn} of ${intent.tokenIn}`,
    );
  const limit = nowS + PERMIT_TRADE_S + PERMIT_SLACK_S;
  if (Number(m.details.expiration) > limit || Number(m.sigDeadline) > limit)
    throw verificationFailed("RECIPIENT", "the permit outlives this trade's 30 minutes");
}
/** SPEC "Limits": a trade permit covers this amount for 30 minutes (a little slack for the clocks). */
const PERMIT_TRADE_S = 1_800;
const PERMIT_SLACK_S = 300;
