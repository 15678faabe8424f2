import { getAddress, parseUnits } from "viem";
import type { Config } from "../../lib/config.js";
import { calendarAt, season as seasonOf, type Season } from "../../lib/league/calendar.js";
import { markMemo, type MarkMemo, type MarkReader } from "../../lib/league/valuation.js";
import type { Db } from "../ports/store/db.js";
import { seasonEntries, valuationTokens } from "./prize.js";
import type { PracticeAgent } from "./deps.js";
import { lc } from "../../lib/address.js";
import type { Common } from "../ports/common.js";

/** Every practice book starts each season at 10,000 USDG (SPEC "Limits"). */
export const PRACTICE_BOOK_USD = 10_000;
const DAY_MS = 86_400_000;
const round6 = (x: number) => Math.round(x * 1e6) / 1e6;

/** What the practice board reads; `hostedAgent` is the league's port to hosted agents (deps.ts). */
export type PracticeDeps = Pick<Common, "config" | "clock"> & {
  db: Db;
  marks: MarkReader;
  hostedAgent: (id: string) => Promise<PracticeAgent | null>;
};

/** The season's fresh practice book: 10,000 USDG in atoms. */
export const freshPracticeBook = (config: Config): Record<string, string> => ({
  [lc(config.tokens.USDG!.address)]: parseUnits(String(PRACTICE_BOOK_USD), config.tokens.USDG!.decimals).toString(),
});

/**
 * What a hosted paper agent's tick may do under the practice board: hold, or trade on this season's book (reset
 * when it starts).
 */
export type PracticeGate =
  | { hold: "SEASON_CLOSED" | "LEAGUE_BOOK_PENDING"; message: string }
  | { season: number; reset: Record<string, string> | null };

/**
 * The practice board's gate for one tick of a hosted paper agent (null when it does not play):
 * SEASON_CLOSED between seasons or before its first season; LEAGUE_BOOK_PENDING while the season
 * it played last is not yet decided (its book is what that season's standings freeze); else the
 * season, with a fresh 10,000 USDG book on its first tick of the season.
 */
export async function practiceGate(
  d: Pick<PracticeDeps, "db" | "clock" | "config">,
  agent: PracticeAgent,
): Promise<PracticeGate | null> {
  const [e] = await d.db.query<{ from_season: number }>(
    "SELECT from_season FROM app.league_entries WHERE hosted_id = $1 AND board = 'practice' AND left_at IS NULL",
    [agent.id],
  );
  if (!e) return null;
  const cal = calendarAt(Math.floor(d.clock() / 1000));
  if (cal.current.status !== "open" || cal.current.number < e.from_season) {
    const first = seasonOf(Math.max(e.from_season, cal.next.number), Math.floor(d.clock() / 1000));
    return {
      hold: "SEASON_CLOSED",
      message:
        `the practice board is between seasons for this agent: it plays from ${first.name}, starting ` +
        `${first.starts_at}`,
    };
  }
  const n = cal.current.number;
  const played = Number(agent.brainState?.league_season ?? 0);
  if (played === n) return { season: n, reset: null };
  if (played > 0) {
    const [frozen] = await d.db.query("SELECT 1 FROM app.league_results WHERE season = $1 AND board = 'practice'", [
      played,
    ]);
    if (!frozen)
      return {
        hold: "LEAGUE_BOOK_PENDING",
        message:
          `Season ${played}'s practice standings are not decided yet; the book resets to ${PRACTICE_BOOK_USD} ` +
          `USDG once they are`,
      };
  }
  return { season: n, reset: freshPracticeBook(d.config) };
}

/**
 * An order the practice board accepts: ETH, the BTC asset or the partner token against USDG (LEAGUE_PAIR
 * otherwise).
 */
export const practicePairOk = (tokenIn: string, tokenOut: string) => tokenIn === "USDG" || tokenOut === "USDG";

/**
 * The practice board of season `s` valued at `valuedAt`: each entrant's season book at the independent
 * marks (a hosted paper agent's from its ticks, an exchange account's from its paper fills), profit
 * against 10,000 USDG, drawdown over its ticks' or fills' values, trades and active days.
 */
