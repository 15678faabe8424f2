import { describe, expect, it } from "vitest";
import {
  entrantBook,
  keptEntrant,
  keptEntrantBook,
  markMemo,
  seriesMarkReader,
  type SeasonTrade,
  type TimedRound,
  type ValuationToken,
} from "./valuation.js";
import { rng } from "../../test/helpers/rng.js";

const DAY = 86_400;
const STARTS = 1_800_000_000;
/** Blocks every 2 s from the season's start. */
const blockAt = (ts: number) => 1_000 + Math.floor((ts - STARTS) / 2);
const USDG = { address: "0x00000000000000000000000000000000000000a1", decimals: 6 };
const ETH = { address: "0x0000000000000000000000000000000000000000", decimals: 18 };
const ODD = { address: "0x00000000000000000000000000000000000000c3", decimals: 18 };
const FEED = "0x00000000000000000000000000000000000000fe";
const tokens: ValuationToken[] = [
  {
    ...USDG,
    symbol: "USDG",
    basis: "fixed",
    feed: null,
    stock: false,
    pool_id: null,
    token_is_0: null,
    usdg_decimals: 6,
  },
  {
    ...ETH,
    symbol: "ETH",
    basis: "oracle",
    feed: FEED,
    stock: false,
    pool_id: null,
    token_is_0: null,
    usdg_decimals: 6,
  },
];

/** ETH's feed: a round every 10 minutes over twelve days, a random walk around $2,000. */
function feedRounds(next: () => number): TimedRound[] {
  const out: TimedRound[] = [];
  let price = 2_000;
  for (let ts = STARTS - 3_600, i = 1; ts < STARTS + 12 * DAY; ts += 600, i++) {
    price *= 0.97 + next() * 0.06;
    out.push({ round_id: String(i), answer: BigInt(Math.round(price * 1e8)), updated_at: ts, block: blockAt(ts), ts });
  }
  return out;
}

/**
 * Plays one entrant's season in passes as the standings worker gives it: a pass brings 0-4 trades (some not final
 * yet), turns earlier ones final or drops one (a reorganisation), and moves the clock on; the list is a new array when
 * any of that touched it, and the same array otherwise (api/league/kept.ts). The kept book must answer what a book
 * from scratch answers, field for field, every pass.
 */
function play(seed: number) {
  const next = rng(seed);
  const rounds = feedRounds(rng(seed + 1));
  // A memo of marks per pass, as the standings worker makes one per computation: a book answered again is checked
  // against marks read anew, not against the memo it was made with.
  const marksOfPass = () =>
    markMemo(seriesMarkReader({ rounds: async () => rounds, observations: async () => [] }), tokens);
  const kept = keptEntrant();
  const final = new Set<string>();
  let list: SeasonTrade[] = [];
  let now = STARTS + 600;
  let id = 0;
  let sameLists = 0;
  let answeredAgain = 0;
  let last: unknown = null;
  const passes: (() => Promise<void>)[] = [];
  for (let pass = 0; pass < 60; pass++)
    passes.push(async () => {
      const was = list;
      const open = list.filter((t) => !final.has(t.id));
      // Rows not final are read again every pass: their wallet's list is a new one while it has any.
      if (open.length) list = [...list];
      for (const t of open) if (next() < 0.5) final.add(t.id);
      if (open.length && next() < 0.1) list = list.filter((t) => t.id !== open[0]!.id);
      now += Math.floor(next() * (next() < 0.1 ? DAY : 1_800));
      for (let n = Math.floor(next() * 5) - 1; n > 0; n--) {
        const [tin, tout] = next() < 0.5 ? [USDG, ETH] : next() < 0.7 ? [ETH, USDG] : [USDG, ODD];
        const t: SeasonTrade = {
          id: `t${String(++id).padStart(6, "0")}`,
          tx_hash: `0x${id}`,
          block: blockAt(now),
          ts: now,
          token_in: tin,
          amount_in: BigInt(Math.floor(next() * 1e6) + 1) * 10n ** BigInt(tin.decimals - 3),
          token_out: tout,
          amount_out: BigInt(Math.floor(next() * 1e6) + 1) * 10n ** BigInt(tout.decimals - 3),
        };
        if (list === was) list = [...list];
        list.push(t);
        if (next() < 0.7) final.add(t.id);
      }
      if (list === was) sameLists++;
      const o = { starts: STARTS, valuedAt: now, ended: pass === 59 };
      const marks = marksOfPass();
      const got = await keptEntrantBook(
        marks,
        kept,
        list,
        list.map((x) => final.has(x.id)),
        o,
      );
      expect(got, `seed ${seed} pass ${pass}`).toEqual(await entrantBook(marks, list, o));
      if (got === last) answeredAgain++;
      last = got;
    });
  return { passes, sameLists: () => sameLists, answeredAgain: () => answeredAgain };
}

describe("an entrant's kept book given the worker's lists", () => {
  it("answers the book from scratch every pass, the same list given again or a new one", async () => {
    let same = 0;
    let again = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const { passes, sameLists, answeredAgain } = play(seed);
      for (const p of passes) await p();
      same += sameLists();
      again += answeredAgain();
    }
    // The same list comes back often (nothing new and nothing open): that path is the one kept across passes.
    expect(same).toBeGreaterThan(200);
    // ... and with the same marks (the clock moved within a feed round, or not at all) the last answer is given again,
    // the same object: each of those passes was compared with a book from scratch above.
    expect(again).toBeGreaterThan(20);
  });
});
