import { lc } from "../address.js";
/**
 * A prize entrant's season book (SPEC "League", issue 18 part 3), pure: the trades the service
 * relayed for the wallet and that were mined in the season, valued at independent marks only.
 *
 * - A marked token (USDG at $1, oracle feeds, the partner token's pool TWAP) is worth its net
 *   atoms from the season's trades at the mark of the moment; deposits, withdrawals and trades
 *   outside the service never enter the book.
 * - An unmarked token counts at cost while held (the marked side it was bought with, at that
 *   trade's mark), at proceeds when sold (the marked side it was sold for), and is written off if
 *   still held at season end. Average cost: a partial sale releases its share of the cost.
 * - A trade with no marked side cannot be valued: it moves cost between unmarked tokens and is
 *   counted in `unvalued`.
 *
 * Every valuation names the mark it used (its block and feed round), so anyone can recompute it.
 */
export type Mark = { usd: number; block: number; source: string; round: string | null };
export type BookToken = { address: string; decimals: number };
export type BookTrade = {
  id: string;
  ts: number;
  block: number;
  token_in: BookToken;
  amount_in: bigint;
  token_out: BookToken;
  amount_out: bigint;
  /** The marks at the trade's block: null for an unmarked token, or a marked one whose mark was unreadable then. */
  mark_in: Mark | null;
  mark_out: Mark | null;
  /**
   * Whether the token has an independent mark at all (USDG, a feed, the partner TWAP): a marked
   * token counts by its net atoms at the end marks, whatever its mark at the trade. Defaults to
   * whether the trade's mark is there.
   */
  marked_in?: boolean;
  marked_out?: boolean;
};
export type Valuation = { trade_id: string; side: "in" | "out"; token: string; usd: number; mark: Mark };
export type BookPoint = { ts: number; profit_usd: number };

const whole = (atoms: bigint, decimals: number) => Number(atoms) / 10 ** decimals;
const round6 = (x: number) => Math.round(x * 1e6) / 1e6;
/** A trade filled this far from its marks is reported as a price outlier (its score stands; the row says so). */
export const OUTLIER_BPS = 1_000;

/**
 * A position of a State: one object per token for the replay's life, updated in place (a full rebuild steps 100,000
 * trades; a new object per step and side was a sixth of what it allocated: issue 29 point 6). Never shared: each
 * replay makes its own.
 */
type Marked = { key: string; token: BookToken; atoms: bigint };
type Unmarked = { token: BookToken; atoms: bigint; cost: number };

type State = {
  /** Net atoms per marked token (its key kept beside: the sums walk the values, not entry pairs). */
  marked: Map<string, Marked>;
  /** Held atoms and remaining cost (USD) per unmarked token. */
  unmarked: Map<string, Unmarked>;
  /**
   * What fills got above the marks of their block (USD): a trade is credited at most what it paid,
   * so a fill bought cheap from a pool the entrant's own other wallet pushed away from the marks
   * (the partner TWAP lags 30 minutes) scores nothing; only later moves of the marks do.
   */
  uncredited: number;
  /** Proceeds less released cost of unmarked tokens sold: no one can check their price. */
  unmarkedRealised: number;
};

/** The running totals of a replay: the state, the valuations made, the counts, capital so far. */
type Replay = {
  s: State;
  valuations: Valuation[];
  unvalued: number;
  outliers: number;
  capital: number;
  lastMark: Map<string, number>;
  days: Set<number>;
};

const newReplay = (): Replay => ({
  s: { marked: new Map(), unmarked: new Map(), uncredited: 0, unmarkedRealised: 0 },
  valuations: [],
  unvalued: 0,
  outliers: 0,
  capital: 0,
  lastMark: new Map(),
  days: new Set(),
});

/**
 * Replays trades in order into the book's state; answers the valuations made and the counts.
 * `at(ts, state)` is called at each grid time (ascending) once the trades up to it are in.
 */
function replay(trades: BookTrade[], grid: number[] = [], at: (i: number, s: State) => void = () => {}) {
  const r = newReplay();
  let g = 0;
  const until = (ts: number) => {
    while (g < grid.length && grid[g]! < ts) at(g, r.s), g++;
  };
  for (const t of trades) {
    until(t.ts);
    step(r, t);
  }
  until(Number.POSITIVE_INFINITY);
  return r;
}

