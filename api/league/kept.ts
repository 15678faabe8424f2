/**
 * What the standings worker keeps of a season's prize board between passes (issue 29 point 6), in
 * this process: the relayed trades read so far, per wallet, and each entry's kept book. A pass
 * reads only the rows after the last id read (the last pass's highest, or a wallet's own when that
 * pass did not read it), and again the rows whose block was not final then (a reorganisation may
 * still move or drop them), so its cost is the trades that came in, not the season. Ids are drawn
 * before their rows commit, so a row can become visible after a higher id was read (two submits at
 * once, of one agent or two): a pass also lists the ids of the rows written in the last SETTLE_S
 * and reads any of them it has not read. Nothing here is
 * stored: a process builds its own on its first pass (a full read) and keeps it while it runs, also
 * across a time without the standings lease.
 */
import { keptEntrant, type KeptEntrant } from "../../lib/league/valuation.js";
import { lc } from "../../lib/address.js";
import { copyMemo, type CopyMemo } from "../../lib/league/copy.js";
import { keptView, type KeptView } from "./keptViews.js";
import type { Db } from "../ports/store/db.js";
import { eachInSlices, minedTradeOf, tradeRows, type MinedTrade, type TradeRow } from "./trades.js";

export type KeptSeason = {
  /** Per wallet: the highest trade id read (any status). */
  cursor: Map<string, string>;
  /**
   * The wallets the last pass read, and the highest id any of its reads answered: each of them has every row at or
   * under it that had committed when it was read (a row committed later is young: listed and read as such). And when
   * (the service clock, s) a pass last read every wallet from its own cursor, as it does every SETTLE_S: a row that
   * committed later than SETTLE_S after its `created_at` (a writer's clock far behind, a commit held) behind another
   * wallet's higher id is read by the next such pass (a read from each cursor on every pass read it at the next).
   */
  through: { wallets: Set<string>; id: string; sweptAt: number | null };
  /** Ids of the rows the last pass listed as young or read (all of them read). */
  young: Set<string>;
  /** When (the service clock, s) the last pass that took its rows read them; null before the first. */
  readAt: number | null;
  /** Ids of rows read before their block was final: read again on every pass. */
  open: Set<string>;
  /** Each open row as last read (rowPrint): one read again unchanged leaves its wallet's list as it is. */
  prints: Map<string, string>;
  /**
   * The season's mined trades per wallet, by block then id (as minedTrades answers them). A list is replaced when a row
   * of it is read, never changed in place: the same array is the same trades, with the same finality (each trade's
   * `final`: a kept book takes only the final ones).
   */
  byWallet: Map<string, MinedTrade[]>;
  /** Each entry's kept book. */
  books: Map<string, KeptEntrant>;
  /** Copy detection's follows and findings from the last pass (lib/league/copy CopyMemo). */
  copy: CopyMemo;
  /** The vault's wallets by agent id and the sanctions list's answers by address, kept while each is unchanged. */
  views: { vault: KeptView<number, string>; listed: KeptView<string, boolean> };
};

/** The kept state of each season the worker computes, by season number. */
export type KeptSeasons = Map<number, KeptSeason>;

export function keptSeason(kept: KeptSeasons, season: number): KeptSeason {
  let k = kept.get(season);
  if (!k) {
    k = {
      cursor: new Map(),
      through: { wallets: new Set(), id: "0", sweptAt: null },
      young: new Set(),
      readAt: null,
      open: new Set(),
      prints: new Map(),
      byWallet: new Map(),
      books: new Map(),
      copy: copyMemo(),
      views: { vault: keptView(), listed: keptView() },
    };
    kept.set(season, k);
  }
  return k;
}

/** An entry's kept book (a new one on its first pass). */
export function keptBookOfEntry(k: KeptSeason, entryId: string): KeptEntrant {
  let b = k.books.get(entryId);
  if (!b) k.books.set(entryId, (b = keptEntrant()));
  return b;
}

