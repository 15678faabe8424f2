import { describe, expect, it } from "vitest";
import type { StoredAgent, Terms } from "./store.js";
import type { TickState } from "./brains.js";
import { decisionEntry, orderHolds, riskHold, termsFee } from "./tick.js";
import type { Risk } from "../trading/index.js";

const limits = { max_trade_usd: 100, max_day_usd: 300, max_position_usd: 500 };
const agent = {
  id: "ha_t",
  pairs: ["ETH/USDG", "WBTC/USDG"],
  limits,
} as unknown as StoredAgent;
const book: TickState["book"] = {
  ETH: { amount: "0.1", usd: 420 },
  USDG: { amount: "1000", usd: 1000 },
  WBTC: { amount: "0", usd: null },
};
const buy = (token_out: string, amount_usd: number) => ({ token_in: "USDG", token_out, amount_usd });

describe("orderHolds: the limits both ticks check before an order is sized", () => {
  it("lets an order go within the day's and the position's limits", () => {
    expect(orderHolds(agent, buy("ETH", 50), book, 0)).toBeNull();
    expect(orderHolds(agent, buy("ETH", 80), book, 220)).toBeNull(); // 420 + 80 = 500: at the limit, not over
  });

  it("holds MAX_DAY when the day's fills and this order pass max_day_usd", () => {
    expect(orderHolds(agent, buy("ETH", 50), book, 260)).toEqual({
      code: "MAX_DAY",
      message: "$50 would pass the day's $300 (filled $260.00)",
    });
  });

  it("holds MAX_POSITION when the token bought would be worth more than max_position_usd", () => {
    expect(orderHolds(agent, buy("ETH", 90), book, 0)).toEqual({
      code: "MAX_POSITION",
      message: "ETH would be worth $510.00, over $500",
    });
    // An unpriced or absent position counts as 0.
    expect(orderHolds(agent, buy("WBTC", 90), book, 0)).toBeNull();
  });

  it("checks the day before the position, and never holds USDG's position", () => {
    expect(orderHolds(agent, buy("ETH", 90), book, 250)?.code).toBe("MAX_DAY");
    const sell = { token_in: "ETH", token_out: "USDG", amount_usd: 90 };
    expect(orderHolds(agent, sell, book, 0)).toBeNull();
  });
});

describe("decisionEntry: the decision's log entry, the same for paper and live", () => {
  it("logs a refusal as its kind (an error row without one) and lets no order go", () => {
    expect(
      decisionEntry(agent, { refused: "AI_OFF", message: "off", kind: "hold", source: "own", poolHold: "SPENT" }, 0),
    ).toEqual({
      entry: { kind: "hold", code: "AI_OFF", body: { message: "off", source: "own", pool_hold: "SPENT" } },
      orders: null,
    });
    expect(decisionEntry(agent, { refused: "WEBHOOK", message: "bad" }, 0).entry.kind).toBe("error");
  });

  it("logs the orders with the book's value, and lets them go when checkOrders finds nothing", () => {
    const orders = [buy("ETH", 50)];
    expect(decisionEntry(agent, { orders, note: "n" }, 1420)).toEqual({
      entry: { kind: "decision", code: null, body: { orders, note: "n", value_usd: 1420 } },
      orders,
    });
  });

  it("logs an answer that breaks a rule with checkOrders' code and message, and lets none go", () => {
    const orders = [buy("ETH", 50), buy("ETH", 150)];
    const r = decisionEntry(agent, { orders }, 1420);
    expect(r.orders).toBeNull();
    expect(r.entry).toEqual({
      kind: "decision",
      code: "AI_SIZE",
      body: { orders, note: null, value_usd: 1420, message: "$150 is outside 1 to 100" },
    });
  });
});

describe("riskHold: the agent's own risk terms on an order's tokens, paper and live alike", () => {
  const terms = (o: Partial<Terms> = {}): Terms => ({
    accept_risks: [],
    shield: false,
    policies: { block_risks: [] },
    ...o,
  });
  const honeypot: Risk = { code: "HONEYPOT", severity: "severe", detail: "sells fail", token: "0xabc" };
  const proxy: Risk = { code: "UPGRADEABLE", severity: "info", detail: "proxy", token: "0xabc" };

  it("lets a token with no risk, or only info risks, go under empty terms", () => {
    expect(riskHold([], terms())).toBeNull();
    expect(riskHold([proxy], terms())).toBeNull();
  });

  it("holds RISKS_MISSING for a severe risk the agent does not accept, and lets it go once accepted", () => {
    expect(riskHold([honeypot, proxy], terms())).toEqual({
      code: "RISKS_MISSING",
      refusal: "RISK_NOT_ACCEPTED",
      message: "severe risks not accepted: HONEYPOT; list them in accept_risks to proceed",
    });
    expect(riskHold([honeypot], terms({ accept_risks: ["HONEYPOT"] }))).toBeNull();
  });

  it("holds TOKEN_BLOCKED for any risk the owner blocks, an info one too, before an unaccepted one", () => {
    expect(riskHold([proxy], terms({ policies: { block_risks: ["UPGRADEABLE"] } }))).toEqual({
      code: "TOKEN_BLOCKED",
      refusal: "RISK_BLOCKED",
      message: "the owner's policies.block_risks refuses: UPGRADEABLE",
    });
    expect(riskHold([honeypot], terms({ policies: { block_risks: ["HONEYPOT"] } }))?.code).toBe("TOKEN_BLOCKED");
    // A blocked code the tokens do not carry holds nothing.
    expect(riskHold([proxy], terms({ policies: { block_risks: ["HONEYPOT"] } }))).toBeNull();
  });

  it("is not loosened by Shield: the agent's Shield adds no policy of its own to its block list", () => {
    expect(riskHold([honeypot], terms({ shield: true }))?.code).toBe("RISKS_MISSING");
    expect(riskHold([proxy], terms({ shield: true }))).toBeNull();
  });
});

describe("termsFee: a paper fill pays the fee live would charge under the agent's terms", () => {
  it("charges Shield's 10 bps only when the agent asked for Shield, and says so", () => {
    expect(termsFee("major", { shield: false }, 0)).toEqual({
      fee_bps: 25,
      fee_class: "major",
      fee_tier: 25,
      shield: false,
    });
    expect(termsFee("major", { shield: true }, 0)).toEqual({
      fee_bps: 35,
      fee_class: "major",
      fee_tier: 25,
      shield: true,
    });
    expect(termsFee("other", { shield: false }, 0).fee_bps).toBe(50);
    expect(termsFee("other", { shield: true }, 0).fee_bps).toBe(60);
  });

  it("charges a major fill the owner's 30-day volume tier, as live does; other fills keep other_bps", () => {
    expect(termsFee("major", { shield: false }, 99_999.99)).toMatchObject({ fee_bps: 25, fee_tier: 25 });
    expect(termsFee("major", { shield: false }, 100_000)).toMatchObject({ fee_bps: 20, fee_tier: 20 });
    expect(termsFee("major", { shield: true }, 1_000_000)).toMatchObject({ fee_bps: 25, fee_tier: 15 });
    expect(termsFee("major", { shield: false }, 50_000_000)).toMatchObject({ fee_bps: 10, fee_tier: 10 });
    expect(termsFee("other", { shield: false }, 50_000_000)).toMatchObject({ fee_bps: 50, fee_tier: 50 });
  });
});
