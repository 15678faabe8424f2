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

/**
 * How long after a season's end the settler waits for the operator's reviews (issue 29 review,
 * finding 3). A flag is not a verdict: a node that cannot trace flags LINKS on every entry, and
 * deciding at once would pay nothing for want of a review. So a season is not decided while an
 * entry that a review could still make eligible (each rule it does not pass is a flag a review may
 * change) has such a flag, until this long after its end; then it is decided with every flag left
 * as a fail (never a pass). Published as `rules.review.window_s`.
 */
export const REVIEW_WINDOW_S = 3 * 86_400;

type ReviewedRow = { entry_id: string; eligibility: { rules: Pick<Rule, "rule" | "status">[] } };

/** The flags a review could still turn into an eligible entry, as `<entry> <rule>`. */
export function openFlags(rows: ReviewedRow[]): string[] {
  return rows.flatMap((r) => {
    const open = r.eligibility.rules.filter((x) => x.status !== "pass");
    const reviewable = open.every((x) => x.status === "flag" && !(x.rule in NEVER_REVIEWED));
    return open.length && reviewable ? open.map((x) => `${r.entry_id} ${x.rule}`) : [];
  });
}

/**
 * Why a season that ended at `ends` waits for reviews at `now` (null: decide now): open flags
 * within REVIEW_WINDOW_S of the end.
 */
export function reviewHold(rows: ReviewedRow[], ends: number, now: number): string | null {
  const open = openFlags(rows);
  if (!open.length || now >= ends + REVIEW_WINDOW_S) return null;
  return (
    `${open.length} flag(s) open for review (${open.slice(0, 3).join(", ")}${open.length > 3 ? ", ..." : ""}); ` +
    `decided at ${new Date((ends + REVIEW_WINDOW_S) * 1000).toISOString()} at the latest, unreviewed flags as fails`
  );
}
