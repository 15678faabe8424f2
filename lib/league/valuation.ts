/**
 * How the prize board values a book (SPEC "League"), shared by the API and `npm run league:verify`:
 * independent marks only, each read at a block or a time from what the chain recorded (feed
 * rounds, the partner pool's price history), so anyone with an archive of the chain gets the same
 * numbers. The reader behind the marks is the indexer's tables (API) or the chain's logs (verify).
 */
import { markStale } from "../markStale.js";
import {
  addTrades,
  keptBook,
  keptBookOf,
  seasonBook,
  type BookToken,
  type BookTrade,
  type KeptBook,
  type Mark,
  type SeasonBook,
} from "./book.js";
import { priceFromX96 } from "../twap.js";
import { lc } from "../address.js";

/** The partner token's mark: its USDG pool's time-weighted price over the 30 minutes before. */
export const LEAGUE_TWAP_WINDOW_S = 1_800;
/** Drawdown is measured on the profit at each day's 00:00 UTC of the season, and at the end. */
export const GRID_S = 86_400;

/** One token as the valuation rules see it (published in `rules.valuation`). */
export type ValuationToken = {
  address: string;
  symbol: string;
  decimals: number;
  /** fixed: USDG at $1; oracle: its feed; twap: the partner token's pool. */
  basis: "fixed" | "oracle" | "twap";
  feed: string | null;
  stock: boolean;
  /** The USDG pool the TWAP reads (twap only), and whether the token is that pool's currency0. */
  pool_id: string | null;
  token_is_0: boolean | null;
  usdg_decimals: number;
};
/** A feed round as recorded: the round id, answer (8 decimals), updatedAt, and where it was logged. */
export type FeedRound = { round_id: string; answer: bigint; updated_at: number; block: number };
/** What the marks are read from. `at` is a block (`block`) or a unix second (`time`). */
export type MarkReader = {
  feedRound(feed: string, at: { block: number } | { time: number }): Promise<FeedRound | null>;
  /** The time-weighted priceX96 over [from, to] (lib/twap), or null when the pool has no price before `from`. */
  twapX96(poolId: string, from: number, to: number): Promise<bigint | null>;
};

/** A feed round with its block's time; a pool price observation with the running integral (lib/twap). */
export type TimedRound = FeedRound & { ts: number };
export type Observation = { ts: number; block: number; log: number; priceX96: bigint; cumulativeX96: bigint };

/** The last of `xs` (ordered by `key`) with key <= `k`, by binary search. */
function lastAtOrBefore<T>(xs: T[], k: number, key: (x: T) => number): T | null {
  let lo = 0;
  let hi = xs.length - 1;
  let found: T | null = null;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (key(xs[mid]!) <= k) (found = xs[mid]!), (lo = mid + 1);
    else hi = mid - 1;
  }
  return found;
}

/**
 * Marks from whole series loaded once per computation (a feed's rounds, a pool's observations in
 * chain order): the indexer's rows for the API, the chain's logs for league:verify. One lookup
 * rule for both, and no read per trade (a season of 100,000 trades reads each series once).
 */
export function seriesMarkReader(load: {
  rounds: (feed: string) => Promise<TimedRound[]>;
  observations: (poolId: string) => Promise<Observation[]>;
}): MarkReader {
  const rounds = new Map<string, Promise<TimedRound[]>>();
  const pools = new Map<string, Promise<Observation[]>>();
  const roundsOf = (feed: string) =>
    (rounds.has(lc(feed)) ? rounds : rounds.set(lc(feed), load.rounds(feed))).get(lc(feed))!;
  const obsOf = (id: string) => (pools.has(lc(id)) ? pools : pools.set(lc(id), load.observations(id))).get(lc(id))!;
  return {
    async feedRound(feed, at) {
      const rs = await roundsOf(feed);
      const r = "block" in at ? lastAtOrBefore(rs, at.block, (x) => x.block) : lastAtOrBefore(rs, at.time, (x) => x.ts);
      return r ? { round_id: r.round_id, answer: r.answer, updated_at: r.updated_at, block: r.block } : null;
    },
    async twapX96(poolId, from, to) {
      const obs = await obsOf(poolId);
      const a = lastAtOrBefore(obs, from, (x) => x.ts);
      const b = lastAtOrBefore(obs, to, (x) => x.ts);
      if (!a || !b) return null;
      const cum = (x: Observation, t: number) => x.cumulativeX96 + x.priceX96 * BigInt(t - x.ts);
      return (cum(b, to) - cum(a, from)) / BigInt(to - from);
    },
  };
}

