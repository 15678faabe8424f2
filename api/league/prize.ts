import { zeroAddress, type Address } from "viem";
export type { PrizeAnchor, PrizeRowView } from "../../lib/league/board.js";
import type { Config } from "../../lib/config.js";
import { sanctionedAt, vaultWalletsAt } from "../../lib/league/chain.js";
import {
  boardFrom,
  booksOf,
  untilOf,
  type BookWindow,
  type EntryFacts,
  type PrizeAnchor,
} from "../../lib/league/board.js";
import { allSettledOrThrow } from "../../lib/settled.js";
import {
  keptEntrantBook,
  markMemo,
  seriesMarkReader,
  type MarkMemo,
  type MarkReader,
  type SeasonTrade,
  type ValuationToken,
} from "../../lib/league/valuation.js";
import type { Season } from "../../lib/league/calendar.js";
import { independentBasis } from "../market/index.js";
import type { SqlIndexedReads } from "../ports/indexed.js";
import type { Db } from "../ports/store/db.js";
import { linkTokens, nativeTry, type NativeTry, type TransferLog } from "./transfers.js";
import type { PracticeAgent } from "./deps.js";
import { seasonReviews } from "./reviews.js";
import type { Review } from "../../lib/league/review.js";
import { lc } from "../../lib/address.js";
import { byIdentity } from "../../lib/byIdentity.js";
import { viewAt } from "./keptViews.js";
import type { Common } from "../ports/common.js";
import { keptBookOfEntry, keptSeason, keptTrades, type KeptSeason, type KeptSeasons } from "./kept.js";
import { minedTradeOf, minedTrades, tradeRows, type MinedTrade } from "./trades.js";
export { minedTrades, type MinedTrade } from "./trades.js";

export type PrizeDeps = Pick<Common, "config" | "chain" | "clock"> & {
  db: Db;
  indexed: SqlIndexedReads;
  transfers: TransferLog;
  /** The standings worker's kept trades and books (kept.ts); without, every computation reads and values all. */
  kept?: KeptSeasons;
};
/** What every league board needs, read or decided: the prize's reads plus marks, time, practice agents and a log. */
export type BoardDeps = PrizeDeps &
  Pick<Common, "clock" | "logger"> & {
    marks: MarkReader;
    hostedAgent: (id: string) => Promise<PracticeAgent | null>;
  };

/** The tokens with an independent mark and how each is read (published as `rules.valuation.tokens`). */
export function valuationTokens(config: Config): ValuationToken[] {
  const usdg = config.tokens.USDG!;
  return Object.values(config.tokens).flatMap((t): ValuationToken[] => {
    const basis = independentBasis(t);
    if (!basis) return [];
    let pool: { id: string; tokenIs0: boolean } | null = null;
    if (basis === "twap") {
      // The configured hookless USDG pool: a fixed pool id, so anyone reads the same price history.
      const p = config.pools.find(
        (x) =>
          lc(x.hooks) === zeroAddress &&
          [lc(x.currency0), lc(x.currency1)].sort().join() === [lc(t.address), lc(usdg.address)].sort().join(),
      );
      if (!p) return [];
      pool = { id: lc(p.id), tokenIs0: lc(p.currency0) === lc(t.address) };
    }
    return [
      {
        address: lc(t.address),
        symbol: t.symbol,
        decimals: t.decimals,
        basis,
        feed: t.feed ? lc(t.feed) : null,
        stock: t.kind === "stock",
        pool_id: pool?.id ?? null,
        token_is_0: pool?.tokenIs0 ?? null,
        usdg_decimals: usdg.decimals,
      },
    ];
  });
}

/** Series are read again after this long (new rounds only append: answers for past times stay). */
const SERIES_TTL_MS = 2_000;

/**
 * The indexer's tables as the league's mark reader: each series read once per couple of seconds, not once per
 * trade.
 */
export function indexedMarkReader(indexed: SqlIndexedReads): MarkReader {
  const memo = new Map<string, { at: number; value: Promise<unknown> }>();
  const cached = <T>(key: string, load: () => Promise<T>): Promise<T> => {
    const hit = memo.get(key);
    if (hit && Date.now() - hit.at < SERIES_TTL_MS) return hit.value as Promise<T>;
    const value = load();
    memo.set(key, { at: Date.now(), value });
    value.catch(() => memo.delete(key));
    return value;
  };
  return seriesMarkReader({
    rounds: (feed) => cached(`f:${lc(feed)}`, () => indexed.feedRounds(feed as Address)),
    observations: (id) => cached(`p:${lc(id)}`, () => indexed.poolObservations(id as `0x${string}`)),
  });
}

