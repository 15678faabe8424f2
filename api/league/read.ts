import { z } from "zod";
import type { Config } from "../../lib/config.js";
import { calendarAt, season as seasonAt, type Season } from "../../lib/leagueCalendar.js";
import { MIN_ACTIVE_DAYS, MIN_CLUSTERS, MIN_TRADES, PRIZE_SPLIT_BPS, prizeStandings, sharesOf } from "../../lib/leagueRules.js";
import { GRID_S, LEAGUE_TWAP_WINDOW_S } from "../../lib/leagueValuation.js";
import { FEED_GRACE_S, FEED_HEARTBEAT_S } from "../../lib/markStale.js";
import { OUTLIER_BPS } from "../../lib/leagueBook.js";
import { parseBody, Refusal } from "../errors/index.js";
import { PRACTICE_BOOK_USD, practiceBoard } from "./practice.js";
import { hubsOf, prizeBoard, valuationTokens, type BoardDeps } from "./prize.js";
import { ledgerOf, reserveBefore, type Ledger } from "./reserve.js";
import { PRACTICE_MIN_INTERVAL_S } from "./entries.js";
import { createBoardsWorker } from "./boards.js";

export type ReadDeps = BoardDeps & {
  /** The standings worker's pause between passes (ms, default 15 s); 0: no timer (tests run its passes). */
  cacheMs?: number;
  /** Sees each standings computation as it starts (tests count and hold them). */
  onCompute?: (key: string) => Promise<void>;
};

/** The ended seasons whose boards the worker keeps computing until decided: the one just ended and the one before. */
export const RECENT_CLOSED_SEASONS = 2;

type Board = "prize" | "practice";
/** A board's answer, computed or frozen (rows as served). */
type BoardBody = { rows: Record<string, unknown>[]; outcome: { pays: boolean; why: string } | null; places: (string | null)[] | null; amounts_atoms: string[] | null; valued_at?: number; ledger?: Ledger; published?: unknown; block?: number; decided_at?: number };
const nowS = (d: Pick<ReadDeps, "clock">) => Math.floor(d.clock() / 1000);
export const standingsQuery = z.object({ season: z.coerce.number().int().min(1).max(100_000).optional(), board: z.enum(["prize", "practice"]).optional() }).strict();

/** The published rules (GET league `rules`): what the rows are computed by, so anyone can recompute them. */
export function leagueRules(config: Config) {
  return {
    score: "season profit in USD (six decimals); highest wins; return and drawdown are context",
    valuation: {
      marks: "independent only: USDG at $1, oracle feeds (a round older than the heartbeat plus grace is no mark; stock feeds count session time), the partner token at its USDG pool's TWAP",
      tokens: valuationTokens(config),
      twap_window_s: LEAGUE_TWAP_WINDOW_S,
      feed_heartbeat_s: FEED_HEARTBEAT_S,
      feed_grace_s: FEED_GRACE_S,
      unmarked: "at cost while held, at proceeds when sold, written off if held at season end",
      lost_mark: "a marked token without a mark at the valuation counts nothing",
      drawdown_grid_s: GRID_S,
      drawdown: "largest fall of the profit from its peak, on each day's 00:00 UTC of the season and at the end, over the capital",
      capital: "half the book's largest gross exposure at the marks of its trades",
      price_outlier_bps: OUTLIER_BPS,
      book: "every trade the service relayed for the trading wallet and that was mined in the season (own key, fast, session, hosted live); deposits, withdrawals and outside trades do not count",
    },
    split: { bps: PRIZE_SPLIT_BPS, places: 3, one_per_owner_cluster: true, token: "the partner token, to each winner's agent wallet as the partner vault records it" },
    minimum_field: { clusters: MIN_CLUSTERS, traded: { trades: MIN_TRADES, active_days: MIN_ACTIVE_DAYS } },
    clusters: { links: ["address", "transfer", "funder"], hubs: [...hubsOf(config)], note: "hubs never link; funder is the first token transfer into an address (native ETH moves leave no log and are not read)" },
    prize_cap_usd: config.league.prizeCapUsd,
    reserve_ceiling_seasons: config.league.ceilingSeasons,
    copy_trading_window_s: null,
    copy_trading: "not detected in this version: no rule holds a prize for copied trades",
    practice_starting_book: { USDG: PRACTICE_BOOK_USD },
    division: "one division: spot trades on chain 4663",
    hosted_assets: { pairs_against: "USDG", assets: Object.values(config.tokens).filter((t) => t.kind === "native" || t.kind === "crypto" || t.kind === "partner").map((t) => t.symbol), min_interval_s: PRACTICE_MIN_INTERVAL_S },
  };
}