/**
 * A token's independent mark at a trade (block and its time) or a grid time; null when it has
 * none then (no round yet, a stale or non-positive answer, a pool without the window's history).
 */
export async function markAt(
  r: MarkReader,
  t: ValuationToken,
  at: { block?: number; time: number },
): Promise<Mark | null> {
  if (t.basis === "fixed") return fixedMark(at.block);
  if (t.basis === "oracle")
    return oracleMark(
      t,
      await r.feedRound(t.feed!, at.block !== undefined ? { block: at.block } : { time: at.time }),
      at.time,
    );
  const from = at.time - LEAGUE_TWAP_WINDOW_S;
  const x96 = await r.twapX96(t.pool_id!, from, at.time);
  if (x96 === null || x96 <= 0n) return null;
  const price = priceFromX96(
    x96,
    t.token_is_0 ? t.decimals : t.usdg_decimals,
    t.token_is_0 ? t.usdg_decimals : t.decimals,
  );
  return {
    usd: t.token_is_0 ? price : 1 / price,
    block: at.block ?? 0,
    source: `twap:${lc(t.pool_id!)}`,
    round: `${from}-${at.time}`,
  };
}

/** Whether a feed's round is a mark at `time`: there, positive, and not stale then. */
const markingRound = (t: ValuationToken, round: FeedRound | null, time: number): round is FeedRound =>
  round !== null && round.answer > 0n && !markStale({ updatedAt: round.updated_at, now: time, stock: t.stock });

/** An oracle token's mark at `time` from its feed's round then: none without one, or stale or non-positive. */
function oracleMark(t: ValuationToken, round: FeedRound | null, time: number): Mark | null {
  if (!markingRound(t, round, time)) return null;
  return { usd: Number(round.answer) / 1e8, block: round.block, source: `feed:${lc(t.feed!)}`, round: round.round_id };
}

/** A fixed token's mark (USDG at $1): the same at any time, its block the one it is asked at (0: a time alone). */
const fixedMark = (block: number | undefined): Mark => ({ usd: 1, block: block ?? 0, source: "fixed", round: null });

/** A relayed, mined trade of the book: its amounts come from the receipt (lib/tradeOutcome). */
export type SeasonTrade = {
  id: string;
  tx_hash: string;
  block: number;
  ts: number;
  token_in: BookToken;
  amount_in: bigint;
  token_out: BookToken;
  amount_out: bigint;
};

/** The grid's times: each day's 00:00 UTC from the season's start up to `until` (exclusive). */
export function gridTimes(starts: number, until: number): number[] {
  const out: number[] = [];
  for (let ts = starts; ts < until; ts += GRID_S) out.push(ts);
  return out;
}

/** The map `outer` holds at `key`, a new one put there if none (no closure: the memo is a rebuild's hot path). */
function innerMap<K, K2, V>(outer: Map<K, Map<K2, V>>, key: K): Map<K2, V> {
  let inner = outer.get(key);
  if (!inner) outer.set(key, (inner = new Map()));
  return inner;
}

