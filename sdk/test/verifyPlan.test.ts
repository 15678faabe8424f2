import { describe, expect, it } from "vitest";
import { zeroAddress } from "viem";
import { checkImpactRisks, type PlanAnswer, type TradeIntent } from "../src/verifyPlan.js";
import type { Pins } from "../src/pins.js";

/**
 * The impact codes a plan must carry by the client's own measure (SPEC: 300 bps PRICE_IMPACT, 1000 bps
 * HIGH_PRICE_IMPACT).
 */
describe("checkImpactRisks", () => {
  const pins = {
    risks: { PRICE_IMPACT: "info", HIGH_PRICE_IMPACT: "severe" },
    impactBps: { info: 300, high: 1000 },
  } as unknown as Pins;
  const intent: TradeIntent = {
    wallet: zeroAddress,
    tokenIn: "ETH",
    tokenOut: "USDG",
    slippageBps: 50,
    acceptRisks: [],
    shield: false,
  };
  const plan = (codes: string[]) => ({ risks: codes.map((code) => ({ code })) }) as PlanAnswer;
  const rule = (f: () => void) => {
    try {
      f();
      return null;
    } catch (err) {
      return (err as { rule?: string }).rule;
    }
  };

  it("passes a small impact with no code, and a plan more cautious than the client", () => {
    expect(rule(() => checkImpactRisks(plan([]), intent, pins, 120))).toBeNull();
    expect(rule(() => checkImpactRisks(plan(["PRICE_IMPACT"]), intent, pins, 120))).toBeNull();
  });
  it("refuses a plan hiding PRICE_IMPACT from 300 bps (RISK_CODES)", () => {
    expect(rule(() => checkImpactRisks(plan([]), intent, pins, 300))).toBe("RISK_CODES");
    expect(rule(() => checkImpactRisks(plan(["PRICE_IMPACT"]), intent, pins, 450))).toBeNull();
  });
  it("refuses HIGH_PRICE_IMPACT hidden or made PRICE_IMPACT, and asks it accepted", () => {
    expect(rule(() => checkImpactRisks(plan(["PRICE_IMPACT"]), intent, pins, 1200))).toBe("RISK_CODES");
    expect(rule(() => checkImpactRisks(plan(["HIGH_PRICE_IMPACT"]), intent, pins, 1200))).toBe("RISK_NOT_ACCEPTED");
    expect(
      rule(() =>
        checkImpactRisks(plan(["HIGH_PRICE_IMPACT"]), { ...intent, acceptRisks: ["HIGH_PRICE_IMPACT"] }, pins, 1200),
      ),
    ).toBeNull();
  });
});
