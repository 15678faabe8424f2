import { describe, expect, it } from "vitest";
import { markAt, markMemo, seriesMarkReader, type TimedRound, type ValuationToken } from "./valuation.js";
import { rng } from "../../test/helpers/rng.js";

const T0 = 1_800_000_000;
const FEED = "0x00000000000000000000000000000000000000fe";
const STOCK_FEED = "0x00000000000000000000000000000000000000fd";
const token = (o: Partial<ValuationToken> & Pick<ValuationToken, "address" | "basis">): ValuationToken => ({
  symbol: "T",
  decimals: 18,
  feed: null,
  stock: false,
  pool_id: null,
  token_is_0: null,
  usdg_decimals: 6,
  ...o,
});
const TOKENS = [
  token({ address: "0x00000000000000000000000000000000000000a1", basis: "fixed", decimals: 6 }),
  token({ address: "0x0000000000000000000000000000000000000000", basis: "oracle", feed: FEED }),
  token({ address: "0x00000000000000000000000000000000000000b2", basis: "oracle", feed: STOCK_FEED, stock: true }),
  token({ address: "0x00000000000000000000000000000000000000c3", basis: "twap", pool_id: `0x${"11".repeat(32)}` }),
];

/** A feed's rounds: one every 10 minutes, a three-day gap (its marks go stale in it), a non-positive answer. */
function roundsOf(next: () => number): TimedRound[] {
  const out: TimedRound[] = [];
  for (let ts = T0, i = 1; ts < T0 + 6 * 86_400; ts += 600, i++) {
    if (ts > T0 + 86_400 && ts < T0 + 4 * 86_400) continue;
    const answer = i % 97 === 0 ? 0n : BigInt(Math.round((1_000 + next() * 1_000) * 1e8));
    out.push({ round_id: String(i), answer, updated_at: ts, block: 1 + Math.floor((ts - T0) / 60), ts });
  }
  return out;
}

/**
 * The memo answers what markAt answers for every ask (issue 29 point 6 made it keep a fixed mark per block and an
 * oracle's round per block): random tokens, blocks and times (one block at several times, stale and not, a time
 * alone), asked in batches before and after earlier answers came, through `at` and `asked`.
 */
describe("markMemo", () => {
  it("answers what markAt answers, ask for ask", async () => {
    for (const seed of [1, 2, 3, 4]) {
      const next = rng(seed);
      const series = new Map([FEED, STOCK_FEED].map((f, i) => [f, roundsOf(rng(seed * 10 + i))]));
      const reader = seriesMarkReader({ rounds: async (f) => series.get(f)!, observations: async () => [] });
      const memo = markMemo(reader, TOKENS);
      for (let batch = 0; batch < 20; batch++) {
        const asks = Array.from({ length: 50 }, () => {
          const t = TOKENS[Math.floor(next() * TOKENS.length)]!;
          const time = T0 + Math.floor(next() * 7 * 86_400);
          // A block near the time's, or one asked before at another time (its round is read once).
          const block = next() < 0.2 ? undefined : 1 + Math.floor((time - T0) / 60) - Math.floor(next() * 30);
          return { t, at: block === undefined ? { time } : { block, time: next() < 0.3 ? time + 90_000 : time } };
        });
        const got = await Promise.all(
          asks.map(({ t, at }, i) => {
            const a = at.block !== undefined && i % 2 ? memo.asked(t.address, at.block, at.time) : null;
            return a ? (a.known ? a.value : a.answer) : memo.at(t.address, at);
          }),
        );
        const want = await Promise.all(asks.map(({ t, at }) => markAt(reader, t, at)));
        expect(got, `seed ${seed} batch ${batch}`).toEqual(want);
        expect(want.some((m) => m === null) && want.some((m) => m !== null)).toBe(true);
      }
    }
  });
});