/**
 * Addresses that never link clusters: the chain's contracts, the platform's wallets, configured exchanges, the
 * zero address (mints).
 */
export function hubsOf(config: Config): Set<string> {
  const contracts = Object.values(config.contracts).flatMap((v) =>
    typeof v === "string" ? [v] : v && typeof v === "object" ? Object.values(v) : [],
  );
  const out: unknown[] = [
    zeroAddress,
    config.feeRecipient,
    ...contracts,
    ...Object.values(config.treasuryBuckets),
    config.cosigner,
    config.league.reserveWallet,
    ...config.league.hubs,
    ...Object.values(config.tokens).map((t) => t.address),
  ];
  // The devnet's deployer funds every test wallet: it is the devnet's exchange.
  if (config.devnetInfo?.accounts.deployer) out.push(config.devnetInfo.accounts.deployer as Address);
  return new Set(out.filter((a): a is string => typeof a === "string").map(lc));
}

type EntryRow = {
  entry_id: string;
  agent_id: string;
  wallet: string;
  owner: string;
  agent_wallet: string;
  token: string;
  symbol: string;
  name: string;
  confirmed: boolean | null;
  confirmed_at: string | null;
  entered_at: string;
  left_at: string | null;
};

/** The board's entries that play season `s`: entered for it or before, not left before it began. */
export async function seasonEntries(db: Db, board: "prize" | "practice", s: Season) {
  return db.query<
    EntryRow & {
      kind: string;
      hosted_id: string | null;
      account_id: string | null;
      seq: string;
      signature: string | null;
      message: string | null;
    }
  >(
    `SELECT e.*, e.seq::text AS seq, st.message
     FROM app.league_entries e LEFT JOIN app.league_statements st ON st.nonce = e.statement_nonce
     WHERE e.board = $1 AND e.from_season <= $2 AND e.entered_at < $3 AND (e.left_at IS NULL OR e.left_at >= $4)
     ORDER BY e.seq`,
    [board, s.number, s.ends, s.starts],
  );
}

/** Trades grouped by wallet, each list in the order read. */
function byWallet(trades: MinedTrade[]): Map<string, MinedTrade[]> {
  const out = new Map<string, MinedTrade[]>();
  for (const t of trades) {
    const list = out.get(t.wallet);
    if (list) list.push(t);
    else out.set(t.wallet, [t]);
  }
  return out;
}

type SeasonEntry = Awaited<ReturnType<typeof seasonEntries>>[number];

/** Each entry as the rules read it, and its ledger: its wallet's mined trades until it left. */
function entryFactsOf(config: Config, s: Season, entries: SeasonEntry[], trades: Map<string, MinedTrade[]>) {
  const house = new Set(config.league.houseAgents);
  const ledgers = new Map<string, MinedTrade[]>();
  const facts: EntryFacts[] = entries.map((e) => {
    const left_at = e.left_at === null ? null : Number(e.left_at);
    ledgers.set(e.entry_id, ledgerOf(trades.get(lc(e.wallet)) ?? [], untilOf(s, left_at)));
    return {
      entry_id: e.entry_id,
      agent_id: Number(e.agent_id),
      wallet: e.wallet,
      owner: e.owner,
      agent_wallet: e.agent_wallet,
      token: e.token,
      symbol: e.symbol,
      name: e.name,
      confirmed: e.confirmed === true,
      confirmed_at: e.confirmed_at === null ? null : Number(e.confirmed_at),
      entered_at: Number(e.entered_at),
      left_at,
      house: house.has(Number(e.agent_id)),
    };
  });
  return { facts, ledgers };
}

/**
 * What the board publishes for anyone to recompute it: the chain's contracts, hubs, tokens, entries with their
 * proofs, books.
 */
