import { feeFor } from "../../lib/fees.js";
import type { HostedSession } from "./deps.js";
import type { Terms } from "./store.js";

/**
 * SPEC "Hosted agent" `terms` and `session_terms`, one shape: the fee schedule, the fees
 * {major_max_bps, major_min_bps, other_bps} (Shield's bps included when Shield is on) and the
 * risk terms. A session's policies are Shield's (`shield_policies`); it blocks no code itself.
 */
export type TermsView = {
  fee_schedule: number;
  fees: { major_max_bps: number; major_min_bps: number; other_bps: number };
  accept_risks: string[];
  shield: boolean;
  policies: { block_risks: string[]; shield_policies?: string[] };
};

/**
 * The agent's terms as its trades pay them now (lib/fees feeFor, as a key's trade is charged): a
 * major trade one rate, the owner wallet's 30-day volume tier (so major_min_bps = major_max_bps),
 * other trades other_bps, each with Shield's bps when the agent asks for Shield.
 */
export function agentTerms(t: Terms, volume30dUsd: number): TermsView {
  const major = feeFor({ feeClass: "major", volume30dUsd, shield: t.shield }).bps;
  const other = feeFor({ feeClass: "other", volume30dUsd, shield: t.shield }).bps;
  return {
    fee_schedule: 2,
    fees: { major_max_bps: major, major_min_bps: major, other_bps: other },
    accept_risks: t.accept_risks,
    shield: t.shield,
    policies: { block_risks: t.policies.block_risks },
  };
}

/** The attached session's terms as its binding allows them (lib/sessionBinding allowedFeeBps: Shield's bps on top). */
export function sessionTerms(s: Pick<HostedSession, "fee" | "risk_terms">): TermsView {
  const add = s.risk_terms.shield ? s.fee.shield_add_bps : 0;
  return {
    fee_schedule: s.fee.schedule,
    fees: {
      major_max_bps: s.fee.major_max_bps + add,
      major_min_bps: s.fee.major_min_bps + add,
      other_bps: s.fee.other_bps + add,
    },
    accept_risks: s.risk_terms.accept_risks,
    shield: s.risk_terms.shield,
    policies: { block_risks: [], shield_policies: s.risk_terms.policies },
  };
}

const listed = (xs: string[]) => (xs.length ? xs.join(", ") : "none");

/**
 * Why the agent's terms are wider than its session's (OUTSIDE_SESSION), naming the term; null when
 * they fit. Wider: a risk the agent accepts that the session does not; a Shield setting other than
 * the session binds (on: a fee the binding does not allow; off: trading without the session's
 * Shield); a fee the agent's trades pay outside the binding's. Narrower is fine: the agent's own
 * accept_risks and block_risks hold its orders before the session is asked.
 */
export function termsMisfit(agent: TermsView, session: TermsView): string | null {
  const extra = agent.accept_risks.filter((r) => !session.accept_risks.includes(r));
  if (extra.length)
    return (
      `accept_risks: the agent accepts ${extra.join(", ")}, which the session does not ` +
      `(it accepts ${listed(session.accept_risks)})`
    );
  if (agent.shield && !session.shield)
    return "shield: the agent asks for Shield and would pay its fee; the session's binding allows no Shield fee";
  if (!agent.shield && session.shield) return "shield: the session binds Shield; the agent's terms turn it off";
  const a = agent.fees;
  const s = session.fees;
  if (a.major_min_bps < s.major_min_bps || a.major_max_bps > s.major_max_bps)
    return (
      `fees: the agent's major trades pay ${range(a.major_min_bps, a.major_max_bps)} bps; ` +
      `the session allows ${range(s.major_min_bps, s.major_max_bps)} bps`
    );
  if (a.other_bps !== s.other_bps)
    return `fees: the agent's other trades pay ${a.other_bps} bps; the session allows ${s.other_bps} bps`;
  return null;
}

const range = (lo: number, hi: number) => (lo === hi ? `${lo}` : `${lo} to ${hi}`);
