export type Row = {
  name: string;
  unit: string;
  n: number;
  p50: number;
  p99: number;
  min: number;
  max: number;
  mean: number;
};

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

export function summarize(name: string, samples: number[], unit: string): Row {
  const s = [...samples].sort((a, b) => a - b);
  const mean = s.reduce((a, b) => a + b, 0) / s.length;
  return { name, unit, n: s.length, p50: percentile(s, 50), p99: percentile(s, 99), min: s[0]!, max: s.at(-1)!, mean };
}

/** A figure measured once (a count, a ratio, a rate): every statistic is the value, over `n` samples. */
export function single(name: string, unit: string, v: number, n = 1): Row {
  return { name, unit, n, p50: v, p99: v, min: v, max: v, mean: v };
}

export function table(rows: Row[]): string {
  const f = (x: number) => (Number.isNaN(x) ? "-" : x >= 100 ? x.toFixed(0) : x.toFixed(1));
  return [
    "| measurement | n | p50 | p99 | min | max | mean | unit |",
    "|---|---|---|---|---|---|---|---|",
    ...rows.map(
      (r) =>
        `| ${r.name} | ${r.n} | ${f(r.p50)} | ${f(r.p99)} | ${f(r.min)} | ${f(r.max)} | ${f(r.mean)} | ${r.unit} |`,
    ),
  ].join("\n");
}