function publishedOf(config: Config, entries: SeasonEntry[], facts: EntryFacts[], reviews: Review[]) {
  // The owner's signed statement: anyone can check the confirmation recovers to the owner.
  const proofs = Object.fromEntries(
    entries.map((e) => [
      e.entry_id,
      e.confirmed && e.signature && e.message ? { message: e.message, signature: e.signature } : null,
    ]),
  );
  return {
    from_block: config.startBlock,
    // Native ETH moves are scanned from here (a devnet's node has no state before its snapshot).
    native_from_block: config.nativeFromBlock,
    contracts: {
      pool_manager: config.contracts.poolManager,
      router: config.contracts.universalRouter,
      launchpad: config.contracts.launchpad,
      sanctions_list: config.contracts.sanctionsList,
      partner_agent_vault: config.contracts.partnerAgentVault,
      multicall3: config.contracts.multicall3,
    },
    hubs: [...hubsOf(config)],
    link_tokens: linkTokens(config),
    tokens: valuationTokens(config),
    entries: facts.map((f) => ({ ...f, proof: proofs[f.entry_id] })),
    // Filled in where they are published (a decision's frozen books, the books route): building and storing
    // every trade on every standings pass cost seconds (issue 29 point 6). Kept here so the key keeps its place.
    books: undefined as Record<string, unknown[]> | undefined,
    // The operator's reviews of the season's flags, with who, when and why: the chain cannot say them.
    reviews,
  };
}

/**
 * What the board reads from the chain at `block`: the partner vault's wallets of the entries' agents and, for the
 * entries' addresses and those wallets (the prize's recipient is screened and linked like the entry's own), the
 * transfer logs, the native ETH moves and the sanctions list. With a kept season's `views` (the live standings), the
 * vault's and the list's answers are kept while those contracts are unchanged (api/league/keptViews.ts).
 *
 * The live standings read the vault beside the rest, not before it (its read was 50-85 ms of a pass's wall, issue
 * 29 point 6): the rest is read for the entries' addresses and the wallets the vault named when last kept, and again
 * for the addresses as they are only where the vault now names another wallet. Both reads are one try of the native
 * scan (a block that fails counts once, within one budget of blocks). A decision reads the vault first, then the
 * rest, once.
 */
async function chainFactsAt(d: PrizeDeps, entries: SeasonEntry[], block: bigint, views?: KeptSeason["views"]) {
  const { partnerAgentVault: vaultAt } = d.config.contracts;
  const agents = entries.map((e) => Number(e.agent_id));
  const attempt = nativeTry();
  // The wallets the vault names for the entries' agents (an unread one, null, names none).
  const walletsOf = (vault: Map<number, string | null>) => agents.flatMap((id) => vault.get(id) ?? []);
  const own = entries.flatMap((e) => [e.wallet, e.owner, e.agent_wallet]);
  const guess = [...new Set([...own, ...(views ? walletsOf(views.vault.answers) : [])].map(lc))];
  const vaultNow = viewAt(d.chain, views?.vault, { contract: vaultAt, block, keys: agents }, (ids, at) =>
    vaultWalletsAt(d.chain, vaultAt, ids, at),
  );
  // Settled before a failure is thrown: a view still reading would fill the kept views under the next pass's.
  const [vault, first] = await allSettledOrThrow([
    vaultNow,
    views ? addressFactsAt(d, guess, block, attempt, views) : null,
  ]);
  // The read for the guess stands where it was for exactly these addresses (else a wallet changed: read again).
  const exact = [...new Set([...own, ...walletsOf(vault)].map(lc))];
  const known = new Set(guess);
  const stands = first && exact.length === known.size && exact.every((a) => known.has(a));
  const rest = stands ? first : await addressFactsAt(d, exact, block, attempt, views);
  return { vault, ...rest };
}

/** The transfer logs, native ETH moves (one try of the scan) and sanctions list's answers of `addresses` at `block`. */
async function addressFactsAt(
  d: PrizeDeps,
  addresses: string[],
  block: bigint,
  attempt: NativeTry,
  views?: KeptSeason["views"],
) {
  const list = d.config.contracts.sanctionsList;
  const [logs, native, sanctioned] = await allSettledOrThrow([
    d.transfers.read(addresses, block),
    d.transfers.native(addresses, block, attempt),
    viewAt(d.chain, views?.listed, { contract: list, block, keys: addresses }, (keys, at) =>
      sanctionedAt(d.chain, list, keys, at),
    ),
  ]);
  return { logs, native, sanctioned };
}

