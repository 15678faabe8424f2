/**
 * The load test's report: a Markdown page (requests and trades per route, p50/p99, every non-2xx by
 * code, the faults, the audit, memory per process) and an SVG chart of throughput, p99, errors and
 * RSS over time, with the faults marked.
 */
import { esc } from "../../lib/svgChart.js";
import type { Sample } from "./client.js";
import type { AuditLine } from "./audit.js";
import type { Fault, MemorySample } from "./processes.js";

const pct = (xs: number[], p: number) => {
  if (!xs.length) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const fmt = (x: number) => (Number.isNaN(x) ? "-" : x < 10 ? x.toFixed(1) : x.toFixed(0));

/** Per route: requests, 2xx, p50/p99 of all answers, and the non-2xx by status and code. */
export function routeTable(samples: Sample[], runS: number): string {
  const routes = [...new Set(samples.map((s) => s.route))].sort();
  const lines = [
    "| route | requests | per s | 2xx | p50 ms | p99 ms | non-2xx by status and code |",
    "|---|---|---|---|---|---|---|",
  ];
  for (const route of routes) {
    const mine = samples.filter((s) => s.route === route);
    const ok = mine.filter((s) => s.status >= 200 && s.status < 300).length;
    const bad: Record<string, number> = {};
    for (const s of mine)
      if (s.status < 200 || s.status >= 300)
        bad[`${s.status} ${s.code ?? "-"}`] = (bad[`${s.status} ${s.code ?? "-"}`] ?? 0) + 1;
    const badText = Object.entries(bad)
      .sort((a, b) => b[1] - a[1])
      .map(([k, n]) => `${k} x${n}`)
      .join(", ");
    const ms = mine.map((s) => s.ms);
    lines.push(
      `| ${route} | ${mine.length} | ${(mine.length / runS).toFixed(2)} | ${ok} | ${fmt(pct(ms, 50))} | ` +
        `${fmt(pct(ms, 99))} | ${badText || "none"} |`,
    );
  }
  return lines.join("\n");
}

type Bucket = { t: number; rps: number; p99: number; errors: number; fivexx: number };

/** 10-second buckets of the run: requests per second, p99, non-2xx and 5xx per second. */
export function buckets(samples: Sample[], runMs: number, sizeMs = 10_000): Bucket[] {
  const out: Bucket[] = [];
  for (let t = 0; t < runMs; t += sizeMs) {
    const b = samples.filter((s) => s.t >= t && s.t < t + sizeMs);
    out.push({
      t: t + sizeMs / 2,
      rps: b.length / (sizeMs / 1000),
      p99: pct(
        b.map((s) => s.ms),
        99,
      ),
      errors: b.filter((s) => s.status < 200 || s.status >= 300).length / (sizeMs / 1000),
      fivexx: b.filter((s) => s.status >= 500 || s.status === 0).length / (sizeMs / 1000),
    });
  }
  return out;
}

const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#17becf"];

/** One panel: lines over the run's time axis, with the faults as vertical marks. */
function panel(
  title: string,
  series: { name: string; points: [number, number][] }[],
  runMs: number,
  faults: Fault[],
  top: number,
): string {
  const [w, h, left] = [900, 150, 60];
  const ys = series.flatMap((s) => s.points.map((p) => p[1])).filter((y) => Number.isFinite(y));
  const max = Math.max(1, ...ys) * 1.1;
  const x = (t: number) => left + (t / runMs) * (w - left - 10);
  const y = (v: number) => top + h - (v / max) * h;
  const parts = [
    `<text x="${left}" y="${top - 6}" font-size="13" font-weight="bold">${esc(title)}</text>`,
    `<line x1="${left}" y1="${top + h}" x2="${w - 10}" y2="${top + h}" stroke="#999"/>`,
    `<text x="${left - 6}" y="${top + 10}" font-size="10" text-anchor="end">${fmt(max)}</text>`,
    `<text x="${left - 6}" y="${top + h}" font-size="10" text-anchor="end">0</text>`,
  ];
  for (const f of faults) {
    parts.push(
      `<line x1="${x(f.killedAt)}" y1="${top}" x2="${x(f.killedAt)}" y2="${top + h}" stroke="#000" ` +
        `stroke-dasharray="4 3"/>`,
    );
    parts.push(`<text x="${x(f.killedAt) + 3}" y="${top + 12}" font-size="10">kill ${f.what}</text>`);
  }
  series.forEach((s, i) => {
    const pts = s.points.filter((p) => Number.isFinite(p[1])).map(([t, v]) => `${x(t).toFixed(1)},${y(v).toFixed(1)}`);
    const color = COLORS[i % COLORS.length]!;
    parts.push(`<polyline fill="none" stroke="${color}" stroke-width="1.5" points="${pts.join(" ")}"/>`);
    parts.push(
      `<text x="${w - 10}" y="${top + 12 + i * 12}" font-size="10" fill="${color}" text-anchor="end">` +
        `${esc(s.name)}</text>`,
    );
  });
  return parts.join("\n");
}

/** The chart: throughput, p99, errors and RSS per process over the run. */
export function chartSvg(samples: Sample[], memory: MemorySample[], faults: Fault[], runMs: number): string {
  const b = buckets(samples, runMs);
  const roles = [...new Set(memory.map((m) => m.role))].sort();
  const panels = [
    panel(
      "requests per second (10-s buckets)",
      [{ name: "req/s", points: b.map((x) => [x.t, x.rps]) }],
      runMs,
      faults,
      30,
    ),
    panel("p99 latency, ms", [{ name: "p99", points: b.map((x) => [x.t, x.p99]) }], runMs, faults, 220),
    panel(
      "non-2xx and 5xx per second",
      [
        { name: "non-2xx/s", points: b.map((x) => [x.t, x.errors]) },
        { name: "5xx or lost/s", points: b.map((x) => [x.t, x.fivexx]) },
      ],
      runMs,
      faults,
      410,
    ),
    panel(
      "RSS per process, MB",
      roles.map((role) => ({ name: role, points: memory.filter((m) => m.role === role).map((m) => [m.t, m.rssMb]) })),
      runMs,
      faults,
      600,
    ),
  ];
  return `<svg xmlns="http://www.w3.org/2000/svg" width="900" height="790" font-family="sans-serif" role="img">
<title>Load test: requests per second, p99 latency, errors and RSS per process over the run, faults marked</title>
<rect width="100%" height="100%" fill="#fff"/>
${panels.join("\n")}
<text x="60" y="785" font-size="10">time into the run, 0 to ${(runMs / 1000).toFixed(0)} s</text>
</svg>
`;
}

export type ReportInput = {
  title: string;
  settings: Record<string, string | number>;
  setup: Record<string, number>;
  runMs: number;
  samples: Sample[];
  trades: { kind: string; status: string }[];
  faults: Fault[];
  audit: AuditLine[];
  memory: MemorySample[];
  chartFile: string;
};

export function reportMarkdown(r: ReportInput): string {
  const tradeKinds = [...new Set(r.trades.map((t) => t.kind))];
  const tradeRows = tradeKinds.map((k) => {
    const mine = r.trades.filter((t) => t.kind === k);
    const by = (s: string) => mine.filter((t) => t.status === s).length;
    return `| ${k} | ${mine.length} | ${by("success")} | ${by("reverted")} | ${by("lost")} |`;
  });
  const faultRows = r.faults.map(
    (f) =>
      `| ${f.what} | ${f.pid} | ${(f.killedAt / 1000).toFixed(1)} s | ` +
      `${f.backAt === null ? "not back" : `${((f.backAt - f.killedAt) / 1000).toFixed(1)} s later`} |`,
  );
  const roles = [...new Set(r.memory.map((m) => m.role))].sort();
  const memRows = roles.map((role) => {
    const mine = r.memory.filter((m) => m.role === role).map((m) => m.rssMb);
    return `| ${role} | ${fmt(mine[0]!)} | ${fmt(Math.max(...mine))} | ${fmt(mine.at(-1)!)} |`;
  });
  return [
    `# ${r.title}`,
    "",
    Object.entries(r.settings)
      .map(([k, v]) => `- ${k}: ${v}`)
      .join("\n"),
    "",
    `Setup: ${Object.entries(r.setup)
      .map(([k, ms]) => `${k} ${(ms / 1000).toFixed(1)} s`)
      .join(", ")}. Run: ${(r.runMs / 1000).toFixed(0)} s, ${r.samples.length} requests.`,
    "",
    "## Audit",
    "",
    ...r.audit.map((a) => `- ${a.ok ? "**true**" : "**FALSE**"}: ${a.claim}. ${a.evidence}`),
    "",
    "## Trades (relayed by the agents themselves; hosted trades are in the audit)",
    "",
    "| kind | relayed | mined | reverted | not seen on chain |",
    "|---|---|---|---|---|",
    ...tradeRows,
    "",
    "## Requests per route (client side, through the balancer)",
    "",
    routeTable(r.samples, r.runMs / 1000),
    "",
    "## Faults",
    "",
    "| process | pid | killed at | back |",
    "|---|---|---|---|",
    ...faultRows,
    "",
    "## Memory (RSS, MB)",
    "",
    "| process | first | max | last |",
    "|---|---|---|---|",
    ...memRows,
    "",
    `Chart: [${r.chartFile}](${r.chartFile})`,
    "",
  ].join("\n");
}
