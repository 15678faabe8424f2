import { describe, expect, it } from "vitest";
import { stockMarketOpen, stockMarketSecondsBetween } from "./marketHours.js";

/** Unix seconds of a UTC wall time; New York times below are converted by hand (EST = UTC-5, EDT = UTC-4). */
const utc = (y: number, m: number, d: number, h: number, min = 0, s = 0) => Date.UTC(y, m - 1, d, h, min, s) / 1000;

describe("stockMarketOpen: Sunday 20:00 to Friday 20:00, New York", () => {
  it("closes at Friday 20:00, not a minute before (winter and summer offsets)", () => {
    // Friday 6 March 2026, EST.
    expect(stockMarketOpen(utc(2026, 3, 7, 0, 59))).toBe(true); // 19:59 EST
    expect(stockMarketOpen(utc(2026, 3, 7, 1, 0))).toBe(false); // 20:00 EST
    // Friday 10 July 2026, EDT: the same local times are an hour earlier in UTC.
    expect(stockMarketOpen(utc(2026, 7, 10, 23, 59))).toBe(true); // 19:59 EDT
    expect(stockMarketOpen(utc(2026, 7, 11, 0, 0))).toBe(false); // 20:00 EDT
    expect(stockMarketOpen(utc(2026, 7, 11, 0, 30))).toBe(false); // 20:30 EDT (19:30 if EST were assumed)
  });

  it("opens at Sunday 20:00 on the days daylight saving starts and ends", () => {
    // Sunday 8 March 2026: clocks went forward at 02:00, so 20:00 is EDT.
    expect(stockMarketOpen(utc(2026, 3, 8, 23, 59))).toBe(false); // 19:59 EDT
    expect(stockMarketOpen(utc(2026, 3, 9, 0, 0))).toBe(true); // 20:00 EDT (19:00 if EST were assumed)
    // Sunday 1 November 2026: clocks went back at 02:00, so 20:00 is EST.
    expect(stockMarketOpen(utc(2026, 11, 2, 0, 30))).toBe(false); // 19:30 EST (20:30 if EDT were assumed)
    expect(stockMarketOpen(utc(2026, 11, 2, 1, 0))).toBe(true); // 20:00 EST
  });

  it("is closed all Saturday and open through the week", () => {
    expect(stockMarketOpen(utc(2026, 3, 7, 17))).toBe(false); // Saturday 12:00 EST
    expect(stockMarketOpen(utc(2026, 3, 8, 5))).toBe(false); // Sunday 00:00 EST
    expect(stockMarketOpen(utc(2026, 3, 11, 8))).toBe(true); // Wednesday 04:00 EDT
  });
});

describe("stockMarketSecondsBetween", () => {
  it("counts only open time across a weekend, exactly at the edges", () => {
    // Friday 19:00 EST to Sunday 21:00 EDT: an hour before the close, an hour after the open.
    expect(stockMarketSecondsBetween(utc(2026, 3, 7, 0), utc(2026, 3, 9, 1))).toBe(7_200);
    // The same across the autumn change: 51 hours elapse, 2 are open.
    expect(stockMarketSecondsBetween(utc(2026, 10, 30, 23), utc(2026, 11, 2, 2))).toBe(7_200);
    // Half a minute either side of Friday's close.
    expect(stockMarketSecondsBetween(utc(2026, 3, 7, 0, 59, 30), utc(2026, 3, 7, 1, 0, 30))).toBe(30);
  });

  it("gives a whole trading week as 120 hours", () => {
    // Sunday 15 February 20:00 EST to Friday 20 February 20:00 EST, no clock change between.
    expect(stockMarketSecondsBetween(utc(2026, 2, 16, 1), utc(2026, 2, 21, 1))).toBe(120 * 3_600);
    expect(stockMarketSecondsBetween(utc(2026, 2, 16, 1), utc(2026, 2, 16, 1))).toBe(0);
  });
});
