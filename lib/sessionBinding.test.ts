import { describe, expect, it } from "vitest";
import {
  allowedFeeBps,
  bindingHash,
  bindingSalt,
  canonicalJson,
  feeTermsOfSchedule2,
  type SessionBinding,
} from "./sessionBinding.js";

const binding = (over: Partial<SessionBinding> = {}): SessionBinding => ({
  version: 3,
  chain_id: 4663,
  wallet: "0x00000000000000000000000000000000000000bb",
  executor: "0x00000000000000000000000000000000000000ee",
  cosigner: "0x00000000000000000000000000000000000000cc",
  tokens: ["0x0000000000000000000000000000000000000000", "0x00000000000000000000000000000000000000dd"],
  limits: { max_trade_usd: 25, max_day_usd: 100, max_trades: 50 },
  expires: 2_000_000_000,
  setup_budget_usd: 100,
  fee: feeTermsOfSchedule2(),
  risk_terms: { accept_risks: [], shield: false, policies: [] },
  ...over,
});

describe("the limits binding", () => {
  it("serialises canonically: key order does not change the bytes; undefined keys drop; NaN throws", () => {
    expect(canonicalJson({ b: 1, a: [2, { d: true, c: null }] })).toBe('{"a":[2,{"c":null,"d":true}],"b":1}');
    expect(canonicalJson({ a: 1, b: undefined })).toBe('{"a":1}');
    expect(() => canonicalJson({ a: Number.NaN })).toThrow();
    expect(() => canonicalJson({ a: 1n })).toThrow();
    const b = binding();
    const reordered = Object.fromEntries(Object.entries(b).reverse()) as SessionBinding;
    expect(Object.keys(reordered)[0]).toBe("risk_terms");
    expect(bindingHash(reordered)).toBe(bindingHash(b));
  });

  it("changes the salt with any limit, token, term or party", () => {
    const base = bindingSalt(binding());
    for (const other of [
      binding({ limits: { max_trade_usd: 26, max_day_usd: 100, max_trades: 50 } }),
      binding({ limits: { max_trade_usd: 25, max_day_usd: 100, max_trades: 51 } }),
      binding({ tokens: ["0x0000000000000000000000000000000000000000"] }),
      binding({ executor: "0x00000000000000000000000000000000000000ef" }),
      binding({ expires: 2_000_000_001 }),
      binding({ risk_terms: { accept_risks: ["HONEYPOT"], shield: false, policies: [] } }),
      binding({ fee: { ...feeTermsOfSchedule2(), major_min_bps: 5 } }),
    ])
      expect(bindingSalt(other)).not.toBe(base);
  });

  it("allows a major trade any pinned tier from 10 to 25 bps, an other trade exactly 50; Shield adds 10", () => {
    expect(allowedFeeBps(binding(), "major")).toEqual([25, 20, 15, 10]);
    expect(allowedFeeBps(binding(), "other")).toEqual([50]);
    expect(allowedFeeBps(binding({ risk_terms: { accept_risks: [], shield: true, policies: [] } }), "other")).toEqual([
      60,
    ]);
  });
});
