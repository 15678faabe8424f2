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

type State = {
  /** Net atoms per marked token. */
  marked: Map<string, { token: BookToken; atoms: bigint }>;
  /** Held atoms and remaining cost (USD) per unmarked token. */
  unmarked: Map<string, { token: BookToken; atoms: bigint; cost: number }>;
  /**
   * What fills got above the marks of their block (USD): a trade is credited at most what it paid,
   * so a fill bought cheap from a pool the entrant's own other wallet pushed away from the marks
   * (the partner TWAP lags 30 minutes) scores nothing; only later moves of the marks do.
   */
  uncredited: number;
  /** Proceeds less released cost of unmarked tokens sold: no one can check their price. */
  unmarkedRealised: number;
};

/**
 * Replays trades in order into the book's state; answers the valuations made and the counts.
 * `at(ts, state)` is called at each grid time (ascending) once the trades up to it are in.
 */
function replay(trades: BookTrade[], grid: number[] = [], at: (i: number, s: State) => void = () => {}) {
  const s: State = { marked: new Map(), unmarked: new Map(), uncredited: 0, unmarkedRealised: 0 };
  const valuations: Valuation[] = [];
  let unvalued = 0;
  let outliers = 0;
  let capital = 0;
  const lastMark = new Map<string, number>();
  const days = new Set<number>();
  const addMarked = (t: BookToken, atoms: bigint) => {
    const k = lc(t.address);
    s.marked.set(k, { token: t, atoms: (s.marked.get(k)?.atoms ?? 0n) + atoms });
  };
  let g = 0;
  const until = (ts: number) => {
    while (g < grid.length && grid[g]! < ts) at(g, s), g++;
  };
  for (const t of trades) {
    until(t.ts);
    days.add(Math.floor(t.ts / 86_400));
    const usdIn = t.mark_in ? whole(t.amount_in, t.token_in.decimals) * t.mark_in.usd : null;
    const usdOut = t.mark_out ? whole(t.amount_out, t.token_out.decimals) * t.mark_out.usd : null;
    if (t.mark_in)
      valuations.push({
        trade_id: t.id,
        side: "in",
        token: lc(t.token_in.address),
        usd: round6(usdIn!),
        mark: t.mark_in,
      });
    if (t.mark_out)
      valuations.push({
        trade_id: t.id,
        side: "out",
        token: lc(t.token_out.address),
        usd: round6(usdOut!),
        mark: t.mark_out,
      });
    if (usdIn !== null && usdOut !== null && usdIn > 0 && Math.abs(usdOut / usdIn - 1) * 10_000 > OUTLIER_BPS)
      outliers++;
    if (usdIn !== null && usdOut !== null && usdOut > usdIn) s.uncredited += usdOut - usdIn;
    // The cost leaving an unmarked input (average cost), and the marked value that paid for an unmarked output.
    let released: number | null = 0;
    const markedIn = t.marked_in ?? t.mark_in !== null;
    const markedOut = t.marked_out ?? t.mark_out !== null;
    if (markedIn) {
      addMarked(t.token_in, -t.amount_in);
      released = null;
    } else {
      const k = lc(t.token_in.address);
      const h = s.unmarked.get(k) ?? { token: t.token_in, atoms: 0n, cost: 0 };
      const part = h.atoms > 0n ? Math.min(1, Number(t.amount_in) / Number(h.atoms)) : 0;
      released = h.cost * part;
      if (usdOut !== null) s.unmarkedRealised += usdOut - released;
      s.unmarked.set(k, {
        token: t.token_in,
        atoms: h.atoms > t.amount_in ? h.atoms - t.amount_in : 0n,
        cost: h.cost - released,
      });
    }
    if (markedOut) addMarked(t.token_out, t.amount_out);
    else {
      const k = lc(t.token_out.address);
      const h = s.unmarked.get(k) ?? { token: t.token_out, atoms: 0n, cost: 0 };
      // The cost is what paid for it: the input at its mark, or the cost released by an unmarked input.
      const cost = usdIn ?? released;
      s.unmarked.set(k, { token: t.token_out, atoms: h.atoms + t.amount_out, cost: h.cost + (cost ?? 0) });
    }
    if (usdIn === null && usdOut === null && !(markedIn && markedOut)) unvalued++;
    if (t.mark_in) lastMark.set(lc(t.token_in.address), t.mark_in.usd);
    if (t.mark_out) lastMark.set(lc(t.token_out.address), t.mark_out.usd);
    capital = Math.max(capital, grossHalf(s, lastMark));
  }
  until(Number.POSITIVE_INFINITY);
  return { s, valuations, unvalued, outliers, capital, activeDays: days.size };
}

/**
 * Capital: half the book's gross exposure (every position's absolute value, the unmarked at cost),
 * at the last mark each token traded at: a swap of $1,000 of USDG for ETH has $1,000 out.
 */
function grossHalf(s: State, lastMark: Map<string, number>): number {
  let gross = 0;
  for (const [k, h] of s.marked) gross += Math.abs(whole(h.atoms, h.token.decimals)) * (lastMark.get(k) ?? 0);
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
  for (const [k, h] of s.marked) {
    const m = marks(k);
    if (m === null) unmarkedNow++;
    // A token that lost its mark counts nothing (the safe side: no score from a price nobody can check).
    else usd += whole(h.atoms, h.token.decimals) * m;
  }
  if (!end) for (const h of s.unmarked.values()) if (h.atoms > 0n) usd += h.cost;
  return { usd: usd - s.uncredited, unmarkedNow };
}

/**
 * The standing's numbers for one entrant: profit (the score, six decimals), return on the capital
 * the book had out, max drawdown over `grid` (each point's marks given), trades, active days, the
 * trades that could not be valued, the unmarked tokens still held, price outliers, and every
 * valuation with its mark.
 */
export function seasonBook(
  trades: BookTrade[],
  o: {
    endMarks: (token: string) => number | null;
    grid: { ts: number; marks: (token: string) => number | null }[];
    ended: boolean;
  },
) {
  const sorted = [...trades].sort(
    (a, b) => a.block - b.block || a.ts - b.ts || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
  const grid = [...o.grid].sort((a, b) => a.ts - b.ts);
  const curve: BookPoint[] = [];
  // A grid point counts the trades mined at or before its time.
  const r = replay(
    sorted,
    grid.map((g) => g.ts + 1),
    (i, s) => curve.push({ ts: grid[i]!.ts, profit_usd: round6(profitAt(s, grid[i]!.marks, false).usd) }),
  );
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
    trades: sorted.length,
    active_days: r.activeDays,
    unvalued: r.unvalued,
    open_unpriced: [...r.s.unmarked.values()].filter((h) => h.atoms > 0n).length + final.unmarkedNow,
    price_outliers: r.outliers,
    uncredited_usd: round6(r.s.uncredited),
    unmarked_realised_usd: round6(r.s.unmarkedRealised),
    valuations: r.valuations,
    curve,
  };
}