/**
 * The prize board of season `s` at an anchor: entries, their relayed mined trades valued at the
 * marks of their blocks, cluster links from transfer logs and native ETH traces up to the anchor's
 * block, sanctions and the vault's wallets read at that block, then lib/league/rules. Answers the
 * rows, the outcome, each entry's book (the trades and valuations `league:verify` checks), and
 * `unreadable`: what could not be read (rows flag it; a decision refuses it). A failed transfer
 * read throws; a node that cannot trace native ETH, or blocks skipped after repeated failures, flag
 * rule LINKS (a decision keeps the flag); a native scan not yet through the block (bounded per
 * pass, or a failure to try again) flags LINKS and is `unreadable` (the decision waits for it).
 */
export async function prizeBoard(d: PrizeDeps, s: Season, a: PrizeAnchor) {
  const entries = await seasonEntries(d.db, "prize", s);
  const wallets = entries.map((e) => e.wallet);
  const kept = d.kept ? keptSeason(d.kept, s.number) : null;
  const marks = markMemo(indexedMarkReader(d.indexed), valuationTokens(d.config));
  // The books are valued from the store's trades while the chain's facts at the anchor's block are read: neither
  // waits on the other (the chain's reads were 50-90 ms of a pass, the books 25-35: issue 29 point 6). All settled
  // before a failure is thrown: a valuation of the kept books still running would go on under the next pass's.
  const [valued, chain, reviews] = await allSettledOrThrow([
    (kept
      ? keptTrades(d.db, kept, wallets, s.starts, s.ends, d.clock() / 1000)
      : minedTrades(d.db, wallets, s.starts, s.ends).then(byWallet)
    ).then((trades) => valuedEntries(d.config, { s, a, entries, trades, marks, kept })),
    chainFactsAt(d, entries, a.block, kept?.views),
    seasonReviews(d.db, s.number),
  ]);
  const { vault, logs, native, sanctioned } = chain;
  const { facts, ledgers, books } = valued;
  const unreadable = [
    ...[...vault].filter(([, w]) => w === null).map(([id]) => `the partner vault's agent ${id}`),
    ...[...sanctioned].filter(([, x]) => x === null).map(([addr]) => `the sanctions list for ${addr}`),
    // Not read through the block yet (bounded per pass, or a failure tried again): a decision waits for the rest.
    ...(native.behind ? [native.behind] : []),
  ];
  const board = await boardFrom(
    {
      season: s,
      anchor: a,
      entries: facts,
      trades: valued.trades,
      marks,
      transfers: [...logs, ...native.transfers],
      linksUnread: [native.unreadable, native.behind].filter(Boolean).join("; ") || null,
      sanctioned,
      vault,
      hubs: hubsOf(d.config),
      reviews,
      ...(kept ? { copyMemo: kept.copy } : {}),
    },
    books,
  );
  const published = publishedOf(d.config, entries, facts, reviews);
  return { ...board, ledgers, unreadable, published: { ...published, native_skipped: native.skipped } };
}

/**
 * The entries as the board takes them (facts, ledgers, each one's season trades) and their books, valued at the
 * anchor's marks: from scratch, or from the standings worker's kept books (`kept`).
 */
async function valuedEntries(
  config: Config,
  v: {
    s: Season;
    a: PrizeAnchor;
    entries: SeasonEntry[];
    trades: Map<string, MinedTrade[]>;
    marks: MarkMemo;
    kept: KeptSeason | null;
  },
) {
  const { facts, ledgers } = entryFactsOf(config, v.s, v.entries, v.trades);
  const trades = new Map([...ledgers].map(([id, ts]) => [id, seasonTradesOf(ts)]));
  const { kept, marks } = v;
  const bookOf = kept
    ? (id: string, ts: SeasonTrade[], o: BookWindow) =>
        keptEntrantBook(marks, keptBookOfEntry(kept, id), ts, finalFlagsOf(ledgers.get(id)!), o)
    : undefined;
  const books = await booksOf({
    season: v.s,
    anchor: v.a,
    entries: facts,
    trades,
    marks,
    ...(bookOf ? { bookOf } : {}),
  });
  return { facts, ledgers, trades, books };
}

