import { describe, expect, it } from "vitest";
import { feeTermsOfSchedule2 } from "../../lib/sessionBinding.js";
import type { Terms } from "./store.js";
import { agentTerms, sessionTerms, termsMisfit } from "./terms.js";

const terms = (o: Partial<Terms> = {}): Terms => ({
  accept_risks: [],
  shield: false,
  policies: { block_risks: [] },
  ...o,
});
const session = (o: { accept_risks?: string[]; shield?: boolean; policies?: string[] } = {}) =>
  sessionTerms({
    fee: feeTermsOfSchedule2(),
    risk_terms: { accept_risks: [], shield: false, policies: [], ...o },
  });

describe("agentTerms: what the agent's trades pay now, and its risk terms", () => {
  it("shows one major rate, the owner's volume tier, and other_bps; Shield adds its 10 bps to both", () => {
    expect(agentTerms(terms(), 0)).toEqual({
      fee_schedule: 2,
      fees: { major_max_bps: 25, major_min_bps: 25, other_bps: 50 },
      accept_risks: [],
      shield: false,
      policies: { block_risks: [] },
    });
    expect(agentTerms(terms({ shield: true }), 150_000).fees).toEqual({
      major_max_bps: 30,
      major_min_bps: 30,
      other_bps: 60,
    });
    expect(agentTerms(terms(), 10_000_000).fees.major_max_bps).toBe(10);
  });
});

describe("sessionTerms: the attached session's binding in the same shape", () => {
  it("shows the binding's major range and other rate, Shield's bps on top when it binds Shield", () => {
    expect(session({ accept_risks: ["HONEYPOT"], shield: true, policies: ["block_severe"] })).toEqual({
      fee_schedule: 2,
      fees: { major_max_bps: 35, major_min_bps: 20, other_bps: 60 },
      accept_risks: ["HONEYPOT"],
      shield: true,
      policies: { block_risks: [], shield_policies: ["block_severe"] },
    });
    expect(session().fees).toEqual({ major_max_bps: 25, major_min_bps: 10, other_bps: 50 });
  });
});

describe("termsMisfit: an agent's terms against its session's (OUTSIDE_SESSION names the term)", () => {
  it("fits equal terms, and narrower ones: fewer accepted risks, codes the agent blocks, any volume tier", () => {
    expect(termsMisfit(agentTerms(terms(), 0), session())).toBeNull();
    expect(termsMisfit(agentTerms(terms({ accept_risks: ["A"] }), 0), session({ accept_risks: ["A", "B"] }))).toBe(
      null,
    );
    expect(termsMisfit(agentTerms(terms({ policies: { block_risks: ["B"] } }), 0), session())).toBeNull();
    expect(termsMisfit(agentTerms(terms({ shield: true }), 20_000_000), session({ shield: true }))).toBeNull();
  });

  it("refuses a risk the agent accepts that the session does not, naming it", () => {
    expect(termsMisfit(agentTerms(terms({ accept_risks: ["A", "C"] }), 0), session({ accept_risks: ["A"] }))).toBe(
      "accept_risks: the agent accepts C, which the session does not (it accepts A)",
    );
    expect(termsMisfit(agentTerms(terms({ accept_risks: ["A"] }), 0), session())).toBe(
      "accept_risks: the agent accepts A, which the session does not (it accepts none)",
    );
  });

  it("refuses Shield on where the session allows no Shield fee, and off where the session binds it", () => {
    expect(termsMisfit(agentTerms(terms({ shield: true }), 0), session())).toBe(
      "shield: the agent asks for Shield and would pay its fee; the session's binding allows no Shield fee",
    );
    expect(termsMisfit(agentTerms(terms(), 0), session({ shield: true }))).toBe(
      "shield: the session binds Shield; the agent's terms turn it off",
    );
  });

  it("refuses fees the agent's trades would pay outside the binding's", () => {
    const narrow = { ...session(), fees: { major_max_bps: 20, major_min_bps: 10, other_bps: 50 } };
    expect(termsMisfit(agentTerms(terms(), 0), narrow)).toBe(
      "fees: the agent's major trades pay 25 bps; the session allows 10 to 20 bps",
    );
    expect(termsMisfit(agentTerms(terms(), 100_000), narrow)).toBeNull();
    const other = { ...session(), fees: { major_max_bps: 25, major_min_bps: 10, other_bps: 40 } };
    expect(termsMisfit(agentTerms(terms(), 0), other)).toBe(
      "fees: the agent's other trades pay 50 bps; the session allows 40 bps",
    );
  });
});