/**
 * How long after its `created_at` (taken by the writer just before its insert) a trade row is sure to have committed
 * or to be gone: the insert's statement or short transaction, a wait for a pooled connection (5 s at most,
 * api/ports/store/db.ts), lock waits and the clocks of two instances apart, with a wide margin. A row that commits
 * later than this behind a higher id of its wallet is read only when the process builds its kept trades anew (a
 * restart); behind another wallet's, by the next pass that reads each wallet from its cursor (KeptSeason.through).
 */
export const SETTLE_S = 300;

/**
 * The relayed trades of `wallets` mined in [from, to), as `minedTrades` answers them grouped by
 * wallet, reading only the rows new since the last pass, the ones not final then, and the recent
 * rows (written from SETTLE_S before the last read, or before `nowS` on the first) not read yet.
 */
export async function keptTrades(
  db: Db,
  k: KeptSeason,
  wallets: string[],
  from: number,
  to: number,
  nowS: number,
): Promise<Map<string, MinedTrade[]>> {
  // Once each: two entries on one wallet would read its rows twice, and each would count (review, helper-42).
  const ws = [...new Set(wallets.map(lc))];
  const sweeps = k.through.sweptAt === null || nowS - k.through.sweptAt >= SETTLE_S;
  const [fresh, young] = ws.length
    ? await Promise.all([
        freshRows(db, k, ws, sweeps),
        // From SETTLE_S before the last read: a row it missed committed after it, so within SETTLE_S of that read
        // (an instance that computes again after a gap, e.g. the lease back after a while, still finds it).
        youngIds(db, ws, Math.min(nowS, k.readAt ?? nowS) - SETTLE_S),
      ])
    : [[], new Set<string>()];
  const through = {
    wallets: new Set(ws),
    id: fresh.reduce((top, r) => (byId(r.id, top) > 0 ? r.id : top), k.through.id),
    sweptAt: sweeps ? nowS : k.through.sweptAt,
  };
  const read = new Set(fresh.map((r) => r.id));
  const unread = [...young].filter((id) => !k.young.has(id) && !read.has(id) && !k.open.has(id));
  const ids = [...k.open, ...unread];
  const again = ids.length ? await tradeRows(db, "t.id = ANY($1::bigint[])", [ids], { plans: false }) : [];
  const pass: Take = { copied: new Set(), cursors: new Map() };
  await eachInSlices([...fresh, ...again], (r) => take(k, r, from, to, pass));
  // Rows read now are read, whether or not the list of young ids saw them (the two reads run side by side).
  k.young = new Set([...young, ...read]);
  k.readAt = nowS;
  k.through = through;
  for (const w of pass.copied) {
    const list = k.byWallet.get(w);
    // Rows come by block then id: a wallet's list is out of order only where a row read again moved.
    if (list?.some((t, i) => i > 0 && byBlockThenId(list[i - 1]!, t) > 0)) list.sort(byBlockThenId);
  }
  return k.byWallet;
}

/**
 * The rows new to the kept trades: those of the wallets the last pass read after the highest id it read (one range of
 * the primary key: a pass after 100 new trades reads those), and those of any other wallet after its own cursor (all
 * of them when the pass `sweeps`). One index range scan per wallet (trades_wallet_id) was 50-120 ms of a pass for
 * 1,000 wallets (issue 29 point 6).
 */
function freshRows(db: Db, k: KeptSeason, ws: string[], sweeps: boolean): Promise<TradeRow[]> {
  const known = sweeps ? [] : ws.filter((w) => k.through.wallets.has(w));
  const other = sweeps ? ws : ws.filter((w) => !k.through.wallets.has(w));
  const cursors = other.map((w) => k.cursor.get(w) ?? "0");
  return Promise.all([
    known.length ? tradeRows(db, AFTER_THROUGH, [k.through.id, known], { plans: false }) : [],
    other.length ? tradeRows(db, "true", [other, cursors], { source: AFTER_CURSORS, plans: false }) : [],
  ]).then(([a, b]) => [...a, ...b]);
}

