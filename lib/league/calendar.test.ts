import { describe, expect, it } from "vitest";
import { calendarAt, LEAGUE_EPOCH_S, season, seasonNumberAt, SEASON_S } from "./calendar.js";

describe("the league's calendar", () => {
  it("runs two-week seasons from Monday 00:00 UTC to Monday 00:00 UTC", () => {
    for (const n of [1, 2, 24, 100]) {
      const s = season(n, 0);
      expect(new Date(s.starts * 1000).getUTCDay()).toBe(1);
      expect(new Date(s.ends * 1000).getUTCDay()).toBe(1);
      expect(new Date(s.starts * 1000).toISOString()).toMatch(/T00:00:00\.000Z$/);
      expect(s.ends - s.starts).toBe(14 * 86_400);
      expect(s.starts_at).toBe(new Date(s.starts * 1000).toISOString());
    }
    expect(season(1, 0).starts_at).toBe("2026-01-05T00:00:00.000Z");
  });

  it("places an instant in exactly one season: a start belongs to its season, an end to the next", () => {
    const s = season(24, 0);
    expect(s.starts_at).toBe("2026-11-23T00:00:00.000Z");
    expect(seasonNumberAt(s.starts)).toBe(24);
    expect(seasonNumberAt(s.ends - 1)).toBe(24);
    expect(seasonNumberAt(s.ends)).toBe(25);
    expect(seasonNumberAt(LEAGUE_EPOCH_S - 1)).toBe(0);
  });

  it("says where a season is now: upcoming, open with its day and seconds left, closed", () => {
    const s = season(24, 0);
    expect(season(24, s.starts - 10)).toMatchObject({ status: "upcoming", seconds_left: 10, day: null });
    expect(season(24, s.starts)).toMatchObject({ status: "open", day: 1, seconds_left: SEASON_S });
    expect(season(24, s.starts + 13 * 86_400 + 5)).toMatchObject({ status: "open", day: 14, seconds_left: 86_400 - 5 });
    expect(season(24, s.ends)).toMatchObject({ status: "closed", day: null, seconds_left: 0 });
    expect(() => season(0, 0)).toThrow(RangeError);
  });

  it("enters into the next season while one plays; before the league, into the first", () => {
    const wed = Date.UTC(2026, 10, 25, 12) / 1000;
    expect([calendarAt(wed).current.number, calendarAt(wed).next.number]).toEqual([24, 25]);
    expect([
      calendarAt(LEAGUE_EPOCH_S - 86_400).current.number,
      calendarAt(LEAGUE_EPOCH_S - 86_400).next.number,
    ]).toEqual([1, 1]);
  });
});
