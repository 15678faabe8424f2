/**
 * A prize board from its inputs, whoever gathered them: the API (its store, the indexer, the
 * chain) or `npm run league:verify` (the API's published entries and books, the chain alone). One
 * function, so a recomputed row is the published row byte for byte.
 */
import { getAddress } from "viem";
import type { Season } from "./calendar.js";
import type { ChainTransfer } from "./chain.js";
import { linksOf, prizeStandings, type Link, type PrizeEntry, type PrizeRow } from "./rules.js";
import type { CopyMemo, CopyTrade } from "./copy.js";
import type { Review } from "./review.js";
import { entrantBook, type MarkMemo, type SeasonTrade } from "./valuation.js";
import { lc } from "../address.js";
import type { SeasonBook, Valuation } from "./book.js";

/** What a prize computation is anchored to: marks end at `valuedAt`, chain facts are read at `block`. */
export type PrizeAnchor = {
  valuedAt: number;
  block: bigint;
  ended: boolean;
  decided: boolean;
  shares: string[] | null;
};
/** An entry as published (the books route), without the chain's facts. */
export type EntryFacts = Omit<PrizeEntry, "sanctioned" | "vault_wallet">;
export type PrizeInputs = {
  season: Season;
  anchor: PrizeAnchor;
  entries: EntryFacts[];
  /** Each entry's relayed trades mined in the season (before it left). */
  trades: Map<string, SeasonTrade[]>;
  marks: MarkMemo;
  /** Token transfers (logs) and native ETH moves (traces) touching the entries' addresses. */
  transfers: ChainTransfer[];
  /** Why the native ETH moves could not be read (NATIVE_UNREADABLE); null: they were. */
  linksUnread: string | null;
  sanctioned: Map<string, boolean | null>;
  vault: Map<number, string | null>;
  hubs: Set<string>;
  /** The operator's reviews of the season's flags, as recorded (published with the books). */
  reviews: Review[];
  /**
   * How an entry's book is valued: `entrantBook` (the default, from scratch), or the standings worker's kept
   * books (the same answer, adding only the trades since its last pass).
   */
  bookOf?: (entryId: string, trades: SeasonTrade[], o: BookWindow) => Promise<SeasonBook>;
  /** Copy detection's memo from the worker's previous pass (the same answer, scanning only near new trades). */
  copyMemo?: CopyMemo;
};
/** Where an entry's book is valued: the grid from the season's start, the end at `valuedAt`. */
export type BookWindow = { starts: number; valuedAt: number; ended: boolean };

/** Play counts until the season's end, or until the entry left. */
export const untilOf = (s: Pick<Season, "ends">, leftAt: number | null) =>
  leftAt === null ? s.ends : Math.min(s.ends, leftAt);

/** The board from its inputs; `valued`: the entries' books where the caller valued them already (booksOf). */
export async function boardFrom(i: PrizeInputs, valued?: Map<string, SeasonBook>) {
  const { season: s, anchor: a } = i;
  const books = valued ?? (await booksOf(i));
  const entries: PrizeEntry[] = [];
  for (const e of i.entries) {
    const vaultWallet = i.vault.get(e.agent_id) ?? null;
    // The prize's recipient (the vault's wallet now) is screened with the entry's own addresses.
    const listed = [e.wallet, e.owner, e.agent_wallet, ...(vaultWallet ? [vaultWallet] : [])].map(
      (x) => i.sanctioned.get(lc(x)) ?? null,
    );
    entries.push({
      ...e,
      sanctioned: listed.some((x) => x === true) ? true : listed.some((x) => x === null) ? null : false,
      vault_wallet: vaultWallet,
    });
  }
  const links = linksOf(entries, i.transfers, i.hubs);
  const st = prizeStandings({
    entries,
    books,
    links,
    decided: a.decided,
    ends: s.ends,
    checked_at: a.valuedAt,
    shares: a.shares,
    links_unread: i.linksUnread,
    trades: copyTradesOf(i.trades, books),
    ...(i.copyMemo ? { copyMemo: i.copyMemo } : {}),
    reviews: i.reviews,
  });
  const live = s.status === "open";
  // Where each entry's prize would go: the agent's wallet as the vault records it at the anchor.
  const recipients = new Map(entries.map((e) => [e.entry_id, e.vault_wallet]));
  return {
    rows: st.rows.map((r) => viewOf(r, { ...a, live })),
    outcome: st.outcome,
    places: st.places,
    books,
    recipients,
  };
}