/** One trade into the replay: its valuations, counts, the positions it moves, the capital after it. */
function step(r: Replay, t: BookTrade) {
  const s = r.s;
  r.days.add(Math.floor(t.ts / 86_400));
  const usdIn = t.mark_in ? whole(t.amount_in, t.token_in.decimals) * t.mark_in.usd : null;
  const usdOut = t.mark_out ? whole(t.amount_out, t.token_out.decimals) * t.mark_out.usd : null;
  if (t.mark_in)
    r.valuations.push({
      trade_id: t.id,
      side: "in",
      token: lc(t.token_in.address),
      usd: round6(usdIn!),
      mark: t.mark_in,
    });
  if (t.mark_out)
    r.valuations.push({
      trade_id: t.id,
      side: "out",
      token: lc(t.token_out.address),
      usd: round6(usdOut!),
      mark: t.mark_out,
    });
  if (usdIn !== null && usdOut !== null && usdIn > 0 && Math.abs(usdOut / usdIn - 1) * 10_000 > OUTLIER_BPS)
    r.outliers++;
  if (usdIn !== null && usdOut !== null && usdOut > usdIn) s.uncredited += usdOut - usdIn;
  // The cost leaving an unmarked input (average cost), and the marked value that paid for an unmarked output.
  let released: number | null = 0;
  const markedIn = t.marked_in ?? t.mark_in !== null;
  const markedOut = t.marked_out ?? t.mark_out !== null;
  if (markedIn) {
    addMarked(s, t.token_in, -t.amount_in);
    released = null;
  } else {
    const h = unmarkedOf(s, t.token_in);
    const part = h.atoms > 0n ? Math.min(1, Number(t.amount_in) / Number(h.atoms)) : 0;
    released = h.cost * part;
    if (usdOut !== null) s.unmarkedRealised += usdOut - released;
    h.atoms = h.atoms > t.amount_in ? h.atoms - t.amount_in : 0n;
    h.cost -= released;
  }
  if (markedOut) addMarked(s, t.token_out, t.amount_out);
  else {
    const h = unmarkedOf(s, t.token_out);
    // The cost is what paid for it: the input at its mark, or the cost released by an unmarked input.
    const cost = usdIn ?? released;
    h.atoms += t.amount_out;
    h.cost += cost ?? 0;
  }
  if (usdIn === null && usdOut === null && !(markedIn && markedOut)) r.unvalued++;
  if (t.mark_in) r.lastMark.set(lc(t.token_in.address), t.mark_in.usd);
  if (t.mark_out) r.lastMark.set(lc(t.token_out.address), t.mark_out.usd);
  r.capital = Math.max(r.capital, grossHalf(s, r.lastMark));
}

/** `atoms` onto the position in `tk` (its token as this trade names it, as the last trade named it before). */
function addMarked(s: State, tk: BookToken, atoms: bigint) {
  const k = lc(tk.address);
  const h = s.marked.get(k);
  if (h) {
    h.token = tk;
    h.atoms += atoms;
  } else s.marked.set(k, { key: k, token: tk, atoms });
}

/** The unmarked position in `tk`, an empty one put in where none (named by this trade's token). */
function unmarkedOf(s: State, tk: BookToken): Unmarked {
  const k = lc(tk.address);
  let h = s.unmarked.get(k);
  if (!h) s.unmarked.set(k, (h = { token: tk, atoms: 0n, cost: 0 }));
  else h.token = tk;
  return h;
}

/**
 * Capital: half the book's gross exposure (every position's absolute value, the unmarked at cost),
 * at the last mark each token traded at: a swap of $1,000 of USDG for ETH has $1,000 out.
 */
function grossHalf(s: State, lastMark: Map<string, number>): number {
  let gross = 0;
  for (const h of s.marked.values()) gross += Math.abs(whole(h.atoms, h.token.decimals)) * (lastMark.get(h.key) ?? 0);
  for (const h of s.unmarked.values()) if (h.atoms > 0n) gross += h.cost;
  return gross / 2;
}

/**
 * The book's profit at `marks` (null for a token without one then): marked tokens at their marks, unmarked at cost, or
 * written off at the end.
 */
function profitAt(
  s: State,
  marks: (token: string) => number | null,
  end: boolean,
): { usd: number; unmarkedNow: number } {
  let usd = 0;
  let unmarkedNow = 0;
  for (const h of s.marked.values()) {
    const m = marks(h.key);
    if (m === null) unmarkedNow++;
    // A token that lost its mark counts nothing (the safe side: no score from a price nobody can check).
    else usd += whole(h.atoms, h.token.decimals) * m;
  }
  if (!end) for (const h of s.unmarked.values()) if (h.atoms > 0n) usd += h.cost;
  return { usd: usd - s.uncredited, unmarkedNow };
}

/** A point of the grid: its time and the marks then (null for a token without one). */
export type GridPoint = { ts: number; marks: (token: string) => number | null };
export type BookOptions = { endMarks: (token: string) => number | null; grid: GridPoint[]; ended: boolean };
/** The order a book replays its trades in: block, time, id. */
const tradeOrder = (a: BookTrade, b: BookTrade) =>
  a.block - b.block || a.ts - b.ts || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
const pointAt = (s: State, g: GridPoint): BookPoint => ({
  ts: g.ts,
  profit_usd: round6(profitAt(s, g.marks, false).usd),
});

/**
 * The standing's numbers for one entrant: profit (the score, six decimals), return on the capital
 * the book had out, max drawdown over `grid` (each point's marks given), trades, active days, the
 * trades that could not be valued, the unmarked tokens still held, price outliers, and every
 * valuation with its mark.
 */
