/** A treasury week: Monday 00:00 UTC (start, inclusive) to the next Monday 00:00 UTC (end, exclusive). */
export type Week = { start: number; end: number; label: string };

export const WEEK_S = 7 * 86_400;
/** 1970-01-05 00:00 UTC, the first Monday of the Unix epoch. */
const FIRST_MONDAY = 4 * 86_400;

/** The week holding unix second `ts`. */
export function weekOf(ts: number): Week {
  const start = FIRST_MONDAY + Math.floor((ts - FIRST_MONDAY) / WEEK_S) * WEEK_S;
  return { start, end: start + WEEK_S, label: isoWeekLabel(start) };
}

export const weekAfter = (w: Week): Week => weekOf(w.end);

/** ISO 8601 week of a Monday, e.g. "2026-W48": the week belongs to the year of its Thursday. */
function isoWeekLabel(monday: number): string {
  const thursday = new Date((monday + 3 * 86_400) * 1000);
  const year = thursday.getUTCFullYear();
  const jan1 = Date.UTC(year, 0, 1) / 1000;
  const n = Math.floor((monday + 3 * 86_400 - jan1) / WEEK_S) + 1;
  return `${year}-W${String(n).padStart(2, "0")}`;
}