/**
 * Each entry's book at the anchor's marks: what a board needs of its trades and marks alone, so a caller can value the
 * books while it still reads the chain's facts (the standings worker: issue 29 point 6).
 */
export async function booksOf(
  i: Pick<PrizeInputs, "season" | "anchor" | "entries" | "trades" | "marks" | "bookOf">,
): Promise<Map<string, SeasonBook>> {
  const { season: s, anchor: a } = i;
  const books = new Map<string, SeasonBook>();
  const bookOf = i.bookOf ?? ((_id, trades, o) => entrantBook(i.marks, trades, o));
  for (const e of i.entries) {
    const o = { starts: s.starts, valuedAt: Math.min(a.valuedAt, untilOf(s, e.left_at) - 1), ended: a.ended };
    books.set(e.entry_id, await bookOf(e.entry_id, i.trades.get(e.entry_id) ?? [], o));
  }
  return books;
}

/** Each entry's trades for copy detection: pair, direction, time, and the value of its marked side at its block. */
function copyTradesOf(trades: Map<string, SeasonTrade[]>, books: Map<string, SeasonBook>): Map<string, CopyTrade[]> {
  const out = new Map<string, CopyTrade[]>();
  for (const [id, book] of books) out.set(id, copyTradesOfEntry(trades.get(id) ?? NO_TRADES, book.valuations));
  return out;
}
const NO_TRADES: SeasonTrade[] = [];

/**
 * An entry's copy inputs, kept by the identity of its trades and its book's valuations (the standings worker's kept
 * lists and books give the same arrays while nothing changed: issue 29 point 6); the same arrays give the same list,
 * which copy detection's memo then skips.
 */
const copyInputs = new WeakMap<SeasonTrade[], WeakMap<Valuation[], CopyTrade[]>>();
function copyTradesOfEntry(trades: SeasonTrade[], valuations: Valuation[]): CopyTrade[] {
  // By both arrays: two entries on one wallet share the trades and have books of their own.
  let byBook = copyInputs.get(trades);
  if (!byBook) copyInputs.set(trades, (byBook = new WeakMap()));
  const hit = byBook.get(valuations);
  if (hit) return hit;
  const usd = new Map<string, number>();
  // The input's value, else the output's: one side is enough to size the trade.
  for (const v of valuations) if (v.side === "in" || !usd.has(v.trade_id)) usd.set(v.trade_id, v.usd);
  const out = trades.map((t) => ({
    id: t.id,
    ts: t.ts,
    block: t.block,
    token_in: t.token_in.address,
    token_out: t.token_out.address,
    usd: usd.get(t.id) ?? 0,
  }));
  byBook.set(valuations, out);
  return out;
}

/** A prize row as served (SPEC "Standings rows"), with the links and checks that make it recomputable. */
export type PrizeRowView = ReturnType<typeof viewOf>;

export function viewOf(r: PrizeRow, a: PrizeAnchor & { live: boolean }) {
  return {
    rank: r.rank,
    entry_id: r.entry_id,
    agent_id: r.agent_id,
    board: "prize" as const,
    kind: "wallet" as const,
    label: `${r.name} (${r.symbol})`,
    wallet: getAddress(r.wallet),
    symbol: r.symbol,
    name: r.name,
    token: getAddress(r.token),
    owner: getAddress(r.owner),
    cluster: r.cluster,
    cluster_size: r.cluster_size,
    cluster_links: r.cluster_links.map((l: Link) => ({
      kind: l.kind,
      with: l.a === r.entry_id ? l.b : l.a,
      evidence: l.evidence,
    })),
    profit_usd: r.profit_usd,
    score: r.score,
    return_pct: r.return_pct,
    max_dd_pct: r.max_dd_pct,
    capital_usd: r.capital_usd,
    trades: r.trades,
    active_days: r.active_days,
    active: r.active,
    unvalued: r.unvalued,
    open_unpriced: r.open_unpriced,
    price_outliers: r.price_outliers,
    uncredited_usd: r.uncredited_usd,
    unmarked_realised_usd: r.unmarked_realised_usd,
    valued_at: a.valuedAt,
    left: r.left_at !== null,
    place: r.place,
    prize_atoms: r.prize_atoms,
    live: a.live,
    house: r.house,
    eligibility: { ...r.eligibility, checked_block: Number(a.block) },
  };
}
