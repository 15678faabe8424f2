import { describe, expect, it } from "vitest";
import { seasonBook, type BookTrade, type Mark } from "./book.js";

const USDG = { address: "0x00000000000000000000000000000000000000a1", decimals: 6 };
const ETH = { address: "0x0000000000000000000000000000000000000000", decimals: 18 };
const MEME = { address: "0x00000000000000000000000000000000000000c3", decimals: 18 };
const PEPE = { address: "0x00000000000000000000000000000000000000d4", decimals: 18 };
const usd = (n: number) => BigInt(Math.round(n * 1e6));
const eth = (n: number) => BigInt(Math.round(n * 1e6)) * 10n ** 12n;
const mark = (v: number, block: number, round = `r${block}`): Mark => ({ usd: v, block, source: "feed", round });
const ONE: Mark = { usd: 1, block: 0, source: "fixed", round: null };
const DAY = 86_400;
let n = 0;
function trade(
  o: Partial<BookTrade> &
    Pick<BookTrade, "token_in" | "amount_in" | "token_out" | "amount_out" | "mark_in" | "mark_out">,
): BookTrade {
  n++;
  return { id: `t${n}`, ts: 1_800_000_000 + n * 3_600, block: 100 + n, ...o };
}
const marks = (m: Record<string, number | null>) => (token: string) => (Object.hasOwn(m, token) ? m[token]! : null);
const END = { [USDG.address]: 1, [ETH.address]: 2_100 };

