/**
 * The league's calendar (SPEC "League"): seasons of two weeks, Monday 00:00 UTC to Monday 00:00
 * UTC, numbered from the first season's start. Pure: the API, the settler, the verify script and
 * the SDK read the same seasons.
 */
export const SEASON_S = 14 * 86_400;
const DAY_S = 86_400;
/** Season 1 starts Monday 2026-01-05 00:00 UTC. */
export const LEAGUE_EPOCH_S = Date.UTC(2026, 0, 5) / 1000;

export type SeasonStatus = "upcoming" | "open" | "closed";

export type Season = {
  number: number;
  name: string;
  starts_at: string;
  ends_at: string;
  /** Unix seconds: play counts from `starts` (inclusive) to `ends` (exclusive). */
  starts: number;
  ends: number;
  days: number;
  /** Where the season is now: `upcoming` before its start, `open` while it plays, `closed` after. */
  status: SeasonStatus;
  /** The same as words for a page: `starts in`, `playing`, `ended`. */
  state: "starts in" | "playing" | "ended";
  seconds_left: number;
  /** Day of play (1 to 14) while open, else null. */
  day: number | null;
};

/** The season holding unix second `t` (0 before the first season). */
export const seasonNumberAt = (t: number): number =>
  t < LEAGUE_EPOCH_S ? 0 : Math.floor((t - LEAGUE_EPOCH_S) / SEASON_S) + 1;

export function season(n: number, nowS: number): Season {
  if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`no season ${n}`);
  const starts = LEAGUE_EPOCH_S + (n - 1) * SEASON_S;
  const ends = starts + SEASON_S;
  const status: SeasonStatus = nowS < starts ? "upcoming" : nowS < ends ? "open" : "closed";
  return {
    number: n,
    name: `Season ${n}`,
    starts_at: new Date(starts * 1000).toISOString(),
    ends_at: new Date(ends * 1000).toISOString(),
    starts,
    ends,
    days: SEASON_S / DAY_S,
    status,
    state: status === "upcoming" ? "starts in" : status === "open" ? "playing" : "ended",
    seconds_left: status === "upcoming" ? starts - nowS : status === "open" ? ends - nowS : 0,
    day: status === "open" ? Math.floor((nowS - starts) / DAY_S) + 1 : null,
  };
}

/**
 * The season playing now (or the first, before the league began) and the next one: entries made now play from `next`.
 */
export function calendarAt(nowS: number): { current: Season; next: Season } {
  const n = Math.max(1, seasonNumberAt(nowS));
  const current = season(n, nowS);
  return { current, next: season(current.status === "upcoming" ? n : n + 1, nowS) };
}
