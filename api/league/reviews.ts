/**
 * The operator's reviews of flags (issue 29 point 3) in the app store: `npm run league:review`
 * records one (scripts/league-review.ts), the prize board reads a season's reviews and applies them
 * (lib/league/review), and publishes them with the season's books for `league:verify`.
 *
 * A review is of a flag as the standings serve it: the season's board not yet decided (a decided
 * season's record is final), the entry's rule a flag (or a flag already reviewed, which a later
 * review corrects). The table is append-only.
 */
import { NEVER_REVIEWED, reviewedReason, type Review, type ReviewVerdict } from "../../lib/league/review.js";
import type { Db } from "../ports/store/db.js";
import { unpackJson } from "../../lib/packedJson.js";

/** A review the store refuses, with why (the script prints it and exits 1). */
export class ReviewRefused extends Error {}

type ReviewRow = {
  id: string;
  season: number;
  entry_id: string;
  rule: string;
  verdict: ReviewVerdict;
  flag_reason: string;
  reason: string;
  by_name: string;
  at: string;
};
const reviewOfRow = (r: ReviewRow): Review => ({
  id: Number(r.id),
  season: Number(r.season),
  entry_id: r.entry_id,
  rule: r.rule,
  verdict: r.verdict,
  flag_reason: r.flag_reason,
  reason: r.reason,
  by: r.by_name,
  at: Number(r.at),
});

/** Every review recorded for season `n`, in the order recorded. */
export async function seasonReviews(db: Db, n: number): Promise<Review[]> {
  const rows = await db.query<ReviewRow>(
    "SELECT id::text AS id, season, entry_id, rule, verdict, flag_reason, reason, by_name, at::text AS at " +
      "FROM app.league_reviews WHERE season = $1 ORDER BY id",
    [n],
  );
  return rows.map(reviewOfRow);
}

type ServedRule = { rule: string; status: string; reason: string; reviewed: boolean };
type ServedRow = { entry_id: string; eligibility: { rules: ServedRule[] } | null };

/** The served prize boards of seasons not decided (the standings worker's last answers), by season. */
async function openBoards(db: Db): Promise<Map<number, ServedRow[]>> {
  const rows = await db.query<{ key: string; answer: Buffer }>(
    "SELECT a.key, a.answer FROM app.league_board_packed a WHERE a.key LIKE 'prize:%' AND NOT EXISTS " +
      "(SELECT 1 FROM app.league_results r WHERE r.board = 'prize' AND 'prize:' || r.season = a.key)",
  );
  const read = rows.map(
    async (r) =>
      [Number(r.key.slice("prize:".length)), (await unpackJson<{ rows: ServedRow[] }>(r.answer)).rows] as const,
  );
  return new Map(await Promise.all(read));
}

export type ReviewRequest = {
  entry_id: string;
  rule: string;
  verdict: string;
  reason: string;
  by: string;
  at: number;
  /** The season, when the entry's rule is flagged in more than one not yet decided. */
  season?: number;
};

/** The season whose served flag the request reviews, and that flag's reason as first raised. */
async function flagOf(db: Db, q: ReviewRequest): Promise<{ season: number; flag_reason: string }> {
  const boards = await openBoards(db);
  if (q.season !== undefined && !boards.has(q.season)) {
    const [done] = await db.query("SELECT 1 FROM app.league_results WHERE season = $1 AND board = 'prize'", [q.season]);
    throw new ReviewRefused(
      done
        ? `season ${q.season} is decided: its record is final and no review changes it`
        : `season ${q.season} has no prize standings served yet`,
    );
  }
  const found: { season: number; rule: ServedRule }[] = [];
  for (const [season, rows] of boards) {
    if (q.season !== undefined && season !== q.season) continue;
    const rule = rows.find((r) => r.entry_id === q.entry_id)?.eligibility?.rules.find((r) => r.rule === q.rule);
    if (rule) found.push({ season, rule });
  }
  if (!found.length)
    throw new ReviewRefused(
      `entry ${q.entry_id} has no rule ${q.rule} in the prize standings of a season not yet decided`,
    );
  const flagged = found.filter((f) => f.rule.status === "flag" || f.rule.reviewed);
  if (!flagged.length)
    throw new ReviewRefused(
      `rule ${q.rule} of entry ${q.entry_id} is ` +
        `${found.map((f) => `${f.rule.status} in season ${f.season}`).join(", ")}` +
        ": only a flag is reviewed",
    );
  if (flagged.length > 1)
    throw new ReviewRefused(
      `rule ${q.rule} of entry ${q.entry_id} is flagged in seasons ${flagged.map((f) => f.season).join(", ")}: ` +
        "name one with --season",
    );
  const { season, rule } = flagged[0]!;
  if (!rule.reviewed) return { season, flag_reason: rule.reason };
  // Reviewed already: the flag is the one its applied review names (a later review corrects it).
  const applied = (await seasonReviews(db, season)).find(
    (r) => r.entry_id === q.entry_id && r.rule === q.rule && reviewedReason(r) === rule.reason,
  );
  if (!applied)
    throw new ReviewRefused(`the served rule ${q.rule} of entry ${q.entry_id} names no recorded review; try again`);
  return { season, flag_reason: applied.flag_reason };
}

/**
 * Records the operator's verdict on an entry's flagged rule, append-only. Refuses CONFIRMED,
 * SANCTIONS and PAYABLE (never reviewed), a rule that is not a flag, a decided season, a verdict
 * other than pass or fail, and an empty reason or operator.
 */
export async function recordReview(db: Db, q: ReviewRequest): Promise<Review> {
  if (q.rule in NEVER_REVIEWED)
    throw new ReviewRefused(`${q.rule} can never be reviewed away: ${NEVER_REVIEWED[q.rule]}`);
  if (q.verdict !== "pass" && q.verdict !== "fail")
    throw new ReviewRefused(`the verdict is pass or fail, not ${JSON.stringify(q.verdict)}`);
  if (!q.reason.trim()) throw new ReviewRefused("a review says why: the reason is empty");
  if (!q.by.trim()) throw new ReviewRefused("a review names its operator: set LEAGUE_OPERATOR");
  const { season, flag_reason } = await flagOf(db, q);
  // Not once the season is decided, even by a decision made since the served answer was read.
  const [row] = await db.query<ReviewRow>(
    "INSERT INTO app.league_reviews (season, entry_id, rule, verdict, flag_reason, reason, by_name, at) " +
      "SELECT $1, $2, $3, $4, $5, $6, $7, $8 WHERE NOT EXISTS (SELECT 1 FROM app.league_results WHERE " +
      "season = $1 AND board = 'prize') RETURNING id::text AS id, season, entry_id, rule, verdict, flag_reason, " +
      "reason, by_name, at::text AS at",
    [season, q.entry_id, q.rule, q.verdict, flag_reason, q.reason.trim(), q.by.trim(), q.at],
  );
  if (!row) throw new ReviewRefused(`season ${season} is decided: its record is final and no review changes it`);
  return reviewOfRow(row);
}