/**
 * A wallet's trades before `until` (the entry's end): the list itself while none is past it, else the part before, cut
 * once per list and end (a kept list is replaced, never changed: the same list and end give the same array, so an
 * entry that left keeps what is derived from its ledger, as one that plays does).
 */
const cutsOf = byIdentity((_: MinedTrade[]) => new Map<number, MinedTrade[]>());
/** A list's latest trade time, once per list (a pass asked it of 100,000 trades). */
const lastTsOf = byIdentity((all: MinedTrade[]) => all.reduce((m, t) => Math.max(m, t.trade.ts), -Infinity));
function ledgerOf(all: MinedTrade[], until: number): MinedTrade[] {
  if (lastTsOf(all) < until) return all;
  const cuts = cutsOf(all);
  let cut = cuts.get(until);
  if (!cut) cuts.set(until, (cut = all.filter((t) => t.trade.ts < until)));
  return cut;
}

/** A ledger's trades as a book reads them, derived once per list (a kept list is replaced, never changed). */
const seasonTradesOf = byIdentity((ts: MinedTrade[]): SeasonTrade[] => ts.map((t) => t.trade));
/** Whether each trade of a ledger is final, in its order (what a kept book keeps), derived once per list. */
const finalFlagsOf = byIdentity((ts: MinedTrade[]) => ts.map((t) => t.final));
/**
 * A ledger's trade ids as one text, comma-separated, joined once per list: the stored answer's 100,000 id strings took
 * half of its JSON's time (12-25 ms a pass, issue 29 point 6); 1,000 texts of ids take a copy each.
 */
const idsOf = byIdentity((ts: MinedTrade[]) => ts.map((t) => t.trade.id).join(","));

/**
 * Each entry's trade ids, in its ledger's order, comma-separated: what the books route reads back from app.trades
 * (tradeBooks, after splitIds).
 */
export const ledgerIds = (ledgers: Map<string, MinedTrade[]>): Record<string, string> =>
  Object.fromEntries([...ledgers].map(([id, ts]) => [id, idsOf(ts)]));

/** ledgerIds' texts back as lists (an answer stored as lists before the texts is taken as it is). */
export const splitIds = (ids: Record<string, string | string[]>): Record<string, string[]> =>
  Object.fromEntries(
    Object.entries(ids).map(([entry, list]) => [entry, Array.isArray(list) ? list : list ? list.split(",") : []]),
  );

/**
 * Each entry's published trades read back by id (ledgerIds), as `publishedBooks` wrote them when the standings
 * were computed; a row that changed since (a reorganisation) is published as it is now, or left out once it is no
 * longer mined in the season.
 */
export async function tradeBooks(db: Db, ids: Record<string, string[]>, s: Pick<Season, "starts" | "ends">) {
  const all = Object.values(ids).flat();
  const rows = all.length ? await tradeRows(db, "t.id = ANY($1::bigint[])", [all]) : [];
  const byId = new Map(rows.flatMap((r) => [[r.id, minedTradeOf(r, s.starts, s.ends)] as const]));
  return publishedBooks(
    new Map(Object.entries(ids).map(([entry, list]) => [entry, list.flatMap((id) => byId.get(id) ?? [])])),
  );
}

/**
 * Each entry's trades as published for `league:verify`: hash, block, time, path, the plan (atoms as strings)
 * and the amounts read from the receipt.
 */
export function publishedBooks(ledgers: Map<string, MinedTrade[]>): Record<string, unknown[]> {
  const plan = (p: MinedTrade["plan"]) =>
    p ? { ...p, txValue: p.txValue.toString(), fee: { ...p.fee, amount: p.fee.amount.toString() } } : null;
  return Object.fromEntries(
    [...ledgers].map(([id, trades]) => [
      id,
      trades.map((t) => ({
        id: t.trade.id,
        tx_hash: t.trade.tx_hash,
        block: t.trade.block,
        ts: t.trade.ts,
        path: t.path,
        plan: plan(t.plan),
        token_in: t.trade.token_in,
        token_out: t.trade.token_out,
        amount_in: t.trade.amount_in.toString(),
        amount_out: t.trade.amount_out.toString(),
      })),
    ]),
  );
}
