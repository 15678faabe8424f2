import { bpsOf } from "../../lib/fees.js";
import { zeroAddress, type Address } from "viem";
import { Refusal } from "../errors/index.js";
import { approvalPlan } from "./approvals.js";
import type { Evaluation, TradingContext } from "./evaluate.js";
import { LIMITS } from "./policy.js";
import type { TradeRequest } from "./request.js";
import { CURVE_VENUE, type CurveRoute, type PoolRoute } from "./routing.js";
import {
  buildApprove,
  buildBatch,
  buildCurveSwap,
  buildFeeTransfer,
  buildRouterSwap,
  describeCurveCall,
  describeRouterCall,
  type FeeSpec,
  type PlanTx,
  type Step,
} from "./txs.js";

/** The plan's fee object (SPEC "Plan" fee): bps, side, recipient, token, command; amount as built. */
export type FeeBlock = {
  bps: number;
  side: "input" | "output";
  recipient: Address;
  token: Address;
  command: string;
  amount: string;
};

/** The transactions of a plan and what the answer says about them. */
export type BuiltPlan = {
  steps: Step[];
  execution: "router" | "curve" | "batch";
  swapTx: PlanTx | null;
  approval: Record<string, unknown> | null;
  permit: Record<string, unknown> | null;
  permitNow: number | null;
  fee: FeeBlock;
  deadline: number;
  minOut: bigint;
};

const maxBig = (a: bigint, b: bigint) => (a > b ? a : b);

/** True when the wallet delegates (EIP-7702) to the pinned stateless delegator. */
export const delegatedToPinned = (delegation: Address | null | undefined, delegator: Address) =>
  !!delegation && delegation.toLowerCase() === delegator.toLowerCase();

/**
 * How the plan is meant: `fresh` builds as if the wallet had no approvals; `simulation` builds a
 * plan to simulate, not to sign, so a permit the wallet has not signed goes by transaction.
 */
export type BuildFor = { fresh: boolean; simulation: boolean };

/**
 * The transactions of a plan for `wallet`: approvals by mode and permit (or, `fresh`, as if the
 * wallet had none), then the router swap, or the curve trade with its fee (two_step or batch).
 * Pure encoding over the evaluation: the same inputs rebuild the same bytes.
 */
export async function buildPlan(
  ctx: TradingContext,
  e: Evaluation,
  r: TradeRequest,
  wallet: Address,
  how: BuildFor,
): Promise<BuiltPlan> {
  const deadline = Math.max(e.snap.time, ctx.now()) + LIMITS.deadlineS;
  const minOut = maxBig(
    bpsOf(e.expectedOut, 10_000 - e.slippage),
    r.min_amount_out !== undefined ? BigInt(r.min_amount_out) : 0n,
  );
  const route = e.best.quote.route;
  return route.venue === CURVE_VENUE
    ? buildCurvePlan(ctx, e, r, route, wallet, how.fresh, deadline, minOut)
    : buildRouterPlan(ctx, e, r, route, wallet, how, deadline, minOut);
}

function buildCurvePlan(
  ctx: TradingContext,
  e: Evaluation,
  r: TradeRequest,
  route: CurveRoute,
  wallet: Address,
  fresh: boolean,
  deadline: number,
  minOut: bigint,
): BuiltPlan {
  const { config } = ctx;
  const c = config.contracts;
  const steps: Step[] = [];
  const delegated = delegatedToPinned(e.snap.wallet?.delegation, c.statelessDelegator);
  const mode = r.curve_fee_mode === "auto" ? (delegated ? "batch" : "two_step") : r.curve_fee_mode;
  if (mode === "batch" && !delegated)
    throw new Refusal(
      "FEE_MODE",
      "fee mode batch needs a wallet delegated (EIP-7702) to the pinned stateless delegator 1.3.0; use two_step",
    );
  const { swap, feeTx, curveFee } = buildCurveCalls(ctx, e, r, route, wallet, minOut);
  if (!route.buy && (fresh || (e.snap.wallet?.allowanceToCurve ?? 0n) < e.amountIn)) {
    steps.push({
      kind: "approve",
      why: `let the launchpad curve take ${e.amountIn} of ${e.tin.symbol}`,
      tx: buildApprove(config.chainId, e.tin.address, c.launchpad, e.amountIn),
      decoded: { function: "approve", spender: c.launchpad, amount: e.amountIn.toString() },
    });
  }
  let swapTx: PlanTx;
  if (mode === "batch") {
    swapTx = buildBatch(config.chainId, wallet, [feeTx, swap]);
    steps.push({
      kind: "swap",
      why: "fee and curve trade in one transaction from your delegated wallet",
      tx: swapTx,
      decoded: {
        function: "execute",
        mode: "batch",
        calls: [
          { kind: "fee_transfer", to: config.feeRecipient, value: curveFee.toString() },
          { kind: "swap", ...describeCurveCall(swap.data) },
        ],
      },
    });
  } else {
    swapTx = swap;
    steps.push({
      kind: "fee_transfer",
      why: "the service fee, sent first (raw_txs in order)",
      tx: feeTx,
      decoded: { to: config.feeRecipient, value: curveFee.toString() },
    });
    steps.push({ kind: "swap", why: "the curve trade", tx: swap, decoded: describeCurveCall(swap.data) });
  }
  const fee: FeeBlock = {
    bps: e.fee.bps,
    side: e.feeSide,
    recipient: config.feeRecipient,
    token: zeroAddress,
    command: mode === "batch" ? "BATCH_TRANSFER" : "FEE_TRANSFER",
    amount: curveFee.toString(),
  };
  return {
    steps,
    execution: mode === "batch" ? "batch" : "curve",
    swapTx,
    approval: null,
    permit: null,
    permitNow: null,
    fee,
    deadline,
    minOut,
  };
}