/**
 * The rows of `$2`'s wallets after id `$1`. The range is given both ends: a store without statistics yet (just filled,
 * not analyzed) has the planner take a one-sided range for a third of the table, and scan all of it (57 ms for
 * 100,000 rows); a range with two ends it takes for a small part, and reads it from the primary key (1 ms).
 */
const AFTER_THROUGH = "t.id > $1::bigint AND t.id <= 9223372036854775807 AND t.wallet = ANY($2::text[])";

/**
 * Each wallet's rows after its cursor, one index range scan per wallet (trades_wallet_id): a wallet's first read, or
 * one not read by the last pass, reads those, where a join on the wallet list read every row of the season (a hash
 * join over 100,000 rows, 50-120 ms).
 */
const AFTER_CURSORS =
  "unnest($1::text[], $2::bigint[]) AS c(wallet, after) " +
  "CROSS JOIN LATERAL (SELECT * FROM app.trades x WHERE x.wallet = c.wallet AND x.id > c.after OFFSET 0) t";

/** The ids of `wallets`' rows with a plan written at or after `since` (s; index trades_written). */
async function youngIds(db: Db, wallets: string[], since: number): Promise<Set<string>> {
  const rows = await db.query<{ id: string }>(
    "SELECT id::text AS id FROM app.trades WHERE created_at >= $1 AND plan_id IS NOT NULL AND wallet = ANY($2::text[])",
    [Math.floor(since), wallets],
  );
  return new Set(rows.map((r) => r.id));
}

/** Ids are bigint's decimal text without leading zeros: the longer is the larger, else the text compares. */
const byId = (a: string, b: string) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
const byBlockThenId = (a: MinedTrade, b: MinedTrade) => a.trade.block - b.trade.block || byId(a.trade.id, b.trade.id);

/** What of a row a season's trade is made of (minedTradeOf), and whether it is final. */
const rowPrint = (r: TradeRow) =>
  [r.mined, r.final, r.block_number, r.block_time, r.outcome, r.path, r.tx_hash, r.p_token_in, r.p_token_out].join("|");

/**
 * One read's state: the wallets whose list it has copied (a read changes its own copy), and each wallet's cursor as
 * the read found it.
 */
type Take = { copied: Set<string>; cursors: Map<string, string> };

/** One row into the kept trades: added, replaced or dropped by what it says now; open until final. */
function take(k: KeptSeason, r: TradeRow, from: number, to: number, pass: Take) {
  const w = lc(r.wallet);
  let before = pass.cursors.get(w);
  if (before === undefined) pass.cursors.set(w, (before = k.cursor.get(w) ?? "0"));
  // Read before this read: at or under the cursor it found. Rows come by block, so a wallet's ids can come out of
  // order within one read; judged by the moving cursor, each such row was taken for a re-read, and its list filtered
  // (a rebuild of 100 trades a wallet mined out of id order was quadratic: 0.6 s of 3.3, issue 29 point 6).
  const read = byId(r.id, before) <= 0;
  // An open row that says what it said: its wallet's list stays the same array (and what is derived from it). Only
  // open rows are printed: a full read's 100,000 final rows need none.
  if (read && k.open.has(r.id) && k.prints.get(r.id) === rowPrint(r)) return;
  if (byId(r.id, k.cursor.get(w) ?? "0") > 0) k.cursor.set(w, r.id);
  if (r.final) {
    k.open.delete(r.id);
    k.prints.delete(r.id);
  } else {
    k.open.add(r.id);
    k.prints.set(r.id, rowPrint(r));
  }
  // A row read before (open) replaces what it said then. A new list, never the old one changed: a wallet's list is
  // the same array while nothing in it changed, and what is derived from it is kept by that identity (prize.ts).
  // The first row of a wallet in a read copies its list; the rest of the read changes that copy.
  const was = k.byWallet.get(w) ?? [];
  const list = read ? was.filter((t) => t.trade.id !== r.id) : pass.copied.has(w) ? was : [...was];
  pass.copied.add(w);
  const mined = minedTradeOf(r, from, to);
  if (mined) list.push(mined);
  k.byWallet.set(w, list);
}
