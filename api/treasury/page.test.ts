import { describe, expect, it } from "vitest";
import { treasuryPage, units } from "./page.js";
import { weekSums } from "./charts.js";
import type { TreasuryAnswer } from "./read.js";
import type { WeekRow } from "./close.js";

const zero = { operations: "0", buybacks: "0", treasury: "0" };
const hash = `0x${"ab".repeat(32)}` as const;
const row: WeekRow = {
  kind: "week",
  seq: 1,
  status: "moved",
  week: { start: 1795392000, end: 1795996800, label: "2026-W48", first_block: 10, last_block: 20 },
  tokens: [
    {
      token: "0x0000000000000000000000000000000000000001",
      symbol: `"><img src=x onerror=alert(1)>`,
      decimals: 6,
      received: "1234567",
      trades: 1,
      outside: "0",
      outside_trades: 0,
      carried_in: "0",
      pool: "1234567",
      status: "split",
      booked: zero,
      moved: zero,
      owed_in: zero,
      owed_out: zero,
      carried_out: "0",
      value_usd: "1.23",
      mark: "1.00000000",
    },
  ],
  transfers: [
    {
      bucket: "operations",
      to: "0x0000000000000000000000000000000000000002",
      token: "0x0000000000000000000000000000000000000001",
      symbol: "USDG",
      decimals: 6,
      amount: "617283",
      tx_hash: hash,
      block: 21,
    },
  ],
  reconciliation: {
    status: "accepted",
    ledger: [],
    eth: "balance",
    counts: { ledger_trades: 0, chain_fee_transfers: 0, outside_transfers: 0, split_transfers: 1 },
    accepted: "<b>why</b>",
  },
  prev_hash: "0".repeat(64),
  hash: "cd".repeat(32),
  recorded_at: 1795996900,
};
const answer = (explorer: string | null): TreasuryAnswer => ({
  platform_wallet: "0x0000000000000000000000000000000000000003",
  buckets: { operations: "0x0000000000000000000000000000000000000002", buybacks: null, treasury: null },
  split_bps: { operations: 5000, buybacks: 4000, treasury: 1000 },
  integrity: { ok: false, rows: 0, head: "0".repeat(64), broken_at: 1, why: "hash <x> is not the SHA-256" },
  weeks: [row],
  totals: [],
  prize_payouts: [],
  explorer_tx: explorer,
  generated_at: 1795996900,
  cached_s: 0,
});

describe("treasury page", () => {
  it("prints atoms as exact whole units", () => {
    expect(units("1234567", 6)).toBe("1.234567");
    expect(units("1000000", 6)).toBe("1");
    expect(units("5", 18)).toBe("0.000000000000000005");
    expect(units("42", 0)).toBe("42");
  });

  it("escapes third-party text everywhere and links transactions through the explorer template", async () => {
    const page = String(await treasuryPage(answer("https://explorer.example/tx/{tx_hash}")));
    expect(page).not.toContain("<img");
    expect(page).toContain("&quot;&gt;&lt;img src=x onerror=alert(1)&gt;");
    expect(page).not.toContain("<b>why</b>");
    expect(page).toContain(`href="https://explorer.example/tx/${hash}"`);
    expect(page).toContain("broken at row 1");
    expect(page).not.toMatch(/<script/i);
  });

  it("shows a hash without a link when no explorer is configured", async () => {
    const page = String(await treasuryPage(answer(null)));
    expect(page).toContain(`title="${hash}"`);
    expect(page).not.toContain('href="https://');
  });

  it("sums each week in USD at its own marks, unpriced tokens named and left out", () => {
    const priced = {
      ...row.tokens[0]!,
      symbol: "USDG",
      received: "2000000",
      outside: "500000",
      booked: { operations: "1250000", buybacks: "1000000", treasury: "250000" },
    };
    const unpriced = { ...priced, symbol: "ODD", mark: null };
    const older = { ...row, seq: 1, week: { ...row.week, label: "2026-W47" }, tokens: [priced, unpriced] };
    const newer = { ...row, seq: 2, tokens: [{ ...priced, mark: "2.50000000" }] };
    const [a, b] = weekSums([newer, older]);
    expect(a).toEqual({
      seq: 1,
      label: "2026-W47",
      fees: 200n,
      outside: 50n,
      booked: { operations: 125n, buybacks: 100n, treasury: 25n },
      unpriced: ["ODD"],
    });
    expect(b!.fees).toBe(500n);
    expect(b!.booked.operations).toBe(312n);
  });

  it("draws weekly inflow and split with the table's numbers, in a main landmark, never reloading", async () => {
    const page = String(await treasuryPage(answer(null)));
    expect(page).toContain("<main>");
    expect(page).not.toMatch(/http-equiv="refresh"/i);
    expect(page).toContain('<a href="/treasury">Reload</a>');
    for (const id of ["inflow-chart", "split-chart"])
      expect(page).toContain(`<svg class="chart" id="${id}" role="img"`);
    expect(page).toContain('data-series="trade fees" data-label="2026-W48" data-value="1.23"');
    expect(page).toContain('data-series="operations" data-label="2026-W48" data-value="0"');
    expect(page).toMatch(/<tr data-seq="1"><td class="l">2026-W48<\/td><td>1.23<\/td><td>0.00<\/td>/);
  });
});