/** A memo of marks for one computation: the same (token, block or time) is read once. */
export function markMemo(r: MarkReader, tokens: ValuationToken[]) {
  const byAddress = new Map(tokens.map((t) => [lc(t.address), t] as const));
  const tokenOf = (address: string) => byAddress.get(address) ?? byAddress.get(lc(address));
  // By token, block (-1: a time alone) and time, each mark with its answer once it came: a rebuild looks up 200,000
  // (a key string built for each, and a wait per trade, were a tenth of a rebuild: issue 29 point 6). A fixed mark
  // does not depend on the time: one per block, answered at once. An oracle's round at a block is read once per block:
  // its marks at that block differ by time only in staleness.
  const memo = new Map<ValuationToken, Map<number, Map<number, MarkAsked>>>();
  const rounds = new Map<ValuationToken, Map<number, Asked<FeedRound | null>>>();
  const roundAt = (t: ValuationToken, block: number) => {
    const byBlock = innerMap(rounds, t);
    let a = byBlock.get(block);
    if (!a) byBlock.set(block, (a = asking(r.feedRound(t.feed!, { block }))));
    return a;
  };
  const ask = (t: ValuationToken, block: number | undefined, time: number): MarkAsked => {
    if (t.basis === "fixed") return answered(fixedMark(block));
    if (t.basis !== "oracle" || block === undefined)
      return asking(markAt(r, t, block === undefined ? { time } : { block, time }));
    const round = roundAt(t, block);
    return round.known
      ? answered(oracleMark(t, round.value, time))
      : asking(round.answer.then((x) => oracleMark(t, x, time)));
  };
  // An oracle's mark at a block once its round is known: the round's, or none (stale at that time, or no round); the
  // same object for every time it is fresh at (a rebuild asked one per trade: a map, an answer and a mark each).
  const none = answered(null);
  const fresh = new WeakMap<FeedRound, MarkAsked>();
  const oracleAsked = (t: ValuationToken, round: FeedRound | null, time: number) => {
    if (!markingRound(t, round, time)) return none;
    let m = fresh.get(round);
    if (!m) fresh.set(round, (m = answered(oracleMark(t, round, time))));
    return m;
  };
  const entry = (t: ValuationToken, block: number | undefined, time: number) => {
    if (t.basis === "oracle" && block !== undefined) {
      const round = roundAt(t, block);
      if (round.known) return oracleAsked(t, round.value, time);
    }
    const byTime = innerMap(innerMap(memo, t), block ?? -1);
    const fixed = t.basis === "fixed";
    let m = byTime.get(fixed ? 0 : time);
    if (!m) byTime.set(fixed ? 0 : time, (m = ask(t, block, time)));
    return m;
  };
  return {
    token: tokenOf,
    at(address: string, at: { block?: number; time: number }): Promise<Mark | null> {
      const t = tokenOf(address);
      return t ? entry(t, at.block, at.time).answer : Promise.resolve(null);
    },
    /**
     * The mark at a block (undefined: a time alone, as `at` without one) and its time as asked (its value once
     * `known`); null for a token without marks.
     */
    asked(address: string, block: number | undefined, time: number): MarkAsked | null {
      const t = tokenOf(address);
      return t ? entry(t, block, time) : null;
    },
  };
}
export type MarkMemo = ReturnType<typeof markMemo>;
/** Something asked of the marks' reader, with its answer once it came (`known`). */
type Asked<T> = { answer: Promise<T>; known: boolean; value: T | null };
export type MarkAsked = Asked<Mark | null>;
const answered = (value: Mark | null): MarkAsked => ({ answer: Promise.resolve(value), known: true, value });
/** Asked: its answer recorded when it comes (a failure is not: it is awaited again, and throws). */
function asking<T>(answer: Promise<T>): Asked<T> {
  const asked: Asked<T> = { answer, known: false, value: null };
  answer.then(
    (v) => Object.assign(asked, { known: true, value: v }),
    () => {},
  );
  return asked;
}

