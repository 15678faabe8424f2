import { describe, expect, it } from "vitest";
import { markStale } from "./stale.js";

const utc = (y: number, m: number, d: number, h: number, min = 0) => Date.UTC(y, m - 1, d, h, min) / 1000;

describe("markStale: one rule for every reader of a feed", () => {
  it("a crypto feed is stale once it missed its heartbeat (and the grace for the round to land)", () => {
    const updatedAt = utc(2026, 3, 4, 15);
    const limit = 24 * 3_600 + 10 * 60; // the feeds' 24 h heartbeat, and 10 minutes for the round to land
    expect(markStale({ updatedAt, now: updatedAt + limit, stock: false })).toBe(false);
    expect(markStale({ updatedAt, now: updatedAt + limit + 1, stock: false })).toBe(true);
  });

  it("a stock feed's Friday close is fresh all weekend, stale a heartbeat of session later", () => {
    const fridayClose = utc(2026, 3, 7, 0, 30); // Friday 6 March, 19:30 EST
    const sundayEvening = utc(2026, 3, 8, 23); // Sunday 19:00 EDT, 46.5 h later, the session still shut
    expect(markStale({ updatedAt: fridayClose, now: sundayEvening, stock: true })).toBe(false);
    expect(markStale({ updatedAt: fridayClose, now: sundayEvening, stock: false })).toBe(true);
    // Half an hour on Friday plus Sunday 20:00 EDT to Monday 19:40 EDT is 24 h 10 min of session.
    expect(markStale({ updatedAt: fridayClose, now: utc(2026, 3, 9, 23, 40), stock: true })).toBe(false);
    expect(markStale({ updatedAt: fridayClose, now: utc(2026, 3, 9, 23, 41), stock: true })).toBe(true);
  });

  it("a stock feed silent since Wednesday is stale on Saturday, and any feed a week old is", () => {
    const wednesday = utc(2026, 3, 4, 15); // Wednesday 10:00 EST: 58 h of session before Friday's close
    expect(markStale({ updatedAt: wednesday, now: utc(2026, 3, 7, 17), stock: true })).toBe(true);
    expect(markStale({ updatedAt: wednesday, now: wednesday + 8 * 86_400, stock: true })).toBe(true);
  });
});
