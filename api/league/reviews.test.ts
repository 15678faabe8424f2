import { beforeAll, describe, expect, it } from "vitest";
import { openPglite, type Db } from "../ports/store/db.js";
import { migrate } from "../ports/store/migrations.js";
import { recordReview, ReviewRefused, seasonReviews, type ReviewRequest } from "./reviews.js";
import { packJson } from "../../lib/packedJson.js";
import { applyReviews, reviewedReason } from "../../lib/league/review.js";
import type { Rule } from "../../lib/league/rules.js";
import { operatorName, parseReviewArgs } from "../../scripts/league-review.js";

/**
 * The operator's review as `npm run league:review` records it, on a real PGlite store: of a flag
 * the standings serve for a season not decided, append-only; CONFIRMED and SANCTIONS refused.
 */
const COPY = "100.00 % of its season volume (3 of 3 trades) repeats entry le_b's trades: held for review";
const rule = (name: string, status: Rule["status"], reason = `${name} ${status}`): Rule => ({
  rule: name,
  name,
  status,
  reason,
  reviewed: false,
});
const rules = (): Rule[] => [
  rule("CONFIRMED", "pass"),
  rule("SANCTIONS", "flag", "the sanctions list could not be read"),
  rule("ACTIVE", "pass"),
  rule("COPY_TRADING", "flag", COPY),
  rule("PAYABLE", "flag", "the partner vault could not be read"),
];
let db: Db;
/** Serves season `n`'s prize board with `entry`'s rules, as the standings worker writes it. */
const serve = async (n: number, entry: string, r: Rule[]) =>
  db.query(
    "INSERT INTO app.league_board_packed (key, answer, computed_at) VALUES ($1, $2, 0) ON CONFLICT (key) DO " +
      "UPDATE SET answer = excluded.answer",
    [`prize:${n}`, await packJson({ rows: [{ entry_id: entry, eligibility: { rules: r } }] })],
  );
/** Each case reviews its own entry in its own seasons (one store for all). */
let entry = "le_a";
const ask = (o: Partial<ReviewRequest> = {}) =>
  recordReview(db, {
    entry_id: entry,
    rule: "COPY_TRADING",
    verdict: "pass",
    reason: "  a public signal both follow ",
    by: "alice",
    at: 1_000,
    ...o,
  });
const refused = async (o: Partial<ReviewRequest>, why: RegExp) => {
  const err = await ask(o).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ReviewRefused);
  expect((err as Error).message).toMatch(why);
};

beforeAll(async () => {
  db = await openPglite(`memory://${Math.random().toString(36).slice(2)}`);
  await migrate(db);
});

describe("league:review", () => {
  it("records a review of a served flag with who, when and why, and the board applies it", async () => {
    await serve(5, (entry = "le_a"), rules());
    const r = await ask();
    expect(r).toMatchObject({
      season: 5,
      entry_id: "le_a",
      rule: "COPY_TRADING",
      verdict: "pass",
      flag_reason: COPY,
      reason: "a public signal both follow",
      by: "alice",
      at: 1_000,
    });
    expect(await seasonReviews(db, 5)).toEqual([r]);
    const applied = applyReviews("le_a", rules(), [r]);
    expect(applied[3]).toMatchObject({ status: "pass", reviewed: true, reason: reviewedReason(r) });
    // Served reviewed, a later review corrects it: it reviews the same flag.
    await serve(5, entry, applied);
    const again = await ask({ verdict: "fail", reason: "the leader's owner pays the copier", at: 1_001 });
    expect(again.flag_reason).toBe(COPY);
    expect(applyReviews("le_a", rules(), await seasonReviews(db, 5))[3]).toMatchObject({ status: "fail" });
  });

  it("never reviews CONFIRMED, SANCTIONS or PAYABLE, and only reviews a flag", async () => {
    await serve(15, (entry = "le_b"), rules());
    await refused({ rule: "SANCTIONS" }, /^SANCTIONS can never be reviewed away: only the sanctions list/);
    await refused({ rule: "CONFIRMED" }, /^CONFIRMED can never be reviewed away: only the owner's signed statement/);
    await refused({ rule: "PAYABLE" }, /^PAYABLE can never be reviewed away/);
    await refused({ rule: "ACTIVE" }, /^rule ACTIVE of entry le_b is pass in season 15: only a flag is reviewed$/);
    await refused({ entry_id: "le_z" }, /^entry le_z has no rule COPY_TRADING/);
    await refused({ verdict: "maybe" }, /^the verdict is pass or fail/);
    await refused({ reason: "  " }, /the reason is empty/);
    await refused({ by: "" }, /names its operator/);
    // The store refuses them too, whoever writes it.
    await expect(
      db.query(
        "INSERT INTO app.league_reviews (season, entry_id, rule, verdict, flag_reason, reason, by_name, at) VALUES " +
          "(15, 'le_b', 'SANCTIONS', 'pass', 'x', 'y', 'z', 1)",
      ),
    ).rejects.toThrow();
    expect(await seasonReviews(db, 15)).toEqual([]);
  });

  it("is append-only, refuses a decided season, and asks for the season when two are flagged", async () => {
    await serve(25, (entry = "le_c"), rules());
    const r = await ask();
    await expect(db.query("UPDATE app.league_reviews SET verdict = 'fail' WHERE id = $1", [r.id])).rejects.toThrow(
      /append-only/,
    );
    await expect(db.query("DELETE FROM app.league_reviews")).rejects.toThrow(/append-only/);
    await serve(26, entry, rules());
    await refused({}, /^rule COPY_TRADING of entry le_c is flagged in seasons 25, 26: name one with --season$/);
    expect((await ask({ season: 26 })).season).toBe(26);
    await db.query(
      "INSERT INTO app.league_results (season, board, decided_at, valued_at, block, answer) VALUES (26, 'prize', 1, " +
        "1, 1, '{}')",
    );
    await refused({ season: 26 }, /^season 26 is decided: its record is final/);
    await refused({ season: 27 }, /^season 27 has no prize standings served yet$/);
    // Season 26 decided: the flag left to review is season 25's.
    expect((await ask({ verdict: "fail" })).season).toBe(25);
    expect((await seasonReviews(db, 25)).map((x) => x.verdict)).toEqual(["pass", "fail"]);
  });
});

describe("npm run league:review's arguments", () => {
  it("takes entry, rule, verdict and reason, an optional season, and names the operator", () => {
    expect(parseReviewArgs(["le_1", "copy_trading", "pass", "why"])).toEqual({
      entry_id: "le_1",
      rule: "COPY_TRADING",
      verdict: "pass",
      reason: "why",
    });
    expect(parseReviewArgs(["--season", "7", "le_1", "PRICES", "fail", "why"])).toMatchObject({ season: 7 });
    for (const bad of [[], ["le_1", "PRICES", "pass"], ["le_1", "PRICES", "pass", "a", "b"], ["--season", "x"]])
      expect(parseReviewArgs(bad)).toBeNull();
    expect(operatorName({ LEAGUE_OPERATOR: " ann " })).toBe("ann");
    expect(operatorName({})).not.toBe("");
  });
});
