import { z } from "zod";
import { calendarAt, season as seasonAt, type Season } from "../../lib/league/calendar.js";
import { prizeStandings, sharesOf } from "../../lib/league/rules.js";
import { Refusal } from "../errors/index.js";
import { practiceBoard } from "./practice.js";
import { ledgerIds, prizeBoard, type BoardDeps } from "./prize.js";
import { payoutBookOf, reserveBefore, type PayoutBook } from "./reserve.js";
import type { BoardsWorker } from "./boards.js";
import type { BookPoint } from "../../lib/league/book.js";

export type ReadDeps = BoardDeps & {
  /** The standings worker's pause between passes (ms, default 15 s); 0: no timer (tests run its passes). */
  cacheMs?: number;
  /** Sees each standings computation as it starts (tests count and hold them). */
  onCompute?: (key: string) => Promise<void>;
  /** The standings lease's ttl (ms, default 60 s): how long a dead holder keeps the others from computing. */
  leaseMs?: number;
};

/** What the reading functions run over: the deps and the standings worker whose answers they serve. */
export type Reading = ReadDeps & { worker: Pick<BoardsWorker<BoardBody>, "get"> };

/** The ended seasons whose boards the worker keeps computing until decided: the one just ended and the one before. */
export const RECENT_CLOSED_SEASONS = 2;

export type Board = "prize" | "practice";
/** A board's answer, computed or frozen (rows as served; the payout book is served as `ledger`). */
export type BoardBody = {
  rows: Record<string, unknown>[];
  outcome: { pays: boolean; why: string } | null;
  places: (string | null)[] | null;
  amounts_atoms: string[] | null;
  valued_at?: number;
  ledger?: PayoutBook;
  published?: unknown;
  block?: number;
  decided_at?: number;
  /**
   * A prize board's profit of each entry at each day's 00:00 UTC of the season (entry id to points), for the
   * /league page's chart; not part of the standings answer.
   */
  curves?: Record<string, BookPoint[]>;
};
export const nowS = (d: Pick<ReadDeps, "clock">) => Math.floor(d.clock() / 1000);
export const standingsQuery = z
  .object({
    season: z.coerce.number().int().min(1).max(100_000).optional(),
    board: z.enum(["prize", "practice"]).optional(),
  })
  .strict();
/** GET league/standings' query as the route's edge parsed it (standingsQuery). */
export type StandingsParameters = z.infer<typeof standingsQuery>;

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
  const st = prizeStandings({
    entries: [],
    books: new Map(),
    links: [],
    decided: false,
    ends: s.ends,
    checked_at: valuedAt,
    shares: null,
  });
  return {
    rows: [],
    outcome: st.outcome,
    places: st.places,
    amounts_atoms: sharesOf(0n),
    valued_at: valuedAt,
    published: { entries: [], books: {} },
  };
}

/** board:season for each worked season not decided and with an entry on that board. */
export async function workedKeys(d: ReadDeps): Promise<string[]> {
  const seasons = workedSeasons(nowS(d));
  if (!seasons.length) return [];
  const done = await d.db.query<{ season: number; board: string }>(
    "SELECT season, board FROM app.league_results WHERE season = ANY($1)",
    [seasons],
  );
  const keys: string[] = [];
  for (const n of seasons) {
    for (const board of ["prize", "practice"] as const) {
      if (done.some((r) => Number(r.season) === n && r.board === board)) continue;
      if ((await entrantsOf(d, board, n)) > 0) keys.push(`${board}:${n}`);
    }
  }
  return keys;
}

/** A decided board's frozen answer, or null. */
export async function decided(d: ReadDeps, n: number, board: Board) {
  const [r] = await d.db.query<{ answer: string; decided_at: string; block: string }>(
    "SELECT answer, decided_at::text AS decided_at, block::text AS block FROM app.league_results WHERE " +
      "season = $1 AND board = $2",
    [n, board],
  );
  return r
    ? ({
        outcome: null,
        places: null,
        amounts_atoms: null,
        ...(JSON.parse(r.answer) as object),
        decided_at: Number(r.decided_at),
      } as BoardBody)
    : null;
}

