import { describe, expect, it } from "vitest";
import { concat, getAddress, type Address } from "viem";
import { GRANT_LIMITS, grantLimits, startRequest, walletCodeOf } from "./grant.js";

const PINNED = "0x63c0c19a282a1b52b07dd5a65b58948a07dae32b" as Address;
/** A start request as the route parses it (SPEC's defaults filled in). */
const ask = (o: Record<string, unknown> = {}) => startRequest.parse({ wallet: PINNED, executor: PINNED, ...o });
const refusal = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    const e = err as { code: string; message: string };
    return [e.code, e.message];
  }
  return null;
};

describe("grantLimits: a grant's limits within SPEC's, with the day cap and setup budget defaulted", () => {
  it("defaults the day cap to $100 or the trade cap, at most 100x it, and the setup budget to it up to $10,000", () => {
    expect(grantLimits(ask())).toEqual({ maxDay: 100, budgetUsd: 100 });
    expect(grantLimits(ask({ max_trade_usd: 0.5 }))).toEqual({ maxDay: 50, budgetUsd: 50 });
    expect(grantLimits(ask({ max_trade_usd: 1_000 }))).toEqual({ maxDay: 1_000, budgetUsd: 1_000 });
    expect(grantLimits(ask({ max_trade_usd: 1_000, max_day_usd: 50_000 }))).toEqual({
      maxDay: 50_000,
      budgetUsd: GRANT_LIMITS.maxSetupBudgetUsd,
    });
    expect(grantLimits(ask({ setup_budget_usd: 7 }))).toEqual({ maxDay: 100, budgetUsd: 7 });
  });

  it("refuses each limit out of range with SESSION_LIMIT, in SPEC's order", () => {
    expect(refusal(() => grantLimits(ask({ max_trade_usd: 0, max_trades: 0 })))).toEqual([
      "SESSION_LIMIT",
      "max_trade_usd must be above 0 and at most 1000",
    ]);
    expect(refusal(() => grantLimits(ask({ max_trade_usd: 10, max_day_usd: 5 })))).toEqual([
      "SESSION_LIMIT",
      "max_day_usd must be from max_trade_usd (10) to 100 times it",
    ]);
    expect(refusal(() => grantLimits(ask({ max_trades: 1.5 })))).toEqual([
      "SESSION_LIMIT",
      "max_trades must be an integer from 1 to 10000",
    ]);
    expect(refusal(() => grantLimits(ask({ expires_in_s: 59 })))).toEqual([
      "SESSION_LIMIT",
      "expires_in_s must be an integer from 60 to 2592000",
    ]);
    expect(refusal(() => grantLimits(ask({ setup_budget_usd: 10_001 })))).toEqual([
      "SESSION_LIMIT",
      "setup_budget_usd must be above 0 and at most 10000",
    ]);
    expect(refusal(() => grantLimits(ask({ tokens: ["usdg", "USDG"] })))).toEqual([
      "SESSION_LIMIT",
      "a session needs at least two different tokens",
    ]);
  });
});

describe("walletCodeOf: the wallet's code before a grant", () => {
  it("is an EOA without code, the pinned delegator behind its 7702 designator, and WALLET_CODE otherwise", () => {
    expect(walletCodeOf(undefined, PINNED)).toEqual({ state: "eoa", implementation: null, version: null });
    expect(walletCodeOf("0x", PINNED)).toEqual({ state: "eoa", implementation: null, version: null });
    expect(walletCodeOf(concat(["0xef0100", PINNED]), PINNED)).toEqual({
      state: "pinned",
      implementation: getAddress(PINNED),
      version: "1.3.0",
    });
    expect(refusal(() => walletCodeOf("0x6080604052", PINNED))?.[0]).toBe("WALLET_CODE");
  });
});
