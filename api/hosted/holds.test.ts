import { describe, expect, it } from "vitest";
import { holdCodeOf, stockHold } from "./holds.js";

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
  it("hold a stock order outside the session, unread, paused or blocked, in that order", () => {
    const ok = { paused: false, walletBlocked: false };
    expect(stockHold({ open: false, read: ok })?.code).toBe("MARKET_CLOSED");
    expect(stockHold({ open: true, read: null })?.code).toBe("STOCK_UNREAD");
    expect(stockHold({ open: true, read: { paused: true, walletBlocked: false } })?.code).toBe("TOKEN_BLOCKED");
    expect(stockHold({ open: true, read: { paused: false, walletBlocked: true } })?.code).toBe("TOKEN_BLOCKED");
    expect(stockHold({ open: true, read: ok })).toBeNull();
  });
});