/**
 * A curve trade's two calls: the service fee as plain ETH to the fee recipient (input side of a
 * buy, bps of the quoted proceeds of a sale), and the curve's own buy or sell paying the wallet.
 * A sale's curve output is gross (the fee goes first, from the wallet's ETH): its on-chain minimum
 * covers the slippage bound and the wallet's own floor plus that fee.
 */
export function buildCurveCalls(
  ctx: TradingContext,
  e: Evaluation,
  r: TradeRequest,
  route: CurveRoute,
  wallet: Address,
  minOut: bigint,
) {
  const { config } = ctx;
  const curveFee = route.buy ? e.inputFee : bpsOf(e.best.quote.amountOut, e.fee.bps);
  const curveMin = route.buy
    ? minOut
    : maxBig(
        bpsOf(e.best.quote.amountOut, 10_000 - e.slippage),
        r.min_amount_out !== undefined ? BigInt(r.min_amount_out) + curveFee : 0n,
      );
  const swap = buildCurveSwap({
    chainId: config.chainId,
    launchpad: config.contracts.launchpad,
    route,
    wallet,
    amountIn: route.buy ? e.swapIn : e.amountIn,
    amountOutMin: curveMin,
  });
  return { swap, feeTx: buildFeeTransfer(config.chainId, config.feeRecipient, curveFee), curveFee, curveMin };
}

async function buildRouterPlan(
  ctx: TradingContext,
  e: Evaluation,
  r: TradeRequest,
  route: PoolRoute,
  wallet: Address,
  how: BuildFor,
  deadline: number,
  minOut: bigint,
): Promise<BuiltPlan> {
  const { config } = ctx;
  const c = config.contracts;
  // ERC-20 input: approval to the permit contract, then the router's permit allowance.
  const a = e.tin.address !== zeroAddress ? await inputApproval(ctx, e, r, wallet, how, deadline) : null;
  const steps: Step[] = [...(a?.steps ?? [])];
  const { approval = null, permit = null, permitNow = null, signedPermit = null } = a ?? {};
  const feeSpec: FeeSpec = { side: e.feeSide, bps: e.fee.bps, recipient: config.feeRecipient, amount: e.inputFee };
  let swapTx: PlanTx | null = null;
  if (!steps.some((s) => s.kind === "sign_permit")) {
    swapTx = buildRouterSwap({
      chainId: config.chainId,
      router: c.universalRouter,
      route,
      tokenIn: e.tin.address,
      tokenOut: e.tout.address,
      weth: config.tokens.WETH!.address,
      amountIn: e.amountIn,
      amountOutMin: minOut,
      fee: feeSpec,
      deadline,
      permit: signedPermit,
    });
    steps.push({
      kind: "swap",
      why: "the trade through the Universal Router",
      tx: swapTx,
      decoded: describeRouterCall(swapTx.data),
    });
  }
  // Output side: PAY_PORTION takes bps of the actual output; this is the amount at the quote.
  const feeAmountOut =
    e.feeSide === "output"
      ? bpsOf((BigInt(e.best.row.amount_out!) * 10_000n) / BigInt(10_000 - e.fee.bps), e.fee.bps)
      : 0n;
  const fee: FeeBlock = {
    bps: e.fee.bps,
    side: e.feeSide,
    recipient: config.feeRecipient,
    token: e.feeToken.address,
    command: e.feeSide === "input" ? "TRANSFER" : "PAY_PORTION",
    amount: e.feeSide === "input" ? e.inputFee.toString() : feeAmountOut.toString(),
  };
  return { steps, execution: "router", swapTx, approval, permit, permitNow, fee, deadline, minOut };
}

/**
 * An ERC-20 input's approval steps and permit (approvals.ts), from the wallet's allowances as the
 * snapshot read them.
 */
function inputApproval(
  ctx: TradingContext,
  e: Evaluation,
  r: TradeRequest,
  wallet: Address,
  { fresh, simulation }: BuildFor,
  deadline: number,
) {
  const { config } = ctx;
  const c = config.contracts;
  const current = e.snap.wallet?.routerPermit ?? [0n, 0, 0];
  return approvalPlan({
    chainId: config.chainId,
    permit2: c.permit2,
    router: c.universalRouter,
    wallet,
    token: e.tin.address,
    symbol: e.tin.symbol,
    amountIn: e.amountIn,
    atomsPerUsd: e.markIn ? 10 ** e.tin.decimals / e.markIn.usd : null,
    deadline,
    chainNow: Math.max(e.snap.time, ctx.now()),
    state: fresh
      ? { toPermit2: 0n, router: [0n, 0, current[2]] }
      : { toPermit2: e.snap.wallet?.allowanceToPermit2 ?? 0n, router: current },
    // A simulation cannot carry a signature the wallet has not made: its permit goes by transaction.
    req: {
      mode: r.approval_mode,
      budgetUsd: r.approval_budget_usd,
      permitMode: (fresh || simulation) && !r.permit_signature ? "transaction" : r.permit_mode,
      permitScope: r.permit_scope,
      permitSignature: r.permit_signature,
      permitNow: r.permit_now,
    },
  });
}
