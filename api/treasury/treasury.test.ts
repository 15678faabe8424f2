import { describe, expect, it } from "vitest";
import { weekAfter, weekOf, WEEK_S } from "./week.js";
import { splitToken, zeroBuckets, type SplitInput } from "./split.js";
import { checkChain, GENESIS_HASH, rowHash } from "./record.js";

describe("weekOf", () => {
  // Mondays and ISO weeks from Python's date.isocalendar().
  it("starts on Monday 00:00 UTC and names the ISO week, across year ends", () => {
    expect(weekOf(1795392000 + 3 * 86_400 + 5)).toEqual({
      start: 1795392000,
      end: 1795392000 + WEEK_S,
      label: "2026-W48",
    });
    expect(weekOf(1795392000).start).toBe(1795392000);
    expect(weekOf(1795392000 - 1).start).toBe(1795392000 - WEEK_S);
    expect(weekOf(1798416000).label).toBe("2026-W53");
    expect(weekAfter(weekOf(1798416000)).label).toBe("2027-W01");
    expect(weekOf(1735516800).label).toBe("2025-W01");
    expect(weekOf(1609718400 + 86_399).label).toBe("2021-W01");
  });
});

const base = (o: Partial<SplitInput> = {}): SplitInput => ({
  carriedIn: 0n,
  received: 0n,
  outside: 0n,
  owedIn: zeroBuckets(),
  decimals: 6,
  markE8: 100_000_000n,
  bucketSet: { operations: true, buybacks: true, treasury: true },
  ...o,
});

describe("splitToken", () => {
  it("splits 50/40/10 rounded down to atoms and carries the remainder", () => {
    const s = splitToken(base({ received: 1_000_003n, outside: 4n, carriedIn: 2n }));
    expect(s.pool).toBe(1_000_009n);
    expect(s.status).toBe("split");
    expect(s.booked).toEqual({ operations: 500_004n, buybacks: 400_003n, treasury: 100_000n });
    expect(s.carriedOut).toBe(2n);
    expect(s.moved).toEqual(s.booked);
    expect(s.owedOut).toEqual(zeroBuckets());
    expect(s.valueUsdCents).toBe(100n);
  });

  it("carries a pool under $1 as dust and an unmarked one as unpriced", () => {
    expect(splitToken(base({ received: 999_999n }))).toMatchObject({
      status: "dust",
      carriedOut: 999_999n,
      booked: zeroBuckets(),
    });
    expect(splitToken(base({ received: 5n, markE8: null }))).toMatchObject({
      status: "unpriced",
      carriedOut: 5n,
      valueUsdCents: null,
    });
    expect(splitToken(base())).toMatchObject({ status: "nothing", pool: 0n });
  });

  it("books an unset bucket's share as owed and moves it with the week its wallet is set", () => {
    const held = splitToken(
      base({ received: 10_000_000n, bucketSet: { operations: true, buybacks: false, treasury: false } }),
    );
    expect(held.moved).toEqual({ operations: 5_000_000n, buybacks: 0n, treasury: 0n });
    expect(held.owedOut).toEqual({ operations: 0n, buybacks: 4_000_000n, treasury: 1_000_000n });
    const later = splitToken(
      base({ owedIn: held.owedOut, bucketSet: { operations: true, buybacks: true, treasury: false } }),
    );
    expect(later.status).toBe("nothing");
    expect(later.moved).toEqual({ operations: 0n, buybacks: 4_000_000n, treasury: 0n });
    expect(later.owedOut).toEqual({ operations: 0n, buybacks: 0n, treasury: 1_000_000n });
  });
});

describe("checkChain", () => {
  const chain = (n: number) => {
    const out: { seq: number; body: string }[] = [];
    let prev = GENESIS_HASH;
    for (let seq = 1; seq <= n; seq++) {
      const row: Record<string, unknown> = {
        kind: "week",
        seq,
        prev_hash: prev,
        tokens: [{ symbol: "Ünï\u007f", received: String(seq) }],
      };
      row.hash = rowHash(row);
      prev = row.hash as string;
      out.push({ seq, body: JSON.stringify(row) });
    }
    return out;
  };

  it("accepts an intact chain and names its head", () => {
    const rows = chain(3);
    const { integrity, rows: served } = checkChain(rows);
    expect(integrity).toEqual({ ok: true, rows: 3, head: JSON.parse(rows[2]!.body).hash, broken_at: null, why: null });
    expect(served).toHaveLength(3);
  });

  it("reports a changed amount at its row and serves only the rows before it", () => {
    const rows = chain(3);
    rows[1]!.body = rows[1]!.body.replace('"received":"2"', '"received":"20"');
    const { integrity, rows: served } = checkChain(rows);
    expect(integrity).toMatchObject({ ok: false, rows: 1, broken_at: 2 });
    expect(integrity.why).toMatch(/not the SHA-256/);
    expect(served).toHaveLength(1);
  });

  it("reports a row whose hash was recomputed after a change by its broken link", () => {
    const rows = chain(3);
    const r = JSON.parse(rows[1]!.body);
    r.tokens[0].received = "20";
    r.hash = rowHash(r);
    rows[1]!.body = JSON.stringify(r);
    expect(checkChain(rows).integrity).toMatchObject({ ok: false, broken_at: 3, rows: 2 });
  });

  it("reports a removed row", () => {
    const rows = chain(3);
    rows.splice(1, 1);
    expect(checkChain(rows).integrity).toMatchObject({ ok: false, broken_at: 3, rows: 1 });
  });
});