/** Each trade with the marks of its block (and whether each side's token has a mark at all). */
async function valuedTrades(marks: MarkMemo, trades: SeasonTrade[]): Promise<BookTrade[]> {
  // The marks not answered yet, asked together: one wait for the lot, not one per trade.
  const waits: Promise<Mark | null>[] = [];
  const ask = (address: string, t: SeasonTrade) => {
    const a = marks.asked(address, t.block, t.ts);
    if (a && !a.known) waits.push(a.answer);
    return a;
  };
  // Two lists, not an object per trade: a full rebuild values 100,000.
  const ins = trades.map((t) => ask(t.token_in.address, t));
  const outs = trades.map((t) => ask(t.token_out.address, t));
  if (waits.length) await Promise.all(waits);
  return trades.map((t, i) => ({
    id: t.id,
    ts: t.ts,
    block: t.block,
    token_in: t.token_in,
    amount_in: t.amount_in,
    token_out: t.token_out,
    amount_out: t.amount_out,
    mark_in: ins[i]?.value ?? null,
    mark_out: outs[i]?.value ?? null,
    marked_in: ins[i] !== null,
    marked_out: outs[i] !== null,
  }));
}

/** The marked tokens `trades` touch: the only ones a grid point or the end values. */
const heldOf = (marks: MarkMemo, trades: { token_in: BookToken; token_out: BookToken }[]) =>
  [...new Set(trades.flatMap((t) => [lc(t.token_in.address), lc(t.token_out.address)]))].filter((a) => marks.token(a));

/** The marks of `held` at a time, as a book reads them. */
async function marksAt(marks: MarkMemo, held: string[], time: number) {
  const usd = await markValues(marks, held, [time]);
  const m = new Map(held.map((a, i) => [a, usd[i]!]));
  return (token: string) => m.get(lc(token)) ?? null;
}

/**
 * The USD mark of each of `held` at each of `times` (null: none then), time by time; waits only where a mark is not
 * answered yet (a pass asks the same few of every entry, answered by the first).
 */
async function markValues(marks: MarkMemo, held: string[], times: number[]): Promise<(number | null)[]> {
  const asked = times.flatMap((time) => held.map((a) => marks.asked(a, undefined, time)));
  if (asked.some((a) => a !== null && !a.known)) await Promise.all(asked.map((a) => a?.answer));
  return asked.map((a) => a?.value?.usd ?? null);
}

const NO_MARKS = () => null;

/** The grid's points up to `valuedAt`, marks read from point `from` on (a kept book has passed the earlier ones). */
async function gridOf(marks: MarkMemo, held: string[], o: { starts: number; valuedAt: number }, from = 0) {
  const times = gridTimes(o.starts, o.valuedAt);
  const read = await Promise.all(times.slice(from).map((ts) => marksAt(marks, held, ts)));
  return times.map((ts, i) => ({ ts, marks: i < from ? NO_MARKS : read[i - from]! }));
}

/**
 * One entrant's book for the season: each trade valued at the marks of its block, the curve on
 * the grid, the end at `valuedAt` (the season's last second once it ended, else now). Answers the
 * book's numbers and every valuation with the mark it used.
 */
export async function entrantBook(
  marks: MarkMemo,
  trades: SeasonTrade[],
  o: { starts: number; valuedAt: number; ended: boolean },
) {
  const book = await valuedTrades(marks, trades);
  const held = heldOf(marks, trades);
  const grid = await gridOf(marks, held, o);
  return seasonBook(book, { endMarks: await marksAt(marks, held, o.valuedAt), grid, ended: o.ended });
}

/**
 * An entrant's book kept by the standings worker between passes (issue 29 point 6): the final
 * trades applied, valued once, and the replay after them.
 */