/** The seasons whose boards the worker computes at `now`: the one playing and the RECENT_CLOSED_SEASONS before it. */
export function workedSeasons(now: number): number[] {
  const cal = calendarAt(now);
  const top = cal.current.status === "open" ? cal.current.number : cal.current.number - 1;
  const out = [];
  for (let n = top; n >= 1 && n >= top - RECENT_CLOSED_SEASONS; n--) out.push(n);
  return out;
}

/** A board nobody plays this season: the answer without a read (prize: the outcome of an empty field). */
function emptyBoard(board: Board, s: Season, now: number): BoardBody {
  const valuedAt = Math.min(s.ends - 1, now);
  if (board === "practice") return { rows: [], outcome: null, places: null, amounts_atoms: null, valued_at: valuedAt };
  const st = prizeStandings({ entries: [], books: new Map(), links: [], decided: false, ends: s.ends, checked_at: valuedAt, shares: null });
  return { rows: [], outcome: st.outcome, places: st.places, amounts_atoms: sharesOf(0n), valued_at: valuedAt, published: { entries: [], books: {} } };
}

/**
 * The league's reading routes (no key): standings computed at the marks of now while a season
 * plays, provisional once it ended, frozen once decided. Boards not decided are computed only by
 * the standings worker (boards.ts), for the seasons of `workedSeasons` that have an entry on that
 * board (at most 2 x 3 keys); a reader gets its last answer. An empty board answers `emptyBoard`.
 */