/** A board of a season not yet decided: at the marks of now (open) or of its last second (ended). */
export async function computeBoard(d: ReadDeps, key: string): Promise<BoardBody> {
  const [board, num] = key.split(":") as [Board, string];
  const s = seasonAt(Number(num), nowS(d));
  const head = await d.indexed.head();
  const valuedAt = Math.min(s.ends - 1, nowS(d), head?.timestamp ?? 0);
  if (board === "practice")
    return {
      rows: await practiceBoard(d, s, valuedAt),
      outcome: null,
      places: null,
      amounts_atoms: null,
      valued_at: valuedAt,
    };
  const block = await d.chain.getBlockNumber();
  const prize = await prizeBoard(d, s, { valuedAt, block, ended: s.status === "closed", decided: false, shares: null });
  const book = await payoutBookOf(d, s, {
    before: await reserveBefore(d.db, s.number),
    pays: prize.outcome.pays,
    valuedAt,
    block,
    settled: false,
  });
  for (const r of prize.rows) r.prize_atoms = r.place !== null ? book.shares[r.place - 1]! : null;
  return {
    rows: prize.rows,
    outcome: prize.outcome,
    places: prize.places,
    amounts_atoms: book.shares,
    valued_at: valuedAt,
    ledger: book,
    // The trades by id, not as JSON: verify's books are read back from app.trades (seasons.ts books).
    published: { ...prize.published, trade_ids: ledgerIds(prize.ledgers) },
    block: Number(block),
    curves: Object.fromEntries([...prize.books].map(([id, b]) => [id, b.curve])),
  };
}

/**
 * A board of season `n` and what its amounts are: decided (frozen), an estimate (playing or upcoming),
 * provisional (ended).
 */
export async function boardOf(
  r: Reading,
  n: number,
  board: Board,
): Promise<{ s: Season; body: BoardBody; basis: "decided" | "estimate" | "provisional" }> {
  const s = seasonAt(n, nowS(r));
  const done = await decided(r, n, board);
  if (done) return { s, body: done, basis: "decided" };
  if (s.status === "upcoming")
    return { s, body: { rows: [], outcome: null, places: null, amounts_atoms: null }, basis: "estimate" };
  return { s, body: await liveBody(r, s, board), basis: s.status === "open" ? "estimate" : "provisional" };
}

/** A board of a season that plays or ended, not decided: the worker's last answer, or the empty board's. */
export async function liveBody(r: Reading, s: Season, board: Board): Promise<BoardBody> {
  if ((await entrantsOf(r, board, s.number)) === 0) return emptyBoard(board, s, nowS(r));
  if (!workedSeasons(nowS(r)).includes(s.number))
    throw new Refusal(
      "LEAGUE_UNAVAILABLE",
      `season ${s.number}'s ${board} standings are computed only while it is among the latest ` +
        `${RECENT_CLOSED_SEASONS} ended seasons; it waits for its decision`,
      {},
      { retryAfterS: 60 },
    );
  return r.worker.get(`${board}:${s.number}`);
}

/** How many entries play `board` in season `n`. */
export async function entrantsOf(d: ReadDeps, board: Board, n: number): Promise<number> {
  const s = seasonAt(n, nowS(d));
  const [r] = await d.db.query<{ n: string }>(
    "SELECT count(*)::text AS n FROM app.league_entries WHERE board = $1 AND from_season <= $2 AND " +
      "entered_at < $3 AND (left_at IS NULL OR left_at >= $4)",
    [board, n, s.ends, s.starts],
  );
  return Number(r?.n ?? 0);
}

/** GET league/standings. */
export async function standings(r: Reading, q: StandingsParameters) {
  return (await standingsWithCurves(r, q)).answer;
}

/**
 * The standings answer and, from the same computation, each entry's profit curve (the /league page draws the
 * rows it lists; a decided board kept no curves and gives none).
 */
export async function standingsWithCurves(r: Reading, q: StandingsParameters) {
  const cal = calendarAt(nowS(r));
  const n = q.season ?? cal.current.number;
  // SPEC's row for standings answers 400 BAD_REQUEST for a bad query (NO_SEASON is the seasons/<n> path's).
  if (n > cal.next.number)
    throw new Refusal("BAD_REQUEST", `season ${n} is not on the calendar yet (the next is ${cal.next.number})`, {
      field: "season",
    });
  const board = q.board ?? "prize";
  const { s, body, basis } = await boardOf(r, n, board);
  const answer = {
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
    entrants_next: await entrantsOf(r, board, n + 1),
    now: nowS(r),
  };
  return { answer, curves: body.curves ?? {} };
}
