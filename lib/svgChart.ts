/**
 * Charts as SVG text, drawn on the server (issue 30 point 5), so the pages stay free of script. Each
 * chart is an image with a title and a description that says its numbers in words (the page's table
 * has them all); each mark carries its data (`data-series`, `data-label`, `data-value`) so a test
 * reads what is drawn. Every text is escaped here: labels are third-party (entry names) and the
 * pages insert the answer as markup.
 */

/** The text that names a chart: `id` makes its title's and description's ids unique on the page. */
export type ChartText = { id: string; title: string; desc: string };
export type BarGroup = { label: string; values: number[] };
export type HBar = { label: string; value: number | null; text: string };
export type Line = { name: string; key: string; points: { x: number; y: number }[] };

const W = 560;
const PLOT_H = 200;
const TOP = 12;
const LEFT = 64;
const RIGHT = 16;
const LEGEND_ROW = 18;
/** Dark enough on white for WCAG's 3:1 for graphics, and told apart by the legend's names too. */
const PALETTE = ["#1f5fa8", "#b8321f", "#2b7a2b", "#6f42a6", "#8a5a00", "#4d4d4d"];

/** Text and attribute values made inert: no markup, no attribute break-out. */
export const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const n1 = (v: number) => String(Math.round(v * 10) / 10);
/** A value as data: exact enough to compare with the table, no float noise. */
const datum = (v: number) => String(Math.round(v * 1e6) / 1e6);
const color = (i: number) => PALETTE[i % PALETTE.length]!;
/** An id made of letters, digits and dashes only (it lands in attributes and references). */
const safeId = (s: string) => s.replace(/[^A-Za-z0-9-]/g, "-");
/** A label cut for the chart (the table shows it whole). */
const cut = (s: string, n = 28) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** Round tick values spanning [lo, hi] (0 included), about `count` of them. */
export function ticks(lo: number, hi: number, count = 4): number[] {
  const min = Math.min(0, lo);
  const max = Math.max(0, hi);
  if (min === max) return [0, 1];
  const raw = (max - min) / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw)!;
  const out: number[] = [];
  for (let v = Math.floor(min / step) * step; v < max + step * 1e-9; v += step) out.push(Math.round(v / step) * step);
  if (out[out.length - 1]! < max) out.push(out[out.length - 1]! + step);
  return out;
}

/** The svg element around a chart's body: an image named by its title and described by its desc. */
function frame(t: ChartText, height: number, body: string): string {
  const id = safeId(t.id);
  return (
    `<svg class="chart" id="${id}" role="img" aria-labelledby="${id}-t ${id}-d" viewBox="0 0 ${W} ${height}" ` +
    `xmlns="http://www.w3.org/2000/svg"><title id="${id}-t">${esc(t.title)}</title>` +
    `<desc id="${id}-d">${esc(t.desc)}</desc>${body}</svg>`
  );
}

/** The y axis: grid lines and labels at `ys` ticks, mapped by `y`. */
function yAxis(ys: number[], y: (v: number) => number, text: (v: number) => string): string {
  return ys
    .map(
      (v) =>
        `<line x1="${LEFT}" x2="${W - RIGHT}" y1="${n1(y(v))}" y2="${n1(y(v))}" ` +
        `stroke="${v === 0 ? "#666" : "#ddd"}"/>` +
        `<text x="${LEFT - 6}" y="${n1(y(v) + 4)}" text-anchor="end" font-size="12" fill="#333">${esc(text(v))}</text>`,
    )
    .join("");
}

/** One legend row per series under the plot, from `top`. */
function legend(names: string[], top: number): string {
  return names
    .map((name, i) => {
      const y = top + i * LEGEND_ROW;
      return (
        `<rect x="${LEFT}" y="${y}" width="12" height="12" fill="${color(i)}"/>` +
        `<text x="${LEFT + 18}" y="${y + 11}" font-size="12" fill="#111">${esc(cut(name, 60))}</text>`
      );
    })
    .join("");
}

/** The plot's vertical scale over `values`: its ticks and the map from a value to a y. */
function scale(values: number[]) {
  const ys = ticks(Math.min(0, ...values), Math.max(0, ...values));
  const lo = ys[0]!;
  const hi = ys[ys.length - 1]!;
  return { ys, y: (v: number) => TOP + PLOT_H - ((v - lo) / (hi - lo)) * PLOT_H };
}

/** Labels under the plot: every k-th so that at most 8 show (the table names them all). */
function xLabels(labels: { x: number; text: string }[]): string {
  const k = Math.max(1, Math.ceil(labels.length / 8));
  return labels
    .filter((_, i) => i % k === 0 || i === labels.length - 1)
    .map(
      (l) =>
        `<text x="${n1(l.x)}" y="${TOP + PLOT_H + 16}" text-anchor="middle" font-size="12" fill="#333">` +
        `${esc(cut(l.text, 12))}</text>`,
    )
    .join("");
}

