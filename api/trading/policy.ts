import { RISKS, type RiskCode } from "../../lib/risks.js";
import { Refusal, type Code } from "../errors/index.js";

/** SPEC.md limits (the same numbers /config publishes). */
export const LIMITS = {
  maxNotionalUsd: 10_000,
  minNotionalUsd: 1,
  defaultSlippageBps: 50,
  /**
   * Per size: the cap every pair shares, and the default a pair gets when the request names none.
   * Major pairs trade in deep pools at 5-30 bps; other pairs (the partner token, long-tail tokens
   * with thin pools or transfer taxes) need more room to land, so their default is wider.
   */
  slippageBySize: [
    { max_notional_usd: 1_000, max_slippage_bps: 500, default_slippage_bps: { major: 50, other: 100 } },
    { max_notional_usd: 5_000, max_slippage_bps: 300, default_slippage_bps: { major: 50, other: 150 } },
    { max_notional_usd: 10_000, max_slippage_bps: 200, default_slippage_bps: { major: 50, other: 200 } },
  ],
  maxVsMidBps: 300,
  /** Tolerance of a route's price against oracle marks, beyond its pool fees. */
  maxVsRefBps: 300,
  deadlineS: 120,
  permitTradeExpiryS: 1_800,
  permit30dS: 30 * 86_400,
  defaultApprovalBudgetUsd: 25,
  maxApprovalBudgetUsd: 10_000,
  highPriceImpactBps: 1_000,
  priceImpactBps: 300,
} as const;

export const APPROVAL_MODES = ["budget", "exact", "unlimited"] as const;
export const SHIELD_POLICIES = ["block_severe", "verified_only"] as const;

export type Risk = { code: RiskCode; severity: "severe" | "info"; detail: string; token?: string };

const sizeRow = (notionalUsd: number) =>
  LIMITS.slippageBySize.find((r) => notionalUsd <= r.max_notional_usd) ??
  LIMITS.slippageBySize[LIMITS.slippageBySize.length - 1]!;

export const slippageCapBps = (notionalUsd: number): number => sizeRow(notionalUsd).max_slippage_bps;

/** The pair's default slippage for this size (what /config `slippage_tolerance_by_size` publishes). */
export const defaultSlippageBps = (notionalUsd: number, feeClass: "major" | "other"): number =>
  sizeRow(notionalUsd).default_slippage_bps[feeClass];

export const risk = (code: RiskCode, detail: string, token?: string): Risk => ({
  code,
  severity: RISKS[code],
  detail,
  ...(token ? { token } : {}),
});

/**
 * Risk terms as a trade carries them: the severe codes accepted; Shield's policies (null: Shield
 * off); the codes an owner blocks outright (a hosted agent's policies.block_risks, any severity).
 */
export type RiskTerms = {
  acceptRisks: readonly string[];
  shieldPolicies: readonly string[] | null;
  blockRisks?: readonly string[];
};

/**
 * The one reading of risk terms, for a key's trade (evaluatePolicy) and a hosted agent's order
 * alike: severe codes not accepted (RISK_NOT_ACCEPTED) and those accepted; what Shield's policies
 * refuse (block_severe: every severe code, verified_only: UNVERIFIED) and the owner's block list
 * (RISK_BLOCKED). A refusal is null when its terms let the risks through.
 */
export function riskVerdict(risks: Risk[], t: RiskTerms) {
  const severe = [...new Set(risks.filter((r) => r.severity === "severe").map((r) => r.code))];
  const unaccepted = severe.filter((c) => !t.acceptRisks.includes(c));
  const accepted = severe.filter((c) => t.acceptRisks.includes(c));
  const policies = t.shieldPolicies ?? [];
  const byShield = new Set<string>();
  if (policies.includes("block_severe")) for (const c of severe) byShield.add(c);
  if (policies.includes("verified_only")) for (const r of risks) if (r.code === "UNVERIFIED") byShield.add(r.code);
  const byOwner = [...new Set(risks.map((r) => r.code).filter((c) => t.blockRisks?.includes(c)))];
  const blocked = [...new Set([...byShield, ...byOwner])];
  return {
    severe,
    unaccepted,
    accepted,
    notAccepted: unaccepted.length
      ? new Refusal(
          "RISK_NOT_ACCEPTED",
          `severe risks not accepted: ${unaccepted.join(", ")}; list them in accept_risks to proceed`,
          { unaccepted, risks },
        )
      : null,
    blocked: blocked.length
      ? new Refusal(
          "RISK_BLOCKED",
          byOwner.length
            ? `the owner's policies.block_risks refuses: ${byOwner.join(", ")}`
            : `Shield policy refuses: ${blocked.join(", ")}`,
          { blocked, policy: policies, ...(byOwner.length ? { block_risks: byOwner } : {}) },
        )
      : null,
  };
}