export type KeptEntrant = {
  trades: BookTrade[];
  book: KeptBook;
  /**
   * The list the last pass was given, its final trades and the marked tokens it holds: a kept list is replaced when
   * any of its trades changes or becomes final (api/league/kept.ts), so the same list needs neither derived again.
   */
  seen: { trades: SeasonTrade[]; done: SeasonTrade[]; held: string[] } | null;
  /**
   * The last answer of an entrant whose trades were all final, and what it was made of besides the kept book (its
   * window and the marks it read: at the end and at each grid point not passed): a pass that adds no trade to a book
   * and reads the same marks answers it again, the same object (what is derived from it by identity is not derived
   * again: the rows' inputs, copy detection's).
   */
  answer: { book: SeasonBook; made: (number | null)[] } | null;
};
export const keptEntrant = (): KeptEntrant => ({ trades: [], book: keptBook(), seen: null, answer: null });

/**
 * `entrantBook` from a kept book: only the final trades not yet applied are valued and added (a
 * change before them, or a grid point they had passed, replays the entrant from scratch); trades
 * not final yet (`final[i]` false for `trades[i]`: its block may still be reorganised) are never kept, and an
 * entrant with one is valued in full for this pass. Answers what `entrantBook` answers.
 */
export async function keptEntrantBook(
  marks: MarkMemo,
  kept: KeptEntrant,
  trades: SeasonTrade[],
  final: readonly boolean[],
  o: { starts: number; valuedAt: number; ended: boolean },
): Promise<SeasonBook> {
  const same = kept.seen?.trades === trades ? kept.seen : null;
  if (same && kept.answer && same.done.length === trades.length && kept.trades.length === trades.length) {
    const made = await madeOf(marks, kept, same.held, o);
    if (sameNumbers(made, kept.answer.made)) return kept.answer.book;
  }
  kept.answer = null;
  const done = same ? same.done : trades.filter((_, i) => final[i]);
  if (!same && !isPrefix(kept.trades, done)) Object.assign(kept, keptEntrant());
  const added = await valuedTrades(marks, done.slice(kept.trades.length));
  const held = same ? same.held : heldOf(marks, trades);
  kept.seen = { trades, done, held };
  // Grid points the kept book passed keep their profit: their marks are not read again.
  const grid = await gridOf(marks, held, o, kept.book.curve.length);
  if (!addTrades(kept.book, added, grid)) {
    Object.assign(kept, keptEntrant());
    return keptEntrantBook(marks, kept, trades, final, o);
  }
  kept.trades.push(...added);
  const end = { endMarks: await marksAt(marks, held, o.valuedAt), grid, ended: o.ended };
  if (done.length === trades.length) {
    const book = keptBookOf(kept.book, end);
    kept.answer = { book, made: await madeOf(marks, kept, held, o) };
    return book;
  }
  const open = await valuedTrades(
    marks,
    trades.filter((_, i) => !final[i]),
  );
  return seasonBook([...kept.trades, ...open], { ...end, grid: await gridOf(marks, held, o) });
}

/**
 * What a kept book's answer is made of besides the book itself: the window (its start, whether ended, how many grid
 * points, how many of them the book passed), then the marks of `held` at the end and at each point not passed.
 */
async function madeOf(
  marks: MarkMemo,
  kept: KeptEntrant,
  held: string[],
  o: { starts: number; valuedAt: number; ended: boolean },
) {
  const times = gridTimes(o.starts, o.valuedAt);
  const passed = kept.book.curve.length;
  const read = await markValues(marks, held, [o.valuedAt, ...times.slice(passed)]);
  return [o.starts, o.ended ? 1 : 0, times.length, passed, ...read];
}

const sameNumbers = (a: (number | null)[], b: (number | null)[]) =>
  a.length === b.length && a.every((x, i) => x === b[i]);

/** Whether `kept`'s ids begin `trades`, in order. */
function isPrefix(kept: { id: string }[], trades: { id: string }[]) {
  if (kept.length > trades.length) return false;
  for (let i = kept.length - 1; i >= 0; i--) if (kept[i]!.id !== trades[i]!.id) return false;
  return true;
}