export function createLeagueReader(d: ReadDeps) {
  const worker = createBoardsWorker({ clock: d.clock, compute, keys: workedKeys, intervalMs: d.cacheMs ?? 15_000, logger: d.logger, onCompute: d.onCompute });

  /** board:season for each worked season not decided and with an entry on that board. */
  async function workedKeys(): Promise<string[]> {
    const seasons = workedSeasons(nowS(d));
    if (!seasons.length) return [];
    const done = await d.db.query<{ season: number; board: string }>("SELECT season, board FROM app.league_results WHERE season = ANY($1)", [seasons]);
    const keys: string[] = [];
    for (const n of seasons) {
      for (const board of ["prize", "practice"] as const) {
        if (done.some((r) => Number(r.season) === n && r.board === board)) continue;
        if ((await entrantsOf(board, n)) > 0) keys.push(`${board}:${n}`);
      }
    }
    return keys;
  }

  async function decided(n: number, board: Board) {
    const [r] = await d.db.query<{ answer: string; decided_at: string; block: string }>("SELECT answer, decided_at::text AS decided_at, block::text AS block FROM app.league_results WHERE season = $1 AND board = $2", [n, board]);
    return r ? ({ outcome: null, places: null, amounts_atoms: null, ...(JSON.parse(r.answer) as object), decided_at: Number(r.decided_at) } as BoardBody) : null;
  }

  /** A board of a season not yet decided: at the marks of now (open) or of its last second (ended). */
  async function compute(key: string): Promise<BoardBody> {
    const [board, num] = key.split(":") as [Board, string];
    const s = seasonAt(Number(num), nowS(d));
    const head = await d.indexed.head();
    const valuedAt = Math.min(s.ends - 1, nowS(d), head?.timestamp ?? 0);
    if (board === "practice") return { rows: await practiceBoard(d, s, valuedAt), outcome: null, places: null, amounts_atoms: null, valued_at: valuedAt };
    const block = await d.chain.getBlockNumber();
    const prize = await prizeBoard(d, s, { valuedAt, block, ended: s.status === "closed", decided: false, shares: null });
    const ledger = await ledgerOf(d, s, { before: await reserveBefore(d.db, s.number), pays: prize.outcome.pays, valuedAt, block, settled: false });
    for (const r of prize.rows) r.prize_atoms = r.place !== null ? ledger.shares[r.place - 1]! : null;
    return { rows: prize.rows, outcome: prize.outcome, places: prize.places, amounts_atoms: ledger.shares, valued_at: valuedAt, ledger, published: prize.published, block: Number(block) };
  }

  async function boardOf(n: number, board: Board): Promise<{ s: Season; body: BoardBody; basis: "decided" | "estimate" | "provisional" }> {
    const s = seasonAt(n, nowS(d));
    const done = await decided(n, board);
    if (done) return { s, body: done, basis: "decided" };
    if (s.status === "upcoming") return { s, body: { rows: [], outcome: null, places: null, amounts_atoms: null }, basis: "estimate" };
    return { s, body: await liveBody(s, board), basis: s.status === "open" ? "estimate" : "provisional" };
  }

  /** A board of a season that plays or ended, not decided: the worker's last answer, or the empty board's. */
  async function liveBody(s: Season, board: Board): Promise<BoardBody> {
    if ((await entrantsOf(board, s.number)) === 0) return emptyBoard(board, s, nowS(d));
    if (!workedSeasons(nowS(d)).includes(s.number)) throw new Refusal("LEAGUE_UNAVAILABLE", `season ${s.number}'s ${board} standings are computed only while it is among the latest ${RECENT_CLOSED_SEASONS} ended seasons; it waits for its decision`, {}, { retryAfterS: 60 });
    return worker.get(`${board}:${s.number}`);
  }

  async function entrantsOf(board: Board, n: number): Promise<number> {
    const s = seasonAt(n, nowS(d));
    const [r] = await d.db.query<{ n: string }>("SELECT count(*)::text AS n FROM app.league_entries WHERE board = $1 AND from_season <= $2 AND entered_at < $3 AND (left_at IS NULL OR left_at >= $4)", [board, n, s.ends, s.starts]);
    return Number(r?.n ?? 0);
  }

  async function standings(query: Record<string, string>) {
    const q = parseBody(standingsQuery, query);
    const cal = calendarAt(nowS(d));
    const n = q.season ?? cal.current.number;
    if (n > cal.next.number) throw new Refusal("NO_SEASON", `season ${n} is not on the calendar yet (the next is ${cal.next.number})`);
    const board = q.board ?? "prize";
    const { s, body, basis } = await boardOf(n, board);
    return {
      board,
      season: n,
      status: s.status,
      rows: body.rows,
      outcome: body.outcome ?? null,
      places: body.places ?? null,
      amounts_atoms: board === "prize" ? (body.amounts_atoms ?? null) : null,
      amounts_basis: board === "prize" ? basis : null,
      decided: basis === "decided",
      valued_at: body.valued_at ?? null,
      entrants_next: await entrantsOf(board, n + 1),
      now: nowS(d),
    };
  }

  async function payoutsOf(n: number) {
    return d.db.query<{ place: number; entry_id: string; agent_id: string; recipient: string; amount: string; status: string; tx_hash: string | null; block: string | null; token: string }>("SELECT place, entry_id, agent_id::text AS agent_id, recipient, amount, status, tx_hash, block::text AS block, token FROM app.league_payouts WHERE season = $1 ORDER BY place", [n]);
  }

  async function winnersOf(n: number, rows: Record<string, unknown>[]) {
    const pays = await payoutsOf(n);
    return rows
      .filter((r) => r.place !== null && r.place !== undefined)
      .map((r) => {
        const p = pays.find((x) => x.place === r.place);
        return { place: r.place, entry_id: r.entry_id, agent_id: r.agent_id, symbol: r.symbol, label: r.label, score: r.score, profit_usd: r.profit_usd, amount: p?.amount ?? r.prize_atoms ?? null, status: shownStatus(p?.status), tx_hash: p?.status === "mined" ? p.tx_hash : null };
      });
  }

  async function ledgerRow(n: number): Promise<{ ledger: Ledger; settled_at: number | null } | null> {
    const [r] = await d.db.query<{ ledger: string; settled_at: string | null }>("SELECT ledger, settled_at::text AS settled_at FROM app.league_ledgers WHERE season = $1", [n]);
    return r ? { ledger: JSON.parse(r.ledger) as Ledger, settled_at: r.settled_at === null ? null : Number(r.settled_at) } : null;
  }

  /** A season on the calendar (1 to the next), from a path segment: 404 NO_SEASON otherwise. */
  function seasonNumber(raw: string): number {
    const n = /^[1-9][0-9]{0,5}$/.test(raw) ? Number(raw) : NaN;
    if (!Number.isSafeInteger(n) || n > calendarAt(nowS(d)).next.number) throw new Refusal("NO_SEASON", `no season ${raw}`);
    return n;
  }

  async function seasonDetail(raw: string) {
    const n = seasonNumber(raw);
    const st = await standings({ season: String(n), board: "prize" });
    const l = await ledgerRow(n);
    const body = (await boardOf(n, "prize")).body;
    const ledger = l?.ledger ?? body.ledger ?? null;
    const pays = await payoutsOf(n);
    return {
      ...st,
      ledger,
      withdrawal: ledger ? { tx_hash: null, amount: ledger.added, ts: l?.settled_at ?? null, note: "the reserve wallet receives the stake's gains itself: half is added to the prize reserve without a withdrawal transaction" } : null,
      payouts: pays.map((p) => ({ place: p.place, entry_id: p.entry_id, agent_id: Number(p.agent_id), recipient: p.recipient, amount: p.amount, status: shownStatus(p.status), tx_hash: p.status === "held" ? null : p.tx_hash })),
      winners: await winnersOf(n, st.rows),
      settled_at: l?.settled_at ?? null,
    };
  }

  /** One season's line of GET league/seasons. */
  async function seasonSummary(n: number) {
    const s = seasonAt(n, nowS(d));
    const [entrants, practice, done] = await Promise.all([entrantsOf("prize", n), entrantsOf("practice", n), decided(n, "prize")]);
    const outcome = done?.outcome ?? null;
    return {
      number: n,
      name: s.name,
      status: s.status,
      missed: s.status === "closed" && entrants + practice === 0,
      starts_at: s.starts_at,
      ends_at: s.ends_at,
      entrants,
      practice_entrants: practice,
      decided: !!done,
      winners: done ? await winnersOf(n, done.rows) : [],
      pays: outcome ? outcome.pays : null,
      why: outcome ? outcome.why : s.status === "closed" ? (entrants + practice === 0 ? "nobody played" : "not decided yet") : s.status === "open" ? "playing" : "not started",
    };
  }

  async function seasons() {
    const cal = calendarAt(nowS(d));
    const out = [];
    for (let n = cal.next.number; n >= 1; n--) out.push(await seasonSummary(n));
    return { seasons: out, now: nowS(d) };
  }

  /** The current season's estimate of the reserve and the budget (GET league `reserve.estimate`). */
  async function estimate() {
    const cal = calendarAt(nowS(d));
    if (cal.current.status !== "open") return { status: "pending", why: "no season is playing", reserve_before: (await reserveBefore(d.db, cal.next.number)).toString() };
    const { body } = await boardOf(cal.current.number, "prize");
    const l = body.ledger;
    const outcome = body.outcome;
    if (!l) return { status: "pending", why: "no ledger yet" };
    const status = l.status === "incomplete" ? "incomplete" : outcome && !outcome.pays ? "pending" : "estimate";
    return { status, ...(status !== "estimate" ? { why: l.why ?? outcome?.why ?? null } : {}), reserve_before: l.reserve_before, gain_so_far: l.gain, reserve: l.reserve, budget: l.budget, shares: l.shares, cap: l.cap, ceiling: l.ceiling, kept_staked: l.kept_staked, cap_usd: l.cap_usd, orbio_usd: l.orbio_usd, mark_ts: l.mark_ts };
  }

  async function reserveHead() {
    const [r] = await d.db.query<{ ledger: string }>("SELECT ledger FROM app.league_ledgers ORDER BY season DESC LIMIT 1");
    return r ? (JSON.parse(r.ledger) as Ledger).reserve_after : "0";
  }

  async function league() {
    const cal = calendarAt(nowS(d));
    const n = cal.current.number;
    // The last five decided seasons, read as such (not by walking the whole calendar).
    const decidedSeasons = await d.db.query<{ season: number }>("SELECT season FROM app.league_results WHERE board = 'prize' ORDER BY season DESC LIMIT 5");
    const past = await Promise.all(decidedSeasons.map((r) => seasonSummary(Number(r.season))));
    return {
      season: cal.current,
      next_season: cal.next,
      entrants: await entrantsOf("prize", n),
      practice_entrants: await entrantsOf("practice", n),
      schedule: [0, 1, 2, 3].map((k) => {
        const s = seasonAt(cal.next.number + k, nowS(d));
        return { number: s.number, name: s.name, starts_at: s.starts_at, ends_at: s.ends_at };
      }),
      reserve: { on: d.config.league.reserveWallet !== null, agent_id: d.config.league.reserveAgent, reserve_atoms: await reserveHead(), cap_usd: d.config.league.prizeCapUsd, estimate: await estimate() },
      rules: leagueRules(d.config),
      past,
      now: nowS(d),
    };
  }

  async function reserve() {
    const rows = await d.db.query<{ season: number; ledger: string; settled_at: string | null }>("SELECT season, ledger, settled_at::text AS settled_at FROM app.league_ledgers ORDER BY season DESC");
    return {
      on: d.config.league.reserveWallet !== null,
      agent_id: d.config.league.reserveAgent,
      rows: rows.map((r) => ({ season: r.season, ...(JSON.parse(r.ledger) as Ledger) })),
      estimate: await estimate(),
      rules: { split_bps: PRIZE_SPLIT_BPS, half_gain_to_reserve: true, prize_cap_usd: d.config.league.prizeCapUsd, ceiling_seasons: d.config.league.ceilingSeasons, wallet: d.config.league.reserveWallet },
    };
  }

  /**
   * A season's published inputs (beyond SPEC): the entries with their owners' signed statements,
   * and each entry's relayed trades with the plan `league:verify` recomputes from the receipt.
   */
  async function books(raw: string) {
    const n = seasonNumber(raw);
    const [r] = await d.db.query<{ books: string | null; block: string; valued_at: string }>("SELECT books, block::text AS block, valued_at::text AS valued_at FROM app.league_results WHERE season = $1 AND board = 'prize'", [n]);
    if (r) return { season: n, decided: true, block: Number(r.block), valued_at: Number(r.valued_at), ...(JSON.parse(r.books ?? "{}") as object) };
    const s = seasonAt(n, nowS(d));
    if (s.status === "upcoming") return { season: n, decided: false, block: null, valued_at: null, from_block: d.config.startBlock, entries: [], books: {} };
    const body = await liveBody(s, "prize");
    return { season: n, decided: false, block: body.block ?? null, valued_at: body.valued_at ?? null, from_block: d.config.startBlock, ...(body.published as object) };
  }

  return { league: guarded(league), standings: guarded(standings), seasons: guarded(seasons), seasonDetail: guarded(seasonDetail), reserve: guarded(reserve), books: guarded(books), worker };
}
export type LeagueReader = ReturnType<typeof createLeagueReader>;
export type { Season };

/** A reading route whose chain, indexer or store read failed answers 503 LEAGUE_UNAVAILABLE (retryable), never a 500. */
function guarded<A extends unknown[], R>(f: (...a: A) => Promise<R>): (...a: A) => Promise<R> {
  return async (...a) => {
    try {
      return await f(...a);
    } catch (err) {
      if (err instanceof Refusal) throw err;
      throw new Refusal("LEAGUE_UNAVAILABLE", "the league's standings could not be read; try again shortly", {}, { cause: err, retryAfterS: 5 });
    }
  };
}

/** A payout's status as answered: `planned` until mined (signed and sent too), `mined`, or `held` (settle.ts PayoutStatus: never sent, its recipient is listed). */
function shownStatus(s: string | undefined): "planned" | "mined" | "held" {
  return s === "mined" || s === "held" ? s : "planned";
}