/** Everything the policy looks at; null where a reading does not apply to this plan. */
export type PolicyInput = {
  notionalUsd: number;
  tierLimitUsd: number;
  slippageBps: number;
  feeBps: number;
  maxFeeBps: number | null;
  approval: { mode: string; budgetUsd: number; allowUnlimited: boolean; unlimitedInPlace: boolean } | null;
  stock: { attests: boolean; paused: boolean; walletBlocked: boolean; symbols: string[] } | null;
  risks: Risk[];
  acceptRisks: string[];
  shield: { on: boolean; policies: string[] };
  /** vs_mid_bps of the chosen route; null when its reference mid is unreadable. */
  vsMidBps: number | null;
  midRequired: boolean;
  /** Route price against oracle marks (pool fees removed), when both sides have an oracle. */
  vsRefBps: number | null;
  minAmountOut: bigint | null;
  expectedOut: bigint;
};

export type PolicyResult = {
  ok: boolean;
  code: Code | null;
  message: string | null;
  checks: string[];
  refusal: Refusal | null;
  unaccepted: string[];
  accepted: string[];
};

/** The checks run so far, and the first failure (the refusal). */
type Checker = {
  checks: string[];
  run: (name: string, f: () => void) => void;
  fail: (code: Code, message: string, extra?: Record<string, unknown>) => void;
  refuse: (r: Refusal) => void;
  refusal: () => Refusal | null;
};

function checker(): Checker {
  const checks: string[] = [];
  let refusal: Refusal | null = null;
  return {
    checks,
    run: (name, f) => {
      checks.push(name);
      f();
    },
    fail: (code, message, extra = {}) => {
      refusal ??= new Refusal(code, message, extra);
    },
    refuse: (r) => {
      refusal ??= r;
    },
    refusal: () => refusal,
  };
}

/**
 * The trading policy (SPEC.md "Risk and policy"): runs every check that applies, in a fixed order,
 * and names them in `checks`. The first failing one is the refusal; quote reports it, prepare and
 * build throw it.
 */
export function evaluatePolicy(p: PolicyInput): PolicyResult {
  const k = checker();
  k.run("FEE_BPS", () => {
    if (p.maxFeeBps !== null && p.feeBps > p.maxFeeBps)
      k.fail("FEE_BPS", `the fee is ${p.feeBps} bps, above your max_fee_bps ${p.maxFeeBps}`);
  });
  if (p.approval) approvalChecks(k, p.approval);
  sizeChecks(k, p);
  k.checks.push("TOKEN_TIER");
  if (p.stock) stockChecks(k, p.stock);
  const v = riskVerdict(p.risks, {
    acceptRisks: p.acceptRisks,
    shieldPolicies: p.shield.on ? p.shield.policies : null,
  });
  const { unaccepted, accepted } = v;
  k.run("RISKS", () => {
    if (v.notAccepted) k.refuse(v.notAccepted);
  });
  if (p.shield.on)
    k.run("SHIELD", () => {
      if (v.blocked) k.refuse(v.blocked);
    });
  priceChecks(k, p);
  const r = k.refusal();
  return {
    ok: r === null,
    code: r?.code ?? null,
    message: r?.message ?? null,
    checks: k.checks,
    refusal: r,
    unaccepted,
    accepted,
  };
}

