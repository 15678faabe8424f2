import { calendarAt, season as seasonAt } from "../../lib/league/calendar.js";
import { PRIZE_SPLIT_BPS } from "../../lib/league/rules.js";
import { reserveBefore, type PayoutBook } from "./reserve.js";
import { leagueRules } from "./rules.js";
import { seasonSummary } from "./seasons.js";
import { boardOf, entrantsOf, nowS, type ReadDeps, type Reading } from "./standings.js";

/** The current season's estimate of the reserve and the budget (GET league `reserve.estimate`). */
async function estimate(r: Reading) {
  const cal = calendarAt(nowS(r));
  if (cal.current.status !== "open")
    return {
      status: "pending" as const,
      why: "no season is playing",
      reserve_before: (await reserveBefore(r.db, cal.next.number)).toString(),
    };
  const { body } = await boardOf(r, cal.current.number, "prize");
  const l = body.ledger;
  const outcome = body.outcome;
  if (!l) return { status: "pending" as const, why: "no ledger yet" };
  const status: "estimate" | "pending" | "incomplete" =
    l.status === "incomplete" ? "incomplete" : outcome && !outcome.pays ? "pending" : "estimate";
  return {
    status,
    ...(status !== "estimate" ? { why: l.why ?? outcome?.why ?? null } : {}),
    reserve_before: l.reserve_before,
    gain_so_far: l.gain,
    reserve: l.reserve,
    budget: l.budget,
    shares: l.shares,
    cap: l.cap,
    ceiling: l.ceiling,
    kept_staked: l.kept_staked,
    cap_usd: l.cap_usd,
    orbio_usd: l.orbio_usd,
    mark_ts: l.mark_ts,
  };
}

/** The reserve after the last stored payout book ("0" before the first). */
async function reserveHead(d: ReadDeps) {
  const [r] = await d.db.query<{ ledger: string }>(
    "SELECT ledger FROM app.league_ledgers ORDER BY season DESC LIMIT 1",
  );
  return r ? (JSON.parse(r.ledger) as PayoutBook).reserve_after : "0";
}

/** GET league: the season playing, the schedule, the reserve, the rules and the last decided seasons. */
export async function league(r: Reading) {
  const cal = calendarAt(nowS(r));
  const n = cal.current.number;
  // The last five decided seasons, read as such (not by walking the whole calendar).
  const decidedSeasons = await r.db.query<{ season: number }>(
    "SELECT season FROM app.league_results WHERE board = 'prize' ORDER BY season DESC LIMIT 5",
  );
  const past = await Promise.all(decidedSeasons.map((row) => seasonSummary(r, Number(row.season))));
  return {
    season: cal.current,
    next_season: cal.next,
    entrants: await entrantsOf(r, "prize", n),
    practice_entrants: await entrantsOf(r, "practice", n),
    schedule: [0, 1, 2, 3].map((k) => {
      const s = seasonAt(cal.next.number + k, nowS(r));
      return { number: s.number, name: s.name, starts_at: s.starts_at, ends_at: s.ends_at };
    }),
    reserve: {
      on: r.config.league.reserveWallet !== null,
      agent_id: r.config.league.reserveAgent,
      reserve_atoms: await reserveHead(r),
      cap_usd: r.config.league.prizeCapUsd,
      estimate: await estimate(r),
    },
    rules: leagueRules(r.config),
    past,
    now: nowS(r),
  };
}

/** GET league/reserve: every season's payout book (newest first) and the current estimate. */
export async function reserve(r: Reading) {
  const rows = await r.db.query<{ season: number; ledger: string; settled_at: string | null }>(
    "SELECT season, ledger, settled_at::text AS settled_at FROM app.league_ledgers ORDER BY season DESC",
  );
  return {
    on: r.config.league.reserveWallet !== null,
    agent_id: r.config.league.reserveAgent,
    rows: rows.map((row) => ({ season: row.season, ...(JSON.parse(row.ledger) as PayoutBook) })),
    estimate: await estimate(r),
    rules: {
      split_bps: PRIZE_SPLIT_BPS,
      half_gain_to_reserve: true,
      prize_cap_usd: r.config.league.prizeCapUsd,
      ceiling_seasons: r.config.league.ceilingSeasons,
      wallet: r.config.league.reserveWallet,
    },
  };
}
