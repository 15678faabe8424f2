import { describe, expect, it } from "vitest";
import {
  defaultSlippageBps,
  evaluatePolicy,
  LIMITS,
  risk,
  riskVerdict,
  slippageCapBps,
  type PolicyInput,
} from "./policy.js";

const ok: PolicyInput = {
  notionalUsd: 100,
  tierLimitUsd: 10_000,
  slippageBps: 50,
  feeBps: 25,
  maxFeeBps: null,
  approval: null,
  stock: null,
  risks: [],
  acceptRisks: [],
  shield: { on: false, policies: [] },
  vsMidBps: -10,
  midRequired: true,
  vsRefBps: 5,
  minAmountOut: null,
  expectedOut: 1000n,
};

describe("evaluatePolicy", () => {
  it("passes a plain trade and names every check that ran", () => {
    const r = evaluatePolicy(ok);
    expect(r.ok).toBe(true);
    expect(r.checks).toEqual([
      "FEE_BPS",
      "MIN_NOTIONAL",
      "MAX_NOTIONAL",
      "MAX_SLIPPAGE",
      "TOKEN_TIER",
      "RISKS",
      "ROUTE_VS_MID",
      "ROUTE_VS_REF",
    ]);
  });

  it("answers the first failure in order, whatever else fails", () => {
    const bad = { ...ok, notionalUsd: 0.5, slippageBps: 9_000, vsMidBps: -900, maxFeeBps: 10 };
    expect(evaluatePolicy(bad).code).toBe("FEE_BPS");
    expect(evaluatePolicy({ ...bad, maxFeeBps: null }).code).toBe("MIN_NOTIONAL");
    expect(evaluatePolicy({ ...bad, maxFeeBps: null, notionalUsd: 50 }).code).toBe("MAX_SLIPPAGE");
    expect(evaluatePolicy({ ...bad, maxFeeBps: null, notionalUsd: 50, slippageBps: 50 }).code).toBe("ROUTE_VS_MID");
  });

  it("slippage caps shrink with size", () => {
    expect([500, 1_000, 1_001, 5_000, 5_001, 10_000].map(slippageCapBps)).toEqual([500, 500, 300, 300, 200, 200]);
  });

  it("severe risks must be accepted; Shield policies block even accepted ones", () => {
    const risks = [
      risk("NO_INDEPENDENT_MARK", "pool only"),
      risk("UPGRADEABLE", "proxy"),
      risk("UNVERIFIED", "Shield: unverified"),
    ];
    const r = evaluatePolicy({ ...ok, risks });
    expect(r).toMatchObject({ code: "RISK_NOT_ACCEPTED", unaccepted: ["NO_INDEPENDENT_MARK"] });
    expect(evaluatePolicy({ ...ok, risks, acceptRisks: ["NO_INDEPENDENT_MARK"] }).ok).toBe(true);
    const blocked = evaluatePolicy({
      ...ok,
      risks,
      acceptRisks: ["NO_INDEPENDENT_MARK"],
      shield: { on: true, policies: ["block_severe", "verified_only"] },
    });
    expect(blocked.code).toBe("RISK_BLOCKED");
    expect(blocked.refusal!.extra).toMatchObject({
      blocked: ["NO_INDEPENDENT_MARK", "UNVERIFIED"],
      policy: ["block_severe", "verified_only"],
    });
  });

  it("riskVerdict: Shield's policies and an owner's block list refuse the codes they name, any severity", () => {
    const risks = [risk("NO_INDEPENDENT_MARK", "pool only"), risk("UPGRADEABLE", "proxy")];
    const none = riskVerdict(risks, { acceptRisks: ["NO_INDEPENDENT_MARK"], shieldPolicies: null });
    expect([none.notAccepted, none.blocked, none.accepted]).toEqual([null, null, ["NO_INDEPENDENT_MARK"]]);
    // Without Shield its policies name nothing; the owner's list blocks an info code too.
    expect(
      riskVerdict(risks, { acceptRisks: [], shieldPolicies: null, blockRisks: ["UPGRADEABLE"] }).blocked,
    ).toMatchObject({ code: "RISK_BLOCKED", extra: { blocked: ["UPGRADEABLE"], block_risks: ["UPGRADEABLE"] } });
    const both = riskVerdict(risks, { acceptRisks: [], shieldPolicies: ["block_severe"], blockRisks: ["UPGRADEABLE"] });
    expect(both.blocked!.extra).toMatchObject({ blocked: ["NO_INDEPENDENT_MARK", "UPGRADEABLE"] });
    expect(both.notAccepted!.code).toBe("RISK_NOT_ACCEPTED");
  });

  it("stock tokens: geofence before pause before wallet block; approvals; references; limits", () => {
    const stock = { attests: false, paused: true, walletBlocked: true, symbols: ["TSLA"] };
    expect(evaluatePolicy({ ...ok, stock }).code).toBe("GEOFENCE");
    expect(evaluatePolicy({ ...ok, stock: { ...stock, attests: true } }).code).toBe("STOCK_PAUSED");
    expect(evaluatePolicy({ ...ok, stock: { ...stock, attests: true, paused: false } }).code).toBe("WALLET_BLOCKED");
    const approval = { mode: "budget", budgetUsd: 25, allowUnlimited: false, unlimitedInPlace: true };
    expect(evaluatePolicy({ ...ok, approval }).checks).toContain("UNLIMITED_APPROVAL_IN_PLACE");
    expect(evaluatePolicy({ ...ok, approval: { ...approval, mode: "unlimited" } }).code).toBe("UNLIMITED_APPROVAL");
    expect(evaluatePolicy({ ...ok, approval: { ...approval, budgetUsd: -1 } }).code).toBe("APPROVAL_BUDGET");
    expect(evaluatePolicy({ ...ok, vsMidBps: null }).code).toBe("NO_REFERENCE_MID");
    expect(evaluatePolicy({ ...ok, vsRefBps: -301 }).code).toBe("ROUTE_VS_REF");
    expect(evaluatePolicy({ ...ok, vsRefBps: null }).checks).not.toContain("ROUTE_VS_REF");
    expect(evaluatePolicy({ ...ok, minAmountOut: 1001n }).code).toBe("LIMIT_NOT_REACHABLE");
    expect(evaluatePolicy({ ...ok, notionalUsd: 600, tierLimitUsd: 500 }).code).toBe("MAX_NOTIONAL");
  });

  it("a pair's default slippage depends on its class and size, and never exceeds the size's cap", () => {
    expect([100, 2_000, 9_000].map((n) => defaultSlippageBps(n, "major"))).toEqual([50, 50, 50]);
    expect([100, 2_000, 9_000].map((n) => defaultSlippageBps(n, "other"))).toEqual([100, 150, 200]);
    for (const row of LIMITS.slippageBySize) {
      for (const cls of ["major", "other"] as const)
        expect(row.default_slippage_bps[cls]).toBeLessThanOrEqual(row.max_slippage_bps);
    }
  });
});
