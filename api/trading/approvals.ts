import { maxUint160, maxUint256, type Address, type Hex } from "viem";
import { verifyTypedData } from "../../lib/secp.js";
import { Refusal } from "../errors/index.js";
import { buildApprove, buildPermit2Approve, permitTypedData, type PermitSingle, type Step } from "./txs.js";
import { LIMITS } from "./policy.js";

export type ApprovalRequest = {
  mode: string;
  budgetUsd: number;
  permitMode: "signature" | "transaction";
  permitScope: "trade" | "30d";
  /** Second call of the permit round trip: the signature and the time the first call used. */
  permitSignature?: string;
  permitNow?: number;
};

/** What the chain says now about the wallet's allowances for the input token. */
export type AllowanceState = {
  /** ERC-20 allowance of the wallet to the permit contract. */
  toPermit2: bigint;
  /** The router's permit allowance: amount, expiration, nonce. */
  router: readonly [bigint, number, number];
};

export type ApprovalPlan = {
  steps: Step[];
  approval: Record<string, unknown>;
  permit: Record<string, unknown> | null;
  permitNow: number | null;
  /** The signed permit the swap carries (PERMIT2_PERMIT), when the round trip is complete. */
  signedPermit: { permit: PermitSingle; signature: Hex } | null;
};

/** Typed data with bigints as decimal strings (JSON answers). */
// biome-ignore lint/suspicious/noExplicitAny: JSON of any shape, read by callers that know it
export const jsonSafe = <T>(v: T): any =>
  JSON.parse(JSON.stringify(v, (_, x) => (typeof x === "bigint" ? x.toString() : x)));

/** What approvalPlan is given: the trade's token, amount and deadline, the chain's state, the request. */
export type ApprovalInput = {
  chainId: number;
  permit2: Address;
  router: Address;
  wallet: Address;
  token: Address;
  symbol: string;
  amountIn: bigint;
  /** Input token atoms per USD (for the budget), or null without a mark. */
  atomsPerUsd: number | null;
  deadline: number;
  chainNow: number;
  state: AllowanceState;
  req: ApprovalRequest;
};

/**
 * The approval steps an ERC-20 input needs before the router can pull it through Permit2: an
 * approve to the permit contract by mode (`budget`: the trade or the budget in tokens, whichever
 * is more; `exact`; `unlimited`), then the router's permit allowance by signature (typed data,
 * then a second call with the signature) or by transaction, for this trade (30 minutes) or 30 days.
 */
export async function approvalPlan(p: ApprovalInput): Promise<ApprovalPlan> {
  const { req } = p;
  const { steps, approval, approveAmount } = permit2Approval(p);
  const [amount, expiration, nonce] = p.state.router;
  if (amount >= p.amountIn && expiration > p.deadline)
    return { steps, approval, permit: null, permitNow: null, signedPermit: null };
  const at = req.permitNow ?? p.chainNow;
  if (
    req.permitNow !== undefined &&
    (req.permitNow > p.chainNow + 60 || req.permitNow < p.chainNow - LIMITS.permitTradeExpiryS)
  ) {
    throw new Refusal(
      "BAD_REQUEST",
      "permit_now is not the time of a live permit round trip; ask again without the signature",
    );
  }
  const single: PermitSingle = {
    details: {
      token: p.token,
      amount: req.permitScope === "trade" ? p.amountIn : approveAmount < maxUint160 ? approveAmount : maxUint160,
      expiration: at + (req.permitScope === "trade" ? LIMITS.permitTradeExpiryS : LIMITS.permit30dS),
      nonce: Number(nonce),
    },
    spender: p.router,
    sigDeadline: BigInt(at + LIMITS.permitTradeExpiryS),
  };
  if (req.permitMode === "transaction") {
    steps.push(permitByTransaction(p, single));
    return { steps, approval, permit: null, permitNow: null, signedPermit: null };
  }
  return permitBySignature(p, single, at, { steps, approval });
}

/** The approve to the permit contract this trade needs (none when the allowance covers it), and SPEC's `approval`. */
function permit2Approval(p: ApprovalInput) {
  const { req } = p;
  const steps: Step[] = [];
  const have = p.state.toPermit2;
  const budgetAtoms = p.atomsPerUsd !== null ? BigInt(Math.floor(req.budgetUsd * p.atomsPerUsd)) : 0n;
  const approveAmount =
    req.mode === "unlimited"
      ? maxUint256
      : req.mode === "exact"
        ? p.amountIn
        : p.amountIn > budgetAtoms
          ? p.amountIn
          : budgetAtoms;
  // SPEC "Plan" approval: {mode, budget, allowance left, reason, left after trade}; budget in USD.
  const approval: Record<string, unknown> = {
    mode: req.mode,
    budget: req.mode === "budget" ? req.budgetUsd : null,
    allowance_left: have.toString(),
    reason: null,
    left_after_trade: null,
  };
  if (have < p.amountIn) {
    const what = req.mode === "unlimited" ? "any amount" : approveAmount.toString();
    steps.push({
      kind: "approve",
      why: `let the permit contract move ${what} of ${p.symbol}`,
      tx: buildApprove(p.chainId, p.token, p.permit2, approveAmount),
      decoded: { function: "approve", spender: p.permit2, amount: approveAmount.toString() },
    });
    approval.reason = have === 0n ? "no allowance yet" : "allowance below this trade";
    approval.left_after_trade = (approveAmount - p.amountIn).toString();
  } else {
    approval.left_after_trade = have >= maxUint160 ? have.toString() : (have - p.amountIn).toString();
  }
  return { steps, approval, approveAmount };
}

/** The router's permit allowance given by a Permit2 approve transaction. */
function permitByTransaction(p: ApprovalInput, single: PermitSingle): Step {
  return {
    kind: "approve",
    why: "give the router a permit allowance (Permit2 approve by transaction)",
    tx: buildPermit2Approve(p.chainId, p.permit2, p.token, p.router, single.details.amount, single.details.expiration),
    decoded: {
      function: "approve",
      token: p.token,
      spender: p.router,
      amount: single.details.amount.toString(),
      expiration: single.details.expiration,
    },
  };
}

/**
 * The router's permit allowance by signature: the typed data to sign (first call), or the signed
 * permit the swap carries (second call; BAD_SIGNATURE when it does not recover to the wallet).
 */
async function permitBySignature(
  p: ApprovalInput,
  single: PermitSingle,
  at: number,
  so: Pick<ApprovalPlan, "steps" | "approval">,
): Promise<ApprovalPlan> {
  const { req } = p;
  const typed = permitTypedData(p.chainId, p.permit2, single);
  const permit = {
    mode: "signature",
    scope: req.permitScope,
    typed_data: jsonSafe(typed),
    signed: req.permitSignature !== undefined,
  };
  if (!req.permitSignature) {
    so.steps.push({
      kind: "sign_permit",
      why: "sign this Permit2 typed data, then call again with permit_signature and permit_now",
      tx: null,
      decoded: jsonSafe(typed),
    });
    return { ...so, permit, permitNow: at, signedPermit: null };
  }
  const ok = await verifyTypedData({ address: p.wallet, ...typed, signature: req.permitSignature as Hex }).catch(
    () => false,
  );
  if (!ok)
    throw new Refusal(
      "BAD_SIGNATURE",
      "permit_signature does not recover to the wallet for this permit (same permit_now as the first call?)",
      {},
      { context: "typed_data" },
    );
  return { ...so, permit, permitNow: at, signedPermit: { permit: single, signature: req.permitSignature as Hex } };
}
