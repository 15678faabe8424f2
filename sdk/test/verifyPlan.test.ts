import { describe, expect, it } from "vitest";
import { zeroAddress } from "viem";
import { checkImpactRisks, verifyPlan, type PlanAnswer, type TradeIntent } from "../src/verifyPlan.js";
import { pinnedSymbol, type Pins } from "../src/pins.js";

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

/** Issue 30: the server matches a core symbol in any case (`eth`); the SDK's checks must find the same token. */
describe("symbols as the server matches them", () => {
  const ETH = { address: zeroAddress, decimals: 18 };
  const USDG = { address: "0x00000000000000000000000000000000000000a6" as const, decimals: 6 };
  const pins = {
    chainId: 4663,
    router: "0x00000000000000000000000000000000000000b0",
    feeRecipient: "0x00000000000000000000000000000000000000fe",
    tokens: { ETH, USDG, WETH: { address: "0x00000000000000000000000000000000000000e7", decimals: 18 } },
    majorSymbols: ["ETH", "USDG"],
  } as unknown as Pins;
  const intent = (tokenIn: string, tokenOut: string): TradeIntent => ({
    wallet: "0x00000000000000000000000000000000000000aa",
    tokenIn,
    tokenOut,
    slippageBps: 50,
    acceptRisks: [],
    shield: false,
  });
  const outcome = (i: TradeIntent) => {
    const plan = { tx: { to: pins.router, data: "0x1234", value: "0", chain_id: 4663 } } as unknown as PlanAnswer;
    try {
      verifyPlan(plan, i, pins);
      return "passed";
    } catch (err) {
      return (err as Error).message;
    }
  };

  it("reads eth, Usdg and a pinned address as the pinned symbols", () => {
    expect(pinnedSymbol(pins, "eth")).toBe("ETH");
    expect(pinnedSymbol(pins, "Usdg")).toBe("USDG");
    expect(pinnedSymbol(pins, USDG.address.toUpperCase().replace("0X", "0x"))).toBe("USDG");
    expect(pinnedSymbol(pins, "DOGE")).toBe("DOGE");
  });

  it("checks a plan for eth -> usdg as the one for ETH -> USDG, not as tokens it has no pin for", () => {
    expect(outcome(intent("eth", "usdg"))).not.toMatch(/not pinned tokens/);
    expect(outcome(intent("eth", "usdg"))).toBe(outcome(intent("ETH", "USDG")));
    expect(outcome(intent("DOGE", "USDG"))).toMatch(/DOGE\/USDG are not pinned tokens/);
  });
});
