import { describe, expect, it } from "vitest";
import { zeroAddress, type Address } from "viem";
import type { RouterReading } from "../lib/router/read.js";
import { feeTermsOfSchedule2, type SessionBinding } from "../lib/sessionBinding.js";
import { readFeeBps } from "../lib/router/read.js";
import { checkExecution } from "./checks.js";

const usdg = "0x00000000000000000000000000000000000000ee" as Address;
const now = 1_900_000_000;
const binding: SessionBinding = {
  version: 3,
  chain_id: 4663,
  wallet: "0x00000000000000000000000000000000000000bb",
  executor: "0x00000000000000000000000000000000000000e1",
  cosigner: "0x00000000000000000000000000000000000000cc",
  tokens: [zeroAddress, usdg],
  limits: { max_trade_usd: 50, max_day_usd: 100, max_trades: 3 },
  expires: now + 3_600,
  setup_budget_usd: 100,
  fee: feeTermsOfSchedule2(),
  risk_terms: { accept_risks: [], shield: false, policies: [] },
};
/** 0.01 ETH at $3,000 ($30) for at least 29.5 USDG, 25 bps of the input to the fee recipient. */
const reading = (over: Partial<RouterReading> = {}): RouterReading => ({
  failures: [],
  tokenIn: zeroAddress,
  amountIn: 10n ** 16n,
  tokenOut: usdg,
  minOut: 29_500_000n,
  fees: [{ token: zeroAddress, amount: 25n * 10n ** 12n, bps: null, command: "TRANSFER" }],
  deadline: BigInt(now + 120),
  ...over,
});
const run = (over: Partial<Parameters<typeof checkExecution>[0]> = {}) =>
  checkExecution({
    binding,
    reading: reading(),
    marks: { usdIn: 3_000, usdOut: 1, decimalsIn: 18, decimalsOut: 6 },
    counters: { tradesUsed: 0, last24hUsd: 0 },
    now,
    feeClassOf: () => "major",
    declaredFeeBps: 25,
    ...over,
  });
const failed = (r: ReturnType<typeof run>) => r.checks.filter((c) => !c.ok).map((c) => c.rule);

describe("the co-signer's checks", () => {
  it("passes the honest trade and prices it at its own marks", () => {
    const r = run();
    expect(failed(r)).toEqual([]);
    expect(r.notionalUsd).toBeCloseTo(30, 6);
  });

  it("counts limits: per trade, trades left, 24 h including this trade", () => {
    expect(
      failed(
        run({
          reading: reading({
            amountIn: 2n * 10n ** 16n,
            minOut: 59_000_000n,
            fees: [{ token: zeroAddress, amount: 5n * 10n ** 13n, bps: null, command: "TRANSFER" }],
          }),
        }),
      ),
    ).toEqual(["SESSION_MAX_TRADE"]);
    expect(failed(run({ counters: { tradesUsed: 3, last24hUsd: 0 } }))).toEqual(["SESSION_TRADES_LEFT"]);
    expect(failed(run({ counters: { tradesUsed: 1, last24hUsd: 70.01 } }))).toEqual(["SESSION_MAX_DAY"]);
    expect(failed(run({ counters: { tradesUsed: 1, last24hUsd: 70 } }))).toEqual([]);
  });

  it(
    "refuses the last seconds of a session, tokens outside it, a fee the binding does not allow or none, " +
      "an unknown class",
    () => {
      expect(failed(run({ now: binding.expires - 10 }))).toContain("SESSION_EXPIRY");
      expect(failed(run({ reading: reading({ tokenOut: "0x00000000000000000000000000000000000000f0" }) }))).toContain(
        "SESSION_TOKENS",
      );
      expect(
        failed(
          run({
            reading: reading({
              fees: [{ token: zeroAddress, amount: 3n * 10n ** 12n, bps: null, command: "TRANSFER" }],
            }),
            declaredFeeBps: 3,
          }),
        ),
      ).toEqual(["SESSION_FEE"]);
      expect(failed(run({ reading: reading({ fees: [] }) }))).toEqual(["FEE_REQUIRED"]);
      expect(failed(run({ feeClassOf: () => null }))).toEqual(["FEE_CLASS"]);
      expect(failed(run({ feeClassOf: (t) => (t === usdg ? "other" : "major") }))).toEqual(["SESSION_FEE"]);
      expect(failed(run({ declaredFeeBps: 20 }))).toEqual(["FEE_DECLARED"]);
    },
  );

  it("judges the router's deadline by the chain's clock when ahead: no further than 10 minutes, not past", () => {
    expect(failed(run({ reading: reading({ deadline: BigInt(now + 601) }) }))).toEqual(["DEADLINE"]);
    expect(failed(run({ reading: reading({ deadline: BigInt(now) }) }))).toEqual(["DEADLINE"]);
    expect(failed(run({ reading: reading({ deadline: BigInt(now + 900) }), chainNow: now + 400 }))).toEqual([]);
  });

  it("refuses a minimum too far under the input at its marks, and a trade it cannot price", () => {
    expect(failed(run({ reading: reading({ minOut: 27_000_000n }) }))).toEqual(["PRICE"]);
    expect(failed(run({ marks: { usdIn: null, usdOut: 1, decimalsIn: 18, decimalsOut: 6 } }))).toEqual([
      "PRICE_UNAVAILABLE",
    ]);
  });

  it(
    "judges a side priced at the owner-signed mark as SIGNED_MARK_PRICE, " +
      "and a minimum too far under the quote as SLIPPAGE",
    () => {
      const signed = { usdIn: 3_000, usdOut: 1, decimalsIn: 18, decimalsOut: 6, signedOut: true };
      expect(failed(run({ marks: signed }))).toEqual([]);
      expect(run({ marks: signed }).checks.map((c) => c.rule)).toContain("SIGNED_MARK_PRICE");
      expect(failed(run({ marks: signed, reading: reading({ minOut: 27_000_000n }) }))).toEqual(["SIGNED_MARK_PRICE"]);
      // 29.5 USDG is 500 bps under 31.05 quoted: allowed; under 31.06, not.
      expect(failed(run({ declaredExpectedOut: 31_052_631n }))).toEqual([]);
      expect(failed(run({ declaredExpectedOut: 31_060_000n }))).toEqual(["SLIPPAGE"]);
    },
  );

  it("reads the fee as bps: PAY_PORTION of the output, or exactly bps of the input; two payments are none", () => {
    expect(readFeeBps(reading())).toBe(25);
    expect(readFeeBps(reading({ fees: [{ token: usdg, amount: null, bps: 50n, command: "PAY_PORTION" }] }))).toBe(50);
    expect(
      readFeeBps(reading({ fees: [{ token: zeroAddress, amount: null, bps: 50n, command: "PAY_PORTION" }] })),
    ).toBeNull();
    expect(readFeeBps(reading({ fees: [...reading().fees, ...reading().fees] }))).toBeNull();
    expect(
      readFeeBps(
        reading({ fees: [{ token: zeroAddress, amount: 25n * 10n ** 12n + 1n, bps: null, command: "TRANSFER" }] }),
      ),
    ).toBeNull();
  });
});
