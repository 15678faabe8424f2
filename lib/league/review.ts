/**
 * The operator's review of a flag (issue 29 point 3), pure: `npm run league:review` records a
 * verdict on one entry's flagged rule in one season; the board applies it; `league:verify` applies
 * the published reviews with the same code.
 *
 * A review is bound to the flag as it stood: it applies only while the rule's reason is the one
 * the operator reviewed. New evidence (another trade off its marks, a larger copied share)
 * changes the reason, and the rule is a flag again until reviewed again.
 */
import type { Rule } from "./rules.js";

export type ReviewVerdict = "pass" | "fail";
export type Review = {
  id: number;
  season: number;
  entry_id: string;
  rule: string;
  verdict: ReviewVerdict;
  /** The flag's reason when reviewed. */
  flag_reason: string;
  /** Why the operator decided so. */
  reason: string;
  /** The operator's name. */
  by: string;
  /** Unix seconds. */
  at: number;
};

/** Rules whose flag no review can change, and why (SPEC: CONFIRMED and SANCTIONS cannot be reviewed away). */
export const NEVER_REVIEWED: Record<string, string> = {
  CONFIRMED: "only the owner's signed statement passes CONFIRMED",
  SANCTIONS:
    "only the sanctions list passes SANCTIONS: a listed address is never paid, and an unreadable list is read again",
  PAYABLE: "only the partner vault passes PAYABLE: its flag is a failed read, read again at the decision",
};

/** A reviewed rule's reason: the flag's reason, then the verdict, who, when and why. */
export const reviewedReason = (r: Pick<Review, "flag_reason" | "verdict" | "by" | "at" | "reason">) =>
  `${r.flag_reason}; reviewed ${r.verdict} by ${r.by} at ${new Date(r.at * 1000).toISOString()}: ${r.reason}`;

/** The latest of `reviews` (by time, then id) of this entry's rule whose flag is `flagReason`, or null. */
export function reviewOf(reviews: Review[], entry: string, rule: string, flagReason: string): Review | null {
  let best: Review | null = null;
  for (const r of reviews)
    if (r.entry_id === entry && r.rule === rule && r.flag_reason === flagReason)
      if (!best || r.at > best.at || (r.at === best.at && r.id > best.id)) best = r;
  return best;
}

/**
 * An entry's rules with its reviews applied: each reviewable flag with a review of that very flag
 * takes its verdict.
 */
export function applyReviews(entry: string, rules: Rule[], reviews: Review[]): Rule[] {
  if (!reviews.length) return rules;
  return rules.map((x) => {
    if (x.status !== "flag" || x.rule in NEVER_REVIEWED) return x;
    const r = reviewOf(reviews, entry, x.rule, x.reason);
    return r ? { ...x, status: r.verdict, reason: reviewedReason(r), reviewed: true } : x;
  });
}
