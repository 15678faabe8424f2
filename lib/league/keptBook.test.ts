import { describe, expect, it } from "vitest";
import { addTrades, keptBook, keptBookOf, seasonBook, type BookTrade, type GridPoint, type Mark } from "./book.js";
import { rng } from "../../test/helpers/rng.js";

const DAY = 86_400;
const STARTS = 1_800_000_000;
// USDG at $1, ETH on a feed, a marked token whose feed goes missing at times, two tokens without a mark.
const TOKENS = [
  { address: "0x00000000000000000000000000000000000000a1", decimals: 6, marked: true },
  { address: "0x0000000000000000000000000000000000000000", decimals: 18, marked: true },
  { address: "0x00000000000000000000000000000000000000b2", decimals: 8, marked: true },
  { address: "0x00000000000000000000000000000000000000c3", decimals: 18, marked: false },
  { address: "0x00000000000000000000000000000000000000d4", decimals: 18, marked: false },
];

/** A token's price at a time: a walk per token, with gaps for the third (null: no mark then). */
function prices(next: () => number) {
  const memo = new Map<string, number | null>();
  return (token: string, ts: number): number | null => {
    const i = TOKENS.findIndex((t) => t.address === token);
    if (i === 0) return 1;
    if (!TOKENS[i]?.marked) return null;
    const k = `${token}|${ts}`;
    if (!memo.has(k)) memo.set(k, i === 2 && next() < 0.2 ? null : (i === 1 ? 2_000 : 30) * (0.7 + next() * 0.6));
    return memo.get(k)!;
  };
}

/** A random season of `n` trades: blocks every 2 s, a few trades per block, sides and sizes at random. */
function season(seed: number, n: number) {
  const next = rng(seed);
  const price = prices(next);
  const trades: BookTrade[] = [];
  let block = 1_000;
  let ts = STARTS;
  for (let i = 0; i < n; i++) {
    if (next() < 0.7) {
      block += 1 + Math.floor(next() * 20_000);
      // A new block's time; now and then right at a grid point or a second after (where "at or before" bites).
      ts += 1 + Math.floor(next() * 40_000);
      if (next() < 0.3) ts = Math.max(ts, STARTS + Math.ceil((ts - STARTS) / DAY) * DAY + Math.floor(next() * 3));
    }
    const [a, b] = [Math.floor(next() * TOKENS.length), Math.floor(next() * (TOKENS.length - 1))];
    const tin = TOKENS[a]!;
    const tout = TOKENS[b >= a ? b + 1 : b]!;
    const mark = (t: (typeof TOKENS)[number]): Mark | null => {
      const usd = price(t.address, ts);
      return usd === null ? null : { usd, block, source: "feed", round: `r${block}` };
    };
    const atoms = (t: (typeof TOKENS)[number]) => BigInt(Math.floor(next() * 1e6) + 1) * 10n ** BigInt(t.decimals - 3);
    trades.push({
      id: `t${String(i).padStart(6, "0")}`,
      ts,
      block,
      token_in: { address: tin.address, decimals: tin.decimals },
      amount_in: atoms(tin),
      token_out: { address: tout.address, decimals: tout.decimals },
      amount_out: atoms(tout),
      mark_in: mark(tin),
      mark_out: mark(tout),
      marked_in: tin.marked,
      marked_out: tout.marked,
    });
  }
  const gridUntil = (until: number): GridPoint[] => {
    const out: GridPoint[] = [];
    for (let ts = STARTS; ts < until; ts += DAY) out.push({ ts, marks: (token) => price(token, ts) });
    return out;
  };
  return { trades, next, price, gridUntil };
}

/**
 * Plays a season in passes as the standings worker does: each pass adds the trades that came in since the last
 * (arrival order shuffled a little when `late`), over the grid up to the pass's time, and compares the kept book
 * with today's full replay, field for field. Answers how many passes had to replay from scratch.
 */
function playInPasses(seed: number, n: number, late: boolean) {
  const { trades, next, price, gridUntil } = season(seed, n);
  const arrived = [...trades];
  if (late)
    for (let i = 0; i < arrived.length / 20; i++) {
      const [x, y] = [Math.floor(next() * arrived.length), Math.floor(next() * arrived.length)];
      [arrived[x], arrived[y]] = [arrived[y]!, arrived[x]!];
    }
  let book = keptBook();
  let rebuilds = 0;
  let passes = 0;
  for (let at = 0; at < arrived.length; ) {
    const upTo = Math.min(arrived.length, at + 1 + Math.floor(next() * 40));
    const all = arrived.slice(0, upTo);
    // The pass's time: the latest trade's, or up to two days on (an indexer's head may lag a trade, too).
    const now = Math.max(...all.map((t) => t.ts)) + Math.floor((next() * 2.5 - 0.5) * DAY);
    const grid = gridUntil(now);
    if (!addTrades(book, arrived.slice(at, upTo), grid)) {
      rebuilds++;
      book = keptBook();
      expect(addTrades(book, all, grid)).toBe(true);
    }
    const ended = upTo === arrived.length && next() < 0.5;
    const o = { endMarks: (token: string) => price(token, now), grid, ended };
    expect(keptBookOf(book, o), `seed ${seed}, pass ${passes}`).toEqual(seasonBook(all, o));
    passes++;
    at = upTo;
  }
  return { rebuilds, passes };
}

describe("an entrant's book kept between passes", () => {
  it("answers today's full replay field for field, pass after pass, on random seasons", () => {
    for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
      const { rebuilds, passes } = playInPasses(seed, 400, false);
      // In block order each pass only adds: a replay from scratch only when a grid point came after a later trade.
      expect(rebuilds).toBeLessThan(passes / 4);
    }
  });

  it("replays from scratch when a trade arrives before one applied, and still answers the full replay", () => {
    let rebuilds = 0;
    for (const seed of [11, 12, 13]) rebuilds += playInPasses(seed, 300, true).rebuilds;
    expect(rebuilds).toBeGreaterThan(0);
  });

  it("refuses a trade that sorts before one applied, and a grid point the applied trades had passed", () => {
    const { trades, gridUntil } = season(21, 20);
    const book = keptBook();
    expect(addTrades(book, trades.slice(10), gridUntil(trades[9]!.ts))).toBe(true);
    expect(addTrades(book, trades.slice(0, 10), gridUntil(trades[9]!.ts))).toBe(false);
    expect(addTrades(keptBook(), trades, gridUntil(STARTS))).toBe(true);
    const early = keptBook();
    addTrades(early, trades, []);
    expect(addTrades(early, [], gridUntil(trades.at(-1)!.ts))).toBe(trades.at(-1)!.ts <= STARTS + 1);
  });
});
