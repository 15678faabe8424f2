import { horizontalBars, lineChart, type HBar, type Line } from "../../lib/svgChart.js";
import type { BookPoint } from "../../lib/league/book.js";

/** How many of the board's top rows the profit chart draws (more lines than this read as a tangle). */
export const TOP_CURVES = 5;

/** A prize row as the chart reads it. */
type CurveRow = { entry_id: string; label: string; rank: number; profit_usd: number | null };

/**
 * The top rows' profit over the season: each day's 00:00 UTC point of the board's computation, then
 * the row's own profit at `valuedAt` (so a line ends where the table's profit is).
 */
export function profitLines(rows: CurveRow[], curves: Record<string, BookPoint[]>, valuedAt: number | null): Line[] {
  return [...rows]
    .sort((a, b) => a.rank - b.rank)
    .slice(0, TOP_CURVES)
    .map((r) => {
      const points = (curves[r.entry_id] ?? []).map((p) => ({ x: p.ts, y: p.profit_usd }));
      const last = points[points.length - 1];
      if (valuedAt !== null && r.profit_usd !== null && (!last || last.x < valuedAt))
        points.push({ x: valuedAt, y: r.profit_usd });
      return { name: r.label, key: r.entry_id, points };
    });
}

const day = (ts: number) => new Date(ts * 1000).toISOString().slice(0, 10);
const money = (v: number) => `$${v}`;

/** The profit chart: a line per top entrant, a point per day. */
export function profitChart(lines: Line[], season: number): string {
  return lineChart(
    {
      id: "profit-chart",
      title: `Season ${season}: the top ${lines.length} entrants' profit (USD) over the season`,
      desc: lines
        .map((l) => `${l.name}: ${l.points.map((p) => `${day(p.x)} ${p.y.toFixed(2)}`).join(", ") || "no points"}`)
        .join("; "),
    },
    lines,
    { x: day, y: money },
  );
}

/** The reserve against its cap: each amount in partner tokens, an unknown one drawn empty with why. */
export function reserveChart(bars: HBar[]): string {
  return horizontalBars(
    {
      id: "reserve-chart",
      title: "The prize reserve against its cap (partner tokens)",
      desc: bars.map((b) => `${b.label}: ${b.text}`).join("; "),
    },
    bars,
  );
}
