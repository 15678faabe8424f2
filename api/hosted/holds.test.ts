import { describe, expect, it } from "vitest";
import { Refusal } from "../errors/index.js";
import { holdCodeOf, refusalHold, stockHold } from "./holds.js";

describe("hold codes of a live order's refusals", () => {
  it("name SPEC's hold for the refusals of session/trade, the co-signer and the policy", () => {
    expect(holdCodeOf("RISK_NOT_ACCEPTED")).toBe("RISKS_MISSING");
    expect(holdCodeOf("STOCK_PAUSED")).toBe("TOKEN_BLOCKED");
    expect(holdCodeOf("WALLET_BLOCKED")).toBe("TOKEN_BLOCKED");
    expect(holdCodeOf("PRICE_STALE")).toBe("TOKEN_STALE");
    expect(holdCodeOf("FEE_DECLARED")).toBe("FEE_MISMATCH");
    expect(holdCodeOf("FEE_CLASS")).toBe("FEE_CLASS");
    expect(holdCodeOf("SLIPPAGE")).toBe("MIN_OUT_FLOOR");
    expect(holdCodeOf("QUOTE_SIM_MISMATCH")).toBe("MIN_OUT_QUOTE");
    expect(holdCodeOf("GEOFENCE")).toBe("STOCK_ATTESTATION");
    expect(holdCodeOf("NO_FEED_SESSION")).toBe("SESSION_TOO_LONG");
    expect(holdCodeOf("SESSION_TERMS")).toBe("SHIELD_MISMATCH");
    expect(holdCodeOf("SESSION_TOKENS")).toBe("PAIR");
  });
  it("keep a refusal's own code when SPEC names no closer hold, and never read inherited keys", () => {
    expect(holdCodeOf("SESSION_MAX_DAY")).toBe("SESSION_MAX_DAY");
    expect(holdCodeOf("toString")).toBe("toString");
  });
  it("name the hold of the co-signer's failed rules, since it answers REFUSED whatever failed", () => {
    // Shaped as the co-signer answers (cosigner/tradeRules.ts failedRefusal): REFUSED, every failed rule listed.
    const refused = (...rules: string[]) =>
      new Refusal("REFUSED", "the co-signer refused", {
        signer_checks: rules.map((rule) => ({ rule, message: `${rule} failed` })),
      });
    const codeOf = (...rules: string[]) => refusalHold(refused(...rules)).code;
    expect(codeOf("PRICE")).toBe("MIN_OUT_FLOOR");
    expect(codeOf("SIGNED_MARK_PRICE", "SLIPPAGE")).toBe("MIN_OUT_FLOOR");
    expect(codeOf("PRICE_UNAVAILABLE")).toBe("TOKEN_STALE");
    for (const fee of ["FEE_REQUIRED", "SESSION_FEE", "FEE_DECLARED"]) expect(codeOf(fee)).toBe("FEE_MISMATCH");
    expect(codeOf("FEE_CLASS", "FEE_REQUIRED")).toBe("FEE_CLASS");
    expect(codeOf("NO_FEED_SESSION")).toBe("SESSION_TOO_LONG");
    // The first failed rule SPEC names a hold for, in the co-signer's order (fee before price).
    expect(codeOf("DEADLINE", "FEE_DECLARED", "PRICE")).toBe("FEE_MISMATCH");
    // No rule with a SPEC hold: the co-signer's own code, its rules beside it.
    expect(codeOf("DEADLINE", "SESSION_EXECUTION")).toBe("REFUSED");
    expect(codeOf("TRADE_REFUSED")).toBe("REFUSED");
    expect(codeOf("toString")).toBe("REFUSED");
    expect(refusalHold(refused("PRICE"))).toEqual({
      code: "MIN_OUT_FLOOR",
      message: "the co-signer refused",
      refusal: "REFUSED",
      signer_checks: [{ rule: "PRICE", message: "PRICE failed" }],
    });
  });
  it("keep a session limit's own code with its rules, and a refusal without rules as holdCodeOf names it", () => {
    const day = new Refusal("SESSION_MAX_DAY", "over", { signer_checks: [{ rule: "SESSION_MAX_DAY", message: "m" }] });
    expect(refusalHold(day)).toMatchObject({ code: "SESSION_MAX_DAY", refusal: "SESSION_MAX_DAY" });
    expect(refusalHold(day).signer_checks).toEqual([{ rule: "SESSION_MAX_DAY", message: "m" }]);
    const stale = refusalHold(new Refusal("PRICE_STALE", "old mark"));
    expect(stale).toEqual({ code: "TOKEN_STALE", message: "old mark", refusal: "PRICE_STALE" });
  });
  it("hold a stock order outside the session, unread, paused or blocked, in that order", () => {
    const ok = { paused: false, walletBlocked: false };
    expect(stockHold({ open: false, read: ok })?.code).toBe("MARKET_CLOSED");
    expect(stockHold({ open: true, read: null })?.code).toBe("STOCK_UNREAD");
    expect(stockHold({ open: true, read: { paused: true, walletBlocked: false } })?.code).toBe("TOKEN_BLOCKED");
    expect(stockHold({ open: true, read: { paused: false, walletBlocked: true } })?.code).toBe("TOKEN_BLOCKED");
    expect(stockHold({ open: true, read: ok })).toBeNull();
  });
});