describe("a prize entrant's season book", () => {
  it("scores a round trip by what came back, names each valuation's mark, and counts the capital out", () => {
    const t = [
      trade({
        token_in: USDG,
        amount_in: usd(1_000),
        token_out: ETH,
        amount_out: eth(0.5),
        mark_in: ONE,
        mark_out: mark(2_000, 101),
      }),
      trade({
        token_in: ETH,
        amount_in: eth(0.5),
        token_out: USDG,
        amount_out: usd(1_040),
        mark_in: mark(2_080, 105),
        mark_out: ONE,
        ts: 1_800_000_000 + 3 * DAY,
      }),
    ];
    const b = seasonBook(t, { endMarks: marks(END), grid: [], ended: true });
    expect(b.profit_usd).toBe(40);
    expect(b.score).toBe(40);
    expect(b.capital_usd).toBe(1_000);
    expect(b.return_pct).toBe(4);
    expect([b.trades, b.active_days, b.unvalued, b.open_unpriced, b.price_outliers]).toEqual([2, 2, 0, 0, 0]);
    expect(b.valuations.find((v) => v.trade_id === t[0]!.id && v.side === "out")).toMatchObject({
      usd: 1_000,
      mark: { block: 101, round: "r101" },
    });
  });

  it("values what is still held at the end marks, and a token that lost its mark at nothing", () => {
    const t = [
      trade({
        token_in: USDG,
        amount_in: usd(1_000),
        token_out: ETH,
        amount_out: eth(0.5),
        mark_in: ONE,
        mark_out: mark(2_000, 101),
      }),
    ];
    expect(seasonBook(t, { endMarks: marks(END), grid: [], ended: true }).profit_usd).toBe(50);
    const lost = seasonBook(t, { endMarks: marks({ [USDG.address]: 1 }), grid: [], ended: true });
    expect(lost.profit_usd).toBe(-1_000);
    expect(lost.open_unpriced).toBe(1);
  });

  it(
    "holds an unmarked token at cost, takes its proceeds when sold (average cost), and writes it off at season " +
      "end",
    () => {
      const buy = trade({
        token_in: USDG,
        amount_in: usd(100),
        token_out: MEME,
        amount_out: eth(1_000),
        mark_in: ONE,
        mark_out: null,
      });
      const during = seasonBook([buy], { endMarks: marks(END), grid: [], ended: false });
      expect(during.profit_usd).toBe(0);
      expect(during.open_unpriced).toBe(1);
      expect(seasonBook([buy], { endMarks: marks(END), grid: [], ended: true }).profit_usd).toBe(-100);
      // Half sold for $80: the sold half's $50 of cost goes, the other half still counts at cost.
      const sell = trade({
        token_in: MEME,
        amount_in: eth(500),
        token_out: USDG,
        amount_out: usd(80),
        mark_in: null,
        mark_out: ONE,
      });
      expect(seasonBook([buy, sell], { endMarks: marks(END), grid: [], ended: false }).profit_usd).toBe(30);
      expect(seasonBook([buy, sell], { endMarks: marks(END), grid: [], ended: true }).profit_usd).toBe(-20);
    },
  );

  it("counts a trade with no marked side as unvalued and moves its cost to what it bought", () => {
    const buy = trade({
      token_in: USDG,
      amount_in: usd(100),
      token_out: MEME,
      amount_out: eth(1_000),
      mark_in: ONE,
      mark_out: null,
    });
    const swap = trade({
      token_in: MEME,
      amount_in: eth(1_000),
      token_out: PEPE,
      amount_out: eth(5),
      mark_in: null,
      mark_out: null,
    });
    const sell = trade({
      token_in: PEPE,
      amount_in: eth(5),
      token_out: USDG,
      amount_out: usd(130),
      mark_in: null,
      mark_out: ONE,
    });
    const b = seasonBook([buy, swap, sell], { endMarks: marks(END), grid: [], ended: true });
    expect([b.unvalued, b.open_unpriced, b.profit_usd]).toEqual([1, 0, 30]);
  });

  it("flags a fill far from its marks, and measures the drawdown over the grid against the capital", () => {
    const buy = trade({
      token_in: USDG,
      amount_in: usd(1_000),
      token_out: ETH,
      amount_out: eth(0.5),
      mark_in: ONE,
      mark_out: mark(2_000, 101),
    });
    const bad = trade({
      token_in: USDG,
      amount_in: usd(100),
      token_out: ETH,
      amount_out: eth(0.01),
      mark_in: ONE,
      mark_out: mark(2_000, 102),
    });
    const grid = [
      { ts: buy.ts + 1, marks: marks({ [USDG.address]: 1, [ETH.address]: 2_200 }) },
      { ts: bad.ts + 1, marks: marks({ [USDG.address]: 1, [ETH.address]: 1_600 }) },
    ];
    const b = seasonBook([bad, buy], {
      endMarks: marks({ [USDG.address]: 1, [ETH.address]: 2_000 }),
      grid,
      ended: true,
    });
    expect(b.price_outliers).toBe(1);
    // Peak +100 (ETH at 2,200), trough at 1,600: 0.51 ETH * 1,600 - 1,100 = -284; a drawdown of 384 on the capital out.
    expect(b.curve.map((p) => p.profit_usd)).toEqual([100, -284]);
    expect(b.max_dd_pct).toBeCloseTo((384 / b.capital_usd) * 100, 1);
    // The order of the input does not matter: trades are replayed by block.
    expect(
      seasonBook([buy, bad], { endMarks: marks({ [USDG.address]: 1, [ETH.address]: 2_000 }), grid, ended: true })
        .profit_usd,
    ).toBe(b.profit_usd);
  });

  it("credits a fill at most what it paid at the marks of its block, and reports gains on unmarked tokens", () => {
    // 1,000 USDG bought 0.6 ETH while ETH's mark was 2,000 (a pool pushed away from the marks): $200 above the paid
    // side.
    const cheap = trade({
      token_in: USDG,
      amount_in: usd(1_000),
      token_out: ETH,
      amount_out: eth(0.6),
      mark_in: ONE,
      mark_out: mark(2_000, 101),
    });
    const b = seasonBook([cheap], {
      endMarks: marks({ [USDG.address]: 1, [ETH.address]: 2_000 }),
      grid: [],
      ended: true,
    });
    expect(b.uncredited_usd).toBe(200);
    expect(b.profit_usd).toBe(0);
    // A later move of the mark still counts.
    expect(
      seasonBook([cheap], { endMarks: marks({ [USDG.address]: 1, [ETH.address]: 2_100 }), grid: [], ended: true })
        .profit_usd,
    ).toBe(60);
    const buy = trade({
      token_in: USDG,
      amount_in: usd(100),
      token_out: MEME,
      amount_out: eth(1_000),
      mark_in: ONE,
      mark_out: null,
    });
    const sell = trade({
      token_in: MEME,
      amount_in: eth(1_000),
      token_out: USDG,
      amount_out: usd(900),
      mark_in: null,
      mark_out: ONE,
    });
    expect(seasonBook([buy, sell], { endMarks: marks(END), grid: [], ended: true })).toMatchObject({
      profit_usd: 800,
      unmarked_realised_usd: 800,
    });
  });
});