export function seasonBook(trades: BookTrade[], o: BookOptions) {
  const sorted = [...trades].sort(tradeOrder);
  const grid = [...o.grid].sort((a, b) => a.ts - b.ts);
  const curve: BookPoint[] = [];
  // A grid point counts the trades mined at or before its time.
  const r = replay(
    sorted,
    grid.map((g) => g.ts + 1),
    (i, s) => curve.push(pointAt(s, grid[i]!)),
  );
  // The replay is this call's own: its valuations are the answer's, uncopied.
  return summaryOf(r, sorted.length, curve, o, r.valuations);
}

/** The book's numbers from a replay of `trades` trades and its curve, at the end marks. */
function summaryOf(
  r: Replay,
  trades: number,
  curve: BookPoint[],
  o: Omit<BookOptions, "grid">,
  valuations: Valuation[],
) {
  const final = profitAt(r.s, o.endMarks, o.ended);
  let peak = 0;
  let dd = 0;
  for (const p of [...curve, { ts: Number.MAX_SAFE_INTEGER, profit_usd: final.usd }]) {
    peak = Math.max(peak, p.profit_usd);
    dd = Math.max(dd, peak - p.profit_usd);
  }
  const capital = r.capital > 0 ? r.capital : 0;
  return {
    profit_usd: round6(final.usd),
    score: round6(final.usd),
    capital_usd: round6(capital),
    return_pct: capital > 0 ? Math.round((final.usd / capital) * 10_000) / 100 : null,
    max_dd_pct: capital > 0 ? Math.round((dd / capital) * 10_000) / 100 : null,
    trades,
    active_days: r.days.size,
    unvalued: r.unvalued,
    open_unpriced: [...r.s.unmarked.values()].filter((h) => h.atoms > 0n).length + final.unmarkedNow,
    price_outliers: r.outliers,
    uncredited_usd: round6(r.s.uncredited),
    unmarked_realised_usd: round6(r.s.unmarkedRealised),
    valuations,
    curve,
  };
}
export type SeasonBook = ReturnType<typeof seasonBook>;

/**
 * An entrant's book kept between standings passes (issue 29 point 6): the replay after the trades
 * applied so far and the grid points those trades already passed (their profit can no longer
 * change). A pass adds only the trades that came in since, so its cost is the new trades, not the
 * season.
 */
export type KeptBook = {
  r: Replay;
  curve: BookPoint[];
  last: BookTrade | null;
  maxTs: number;
  trades: number;
  /**
   * The valuations as last answered (a copy: the replay's own list grows): the same array while no trade was added,
   * so what is derived from it is not derived again (lib/league/board copy inputs). Renewed when the replay's list is
   * longer: it only grows, and a replay from scratch is a new KeptBook (never `r` reset in place).
   */
  answered: Valuation[] | null;
};

export const keptBook = (): KeptBook => ({
  r: newReplay(),
  curve: [],
  last: null,
  maxTs: -Infinity,
  trades: 0,
  answered: null,
});

/**
 * Adds `trades` (the ones after those applied) over `grid` (the season's points so far; a point
 * already passed needs no marks). Answers false, changing nothing, when the book cannot take them
 * as a full replay would: a trade sorts before one applied, or the grid gained a point the applied
 * trades had passed. The caller then replays the entrant from scratch.
 */
export function addTrades(b: KeptBook, trades: BookTrade[], grid: GridPoint[]): boolean {
  const sorted = [...trades].sort(tradeOrder);
  const g = [...grid].sort((x, y) => x.ts - y.ts);
  if (b.last && sorted.length && tradeOrder(sorted[0]!, b.last) <= 0) return false;
  if (passed(g, b.maxTs) !== b.curve.length || (b.curve.length && g[b.curve.length - 1]!.ts !== b.curve.at(-1)!.ts))
    return false;
  for (const t of sorted) {
    // As in a full replay: a grid point is passed by the first trade mined after its time (and its second).
    while (b.curve.length < g.length && g[b.curve.length]!.ts + 1 < t.ts)
      b.curve.push(pointAt(b.r.s, g[b.curve.length]!));
    step(b.r, t);
    b.last = t;
    b.maxTs = Math.max(b.maxTs, t.ts);
    b.trades++;
  }
  return true;
}

/** How many leading points of `grid` (ascending) a book whose latest trade was at `maxTs` has passed. */
function passed(grid: GridPoint[], maxTs: number): number {
  let n = 0;
  while (n < grid.length && grid[n]!.ts + 1 < maxTs) n++;
  return n;
}

/**
 * The kept book's numbers, as `seasonBook` answers them for the same trades: the points not yet
 * passed are valued at the state now. `grid` is the one of the last `addTrades`.
 */
export function keptBookOf(b: KeptBook, o: BookOptions): SeasonBook {
  const grid = [...o.grid].sort((x, y) => x.ts - y.ts);
  const curve = [...b.curve, ...grid.slice(b.curve.length).map((g) => pointAt(b.r.s, g))];
  if (b.answered?.length !== b.r.valuations.length) b.answered = [...b.r.valuations];
  return summaryOf(b.r, b.trades, curve, o, b.answered);
}