/**
 * Vertical bars, one per group, stacked by series (values below zero are drawn as zero: these are
 * amounts that came in). Each segment is a `rect.bar`, drawn even when zero, so a group has as many
 * as there are series.
 */
export function stackedBars(t: ChartText, series: string[], groups: BarGroup[], yText: (v: number) => string) {
  const totals = groups.map((g) => g.values.reduce((a, v) => a + Math.max(0, v), 0));
  const { ys, y } = scale(totals);
  const slot = (W - LEFT - RIGHT) / Math.max(1, groups.length);
  const barW = Math.min(48, slot * 0.7);
  const bars = groups.map((g, gi) => {
    const x = LEFT + gi * slot + (slot - barW) / 2;
    let base = 0;
    return g.values
      .map((v, si) => {
        const top = base + Math.max(0, v);
        const rect =
          `<rect class="bar" data-series="${esc(series[si] ?? "")}" data-label="${esc(g.label)}" ` +
          `data-value="${datum(v)}" x="${n1(x)}" y="${n1(y(top))}" width="${n1(barW)}" ` +
          `height="${n1(y(base) - y(top))}" fill="${color(si)}"/>`;
        base = top;
        return rect;
      })
      .join("");
  });
  const under = xLabels(groups.map((g, gi) => ({ x: LEFT + gi * slot + slot / 2, text: g.label })));
  const legendTop = TOP + PLOT_H + 28;
  const body = yAxis(ys, y, yText) + bars.join("") + under + legend(series, legendTop);
  return frame(t, legendTop + series.length * LEGEND_ROW + 4, body);
}

/**
 * Horizontal bars on one scale, each with its label above and its value's text beside. A bar whose
 * value is unknown (null) is drawn empty with `data-value=""`, its text saying why.
 */
export function horizontalBars(t: ChartText, bars: HBar[]) {
  const max = Math.max(0, ...bars.map((b) => b.value ?? 0)) || 1;
  const span = W - LEFT - RIGHT - 150;
  const row = 40;
  const body = bars
    .map((b, i) => {
      const top = TOP + i * row;
      const w = b.value === null ? 0 : (Math.max(0, b.value) / max) * span;
      return (
        `<text x="${LEFT}" y="${top + 10}" font-size="12" fill="#111">${esc(cut(b.label, 60))}</text>` +
        `<rect class="bar" data-label="${esc(b.label)}" data-value="${b.value === null ? "" : datum(b.value)}" ` +
        `x="${LEFT}" y="${top + 15}" width="${n1(w)}" height="16" fill="${color(i)}"/>` +
        `<text x="${n1(LEFT + w + 6)}" y="${top + 28}" font-size="12" fill="#333">${esc(b.text)}</text>`
      );
    })
    .join("");
  return frame(t, TOP + bars.length * row + 8, body);
}

/**
 * Lines over a shared x (times), one per series, each point a `circle.point` carrying its series'
 * key, x and y. The zero line is drawn darker: above it is profit, below it loss.
 */
export function lineChart(t: ChartText, lines: Line[], text: { x: (x: number) => string; y: (y: number) => string }) {
  const all = lines.flatMap((l) => l.points);
  const { ys, y } = scale(all.map((p) => p.y));
  const x0 = all.length ? Math.min(...all.map((p) => p.x)) : 0;
  const x1 = all.length ? Math.max(...all.map((p) => p.x)) : 0;
  const plotW = W - LEFT - RIGHT - 12;
  const x = (v: number) => (x1 === x0 ? LEFT + plotW / 2 : LEFT + 6 + ((v - x0) / (x1 - x0)) * plotW);
  const drawn = lines.map((l, i) => {
    const key = esc(l.key);
    const path = l.points.map((p) => `${n1(x(p.x))},${n1(y(p.y))}`).join(" ");
    const dots = l.points.map(
      (p) =>
        `<circle class="point" data-series="${key}" data-x="${p.x}" data-value="${datum(p.y)}" cx="${n1(x(p.x))}" ` +
        `cy="${n1(y(p.y))}" r="3" fill="${color(i)}"/>`,
    );
    return `<g class="series" data-series="${key}"><polyline points="${path}" fill="none" stroke="${color(i)}" \
stroke-width="2"/>${dots.join("")}</g>`;
  });
  const xs = all.length ? [x0, ...(x1 !== x0 ? [x1] : [])] : [];
  const legendTop = TOP + PLOT_H + 28;
  const body =
    yAxis(ys, y, text.y) +
    drawn.join("") +
    xLabels(xs.map((v) => ({ x: x(v), text: text.x(v) }))) +
    legend(
      lines.map((l) => l.name),
      legendTop,
    );
  return frame(t, legendTop + lines.length * LEGEND_ROW + 4, body);
}