export async function practiceBoard(d: PracticeDeps, s: Season, valuedAt: number) {
  const entries = await seasonEntries(d.db, "practice", s);
  const marks = markMemo(d.marks, valuationTokens(d.config));
  const rows = [];
  for (const e of entries) {
    const agent = e.hosted_id ? await d.hostedAgent(e.hosted_id) : null;
    const inSeason = agent && Number(agent.brainState?.league_season ?? 0) === s.number;
    const fills = e.kind === "account" ? await accountFills(d.db, e.entry_id, s.number) : null;
    const book = fills
      ? accountBook(d.config, fills)
      : inSeason
        ? (agent!.paperBook ?? {})
        : freshPracticeBook(d.config);
    const equity = await bookValue(marks, book, valuedAt);
    const stats = fills
      ? fillStats(fills)
      : agent && inSeason
        ? await tickStats(d.db, agent.id, s)
        : { trades: 0, days: 0, values: [] as number[] };
    let peak = PRACTICE_BOOK_USD;
    let dd = 0;
    for (const v of [...stats.values, equity]) (peak = Math.max(peak, v)), (dd = Math.max(dd, peak - v));
    const profit = round6(equity - PRACTICE_BOOK_USD);
    rows.push({
      rank: 0,
      entry_id: e.entry_id,
      agent_id: Number(e.agent_id),
      board: "practice" as const,
      kind: e.kind as "account" | "hosted",
      label: agent ? agent.name : `account ${e.account_id}`,
      symbol: e.symbol,
      name: e.name,
      token: getAddress(e.token),
      owner: getAddress(e.owner),
      equity: round6(equity),
      profit_usd: profit,
      score: profit,
      return_pct: Math.round((profit / PRACTICE_BOOK_USD) * 10_000) / 100,
      max_dd_pct: Math.round((dd / PRACTICE_BOOK_USD) * 10_000) / 100,
      trades: stats.trades,
      active_days: stats.days,
      left: e.left_at !== null,
      live: s.status === "open",
      house: false,
      eligibility: null,
      place: null,
      prize_atoms: null,
      seq: Number(e.seq),
    });
  }
  rows.sort((a, b) => b.score - a.score || a.seq - b.seq);
  return rows.map(({ seq: _seq, ...r }, i) => ({ ...r, rank: i + 1 }));
}

/** The agent's paper trades and its ticks' book values in the season (hosted logs). */
async function tickStats(db: Db, agentId: string, s: Season) {
  const rows = await db.query<{ kind: string; created_at: string; value_usd: string | null }>(
    "SELECT kind, created_at::text AS created_at, (body::json->>'value_usd') AS value_usd FROM " +
      "app.hosted_logs WHERE agent_id = $1 AND kind IN ('trade', 'decision') AND created_at >= $2 AND " +
      "created_at < $3 ORDER BY id",
    [agentId, s.starts * 1000, s.ends * 1000],
  );
  const trades = rows.filter((r) => r.kind === "trade");
  return {
    trades: trades.length,
    days: new Set(trades.map((r) => Math.floor(Number(r.created_at) / DAY_MS))).size,
    values: rows.filter((r) => r.kind === "decision" && r.value_usd !== null).map((r) => Number(r.value_usd)),
  };
}

/** A book's value at the independent marks of `time`: a token without a mark then counts nothing. */
export async function bookValue(marks: MarkMemo, book: Record<string, string>, time: number): Promise<number> {
  let equity = 0;
  for (const [token, atoms] of Object.entries(book)) {
    const t = marks.token(token);
    const m = await marks.at(token, { time });
    if (t && m) equity += (Number(atoms) / 10 ** t.decimals) * m.usd;
  }
  return equity;
}

/** One paper fill of an exchange account on the practice board (app.league_practice_fills). */
export type PracticeFill = {
  id: string;
  token_in: string;
  token_out: string;
  amount_in: string;
  amount_out: string;
  fee: string;
  fee_bps: number;
  fee_class: "major" | "other";
  fee_tier: number;
  amount_usd: number;
  value_usd: number;
  block: string;
  created_at: string;
};

/** The account entry's paper fills of season `season`, in the order they filled. */
export async function accountFills(db: Pick<Db, "query">, entryId: string, season: number): Promise<PracticeFill[]> {
  return db.query<PracticeFill>(
    `SELECT id::text AS id, token_in, token_out, amount_in, amount_out, fee, fee_bps, fee_class, fee_tier,
       amount_usd, value_usd, block::text AS block, created_at::text AS created_at
     FROM app.league_practice_fills WHERE entry_id = $1 AND season = $2 ORDER BY id`,
    [entryId, season],
  );
}

/** The account's season book: 10,000 USDG, each fill taking its input out and putting its output in. */
export function accountBook(config: Config, fills: PracticeFill[]): Record<string, string> {
  const book = freshPracticeBook(config);
  for (const f of fills) {
    book[f.token_in] = (BigInt(book[f.token_in] ?? "0") - BigInt(f.amount_in)).toString();
    book[f.token_out] = (BigInt(book[f.token_out] ?? "0") + BigInt(f.amount_out)).toString();
  }
  return book;
}

/** An account's trades, active days and book values after each fill. */
function fillStats(fills: PracticeFill[]) {
  return {
    trades: fills.length,
    days: new Set(fills.map((f) => Math.floor(Number(f.created_at) / DAY_MS))).size,
    values: fills.map((f) => Number(f.value_usd)),
  };
}