function approvalChecks(k: Checker, a: NonNullable<PolicyInput["approval"]>) {
  k.run("APPROVAL_MODE", () => {
    if (!(APPROVAL_MODES as readonly string[]).includes(a.mode))
      k.fail("APPROVAL_MODE", `approval_mode must be one of ${APPROVAL_MODES.join(", ")}`);
  });
  k.run("APPROVAL_BUDGET", () => {
    if (!(a.budgetUsd > 0) || a.budgetUsd > LIMITS.maxApprovalBudgetUsd)
      k.fail("APPROVAL_BUDGET", `approval_budget_usd must be above 0 and at most ${LIMITS.maxApprovalBudgetUsd}`);
  });
  k.run("UNLIMITED_APPROVAL", () => {
    if (a.mode === "unlimited" && !a.allowUnlimited)
      k.fail("UNLIMITED_APPROVAL", "approval_mode unlimited needs allow_unlimited_approval true");
  });
  if (a.unlimitedInPlace) k.checks.push("UNLIMITED_APPROVAL_IN_PLACE");
}

function sizeChecks(k: Checker, p: PolicyInput) {
  k.run("MIN_NOTIONAL", () => {
    if (p.notionalUsd < LIMITS.minNotionalUsd)
      k.fail("MIN_NOTIONAL", `the trade is $${p.notionalUsd.toFixed(2)}, below the $${LIMITS.minNotionalUsd} minimum`);
  });
  k.run("MAX_NOTIONAL", () => {
    const max = Math.min(LIMITS.maxNotionalUsd, p.tierLimitUsd);
    const tier = max < LIMITS.maxNotionalUsd ? " for this token's tier" : "";
    if (p.notionalUsd > max)
      k.fail("MAX_NOTIONAL", `the trade is $${p.notionalUsd.toFixed(2)}, above the $${max} maximum${tier}`);
  });
  k.run("MAX_SLIPPAGE", () => {
    const cap = slippageCapBps(p.notionalUsd);
    if (p.slippageBps > cap)
      k.fail(
        "MAX_SLIPPAGE",
        `slippage_bps ${p.slippageBps} is above the ${cap} bps cap for a $${Math.round(p.notionalUsd)} trade`,
      );
  });
}

function stockChecks(k: Checker, s: NonNullable<PolicyInput["stock"]>) {
  k.run("GEOFENCE", () => {
    if (!s.attests)
      k.fail(
        "GEOFENCE",
        `${s.symbols.join(", ")} is a stock token: ` +
          "set owner_attests_non_us true to attest the owner is not a US person",
      );
  });
  k.run("STOCK_PAUSED", () => {
    if (s.paused) k.fail("STOCK_PAUSED", `the issuer has paused ${s.symbols.join(", ")}`);
  });
  k.run("WALLET_BLOCKED", () => {
    if (s.walletBlocked) k.fail("WALLET_BLOCKED", "the stock token registry blocks this wallet");
  });
}

/** The route's price against the pool mid and the oracle reference, and the caller's limit. */
function priceChecks(k: Checker, p: PolicyInput) {
  k.run("ROUTE_VS_MID", () => {
    if (p.vsMidBps === null) {
      if (p.midRequired) k.fail("NO_REFERENCE_MID", "the reference pool mid is unreadable; retry shortly");
    } else if (p.vsMidBps < -LIMITS.maxVsMidBps)
      k.fail("ROUTE_VS_MID", `the route pays ${-p.vsMidBps} bps under the pool mid (at most ${LIMITS.maxVsMidBps})`);
  });
  if (p.vsRefBps !== null) {
    const vsRef = p.vsRefBps;
    k.run("ROUTE_VS_REF", () => {
      if (Math.abs(vsRef) > LIMITS.maxVsRefBps)
        k.fail(
          "ROUTE_VS_REF",
          `the route's price is ${vsRef} bps from the oracle reference (at most ${LIMITS.maxVsRefBps})`,
        );
    });
  }
  if (p.minAmountOut !== null) {
    const min = p.minAmountOut;
    k.run("LIMIT", () => {
      if (min > p.expectedOut)
        k.fail("LIMIT_NOT_REACHABLE", `min_amount_out ${min} cannot be met now: the best route gives ${p.expectedOut}`);
    });
  }
}
