import { stackedBars } from "../../lib/svgChart.js";
import type { WeekRow } from "./close.js";
import { BUCKETS, type PerBucket, valueCents } from "./split.js";

/**
 * One week in US cents at each token's mark of that week (the row's own `mark`, so the numbers are
 * the record's, not today's): what came in from trades' fees and from outside, and what was booked to
 * each bucket. Tokens without a mark are counted nowhere and named in `unpriced`.
 */
export type WeekSums = {
  seq: number;
  label: string;
  fees: bigint;
  outside: bigint;
  booked: PerBucket<bigint>;
  unpriced: string[];
};

/** A row's mark ("1.00000000", 8 decimals) as an integer of 1e-8 USD. */
const markE8 = (mark: string) => {
  const [whole, frac = ""] = mark.split(".");
  return BigInt(whole!) * 10n ** 8n + BigInt(frac.padEnd(8, "0").slice(0, 8));
};

/** Cents as dollars with two decimals, exact. */
export const dollars = (cents: bigint) => `${cents / 100n}.${(cents % 100n).toString().padStart(2, "0")}`;

/** The weeks' sums, oldest first (a chart reads left to right). */
export function weekSums(weeks: WeekRow[]): WeekSums[] {
  return [...weeks].reverse().map((w) => {
    const s: WeekSums = {
      seq: w.seq,
      label: w.week.label,
      fees: 0n,
      outside: 0n,
      booked: { operations: 0n, buybacks: 0n, treasury: 0n },
      unpriced: [],
    };
    for (const t of w.tokens) {
      if (t.mark === null) {
        if (BigInt(t.received) + BigInt(t.outside) > 0n) s.unpriced.push(t.symbol);
        continue;
      }
      const cents = (atoms: string) => valueCents(BigInt(atoms), t.decimals, markE8(t.mark!));
      s.fees += cents(t.received);
      s.outside += cents(t.outside);
      for (const b of BUCKETS) s.booked[b] += cents(t.booked[b] ?? "0");
    }
    return s;
  });
}

const usd = (v: number) => `$${v}`;
const num = (c: bigint) => Number(c) / 100;

/** Weekly inflow: a bar per week, fees and outside receipts stacked (USD at the week's marks). */
export function inflowChart(sums: WeekSums[]): string {
  const total = sums.reduce((a, s) => a + s.fees + s.outside, 0n);
  return stackedBars(
    {
      id: "inflow-chart",
      title: "Weekly inflow to the platform wallet (USD at each week's marks)",
      desc:
        `${sums.length} weeks, ${dollars(total)} USD in all: ` +
        sums.map((s) => `${s.label} fees ${dollars(s.fees)}, outside ${dollars(s.outside)}`).join("; "),
    },
    ["trade fees", "from outside"],
    sums.map((s) => ({ label: s.label, values: [num(s.fees), num(s.outside)] })),
    usd,
  );
}

/** The split: a bar per week, what was booked to each bucket stacked (USD at the week's marks). */
export function splitChart(sums: WeekSums[]): string {
  return stackedBars(
    {
      id: "split-chart",
      title: "Weekly split by bucket (USD at each week's marks)",
      desc: sums.map((s) => `${s.label}: ${BUCKETS.map((b) => `${b} ${dollars(s.booked[b])}`).join(", ")}`).join("; "),
    },
    BUCKETS,
    sums.map((s) => ({ label: s.label, values: BUCKETS.map((b) => num(s.booked[b])) })),
    usd,
  );
}
