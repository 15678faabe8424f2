/**
 * The prize board's rules as one pure function (SPEC "League"): owner clusters, eligibility,
 * ranking, paid places and the season's outcome, from the entries, their books and the links
 * found on chain. The API, the settler and `npm run league:verify` call the same code, so a row
 * recomputed by anyone from the chain is the row the API published.
 */
export const PRIZE_SPLIT_BPS = [5_000, 3_000, 2_000] as const;
/** A season pays only if at least this many owner clusters traded the minimum. */
export const MIN_CLUSTERS = 10;
/** The minimum of trading before a cluster counts toward MIN_CLUSTERS (and an entry may place). */
export const MIN_TRADES = 3;
export const MIN_ACTIVE_DAYS = 2;

export type LinkKind = "address" | "transfer" | "funder";
/**
 * One piece of evidence joining two entries' owners: a shared address, a transfer between them, a common first funder.
 */
export type Link = {
  kind: LinkKind;
  a: string;
  b: string;
  evidence: { address?: string; from?: string; to?: string; tx_hash?: string; block?: number; token?: string };
};
export type RuleStatus = "pass" | "fail" | "flag" | "pending";
export type Rule = { rule: string; name: string; status: RuleStatus; reason: string; reviewed: boolean };

/** What the rules need of one prize entry. */
export type PrizeEntry = {
  entry_id: string;
  agent_id: number;
  wallet: string;
  owner: string;
  agent_wallet: string;
  token: string;
  symbol: string;
  name: string;
  confirmed: boolean;
  confirmed_at: number | null;
  entered_at: number;
  left_at: number | null;
  house: boolean;
  /**
   * Listed on the sanctions list at the check (any of wallet, owner, agent wallet); null when the list could not be
   * read.
   */
  sanctioned: boolean | null;
  /** The vault's agent wallet now (where a prize goes); null when the vault could not be read. */
  vault_wallet: string | null;
};
/** The book's numbers (lib/league/book seasonBook, without the valuations). */
export type BookNumbers = {
  profit_usd: number;
  score: number;
  return_pct: number | null;
  max_dd_pct: number | null;
  capital_usd: number;
  trades: number;
  active_days: number;
  unvalued: number;
  open_unpriced: number;
  price_outliers: number;
  /** Fill value above the marks of its block, not credited (lib/league/book). */
  uncredited_usd: number;
  /** Realised gain on tokens without an independent mark. */
  unmarked_realised_usd: number;
};

import { OUTLIER_BPS } from "./book.js";
import { copyFindings, copyRule, type CopyFinding, type CopyMemo, type CopyTrade } from "./copy.js";
import { applyReviews, type Review } from "./review.js";
import { lc } from "../address.js";

/**
 * Owner clusters: entries joined by any link (union-find), named by their smallest entry id.
 * Links touching a hub were dropped before this; each entry's own addresses never link it to itself.
 */
export function clustersOf(
  entries: PrizeEntry[],
  links: Link[],
): Map<string, { cluster: string; size: number; links: Link[] }> {
  const parent = new Map(entries.map((e) => [e.entry_id, e.entry_id]));
  const find = (x: string): string => {
    let r = x;
    while (parent.get(r) !== r) r = parent.get(r)!;
    parent.set(x, r);
    return r;
  };
  for (const l of links) {
    if (!parent.has(l.a) || !parent.has(l.b) || l.a === l.b) continue;
    const [ra, rb] = [find(l.a), find(l.b)];
    if (ra !== rb) parent.set(ra > rb ? ra : rb, ra > rb ? rb : ra);
  }
  const members = new Map<string, string[]>();
  for (const e of entries) members.set(find(e.entry_id), [...(members.get(find(e.entry_id)) ?? []), e.entry_id]);
  const out = new Map<string, { cluster: string; size: number; links: Link[] }>();
  for (const [root, ids] of members) {
    const set = new Set(ids);
    const own = links.filter((l) => set.has(l.a) && set.has(l.b) && l.a !== l.b);
    for (const id of ids)
      out.set(id, { cluster: root, size: ids.length, links: own.filter((l) => l.a === id || l.b === id) });
  }
  return out;
}

/**
 * Links between entries from what the chain shows: `address` (two entries share an address),
 * `transfer` (a token or native ETH transfer from one entry's address to another's) and `funder` (the
 * first transfer into each of two entries' addresses came from the same address). Hubs never link.
 */
export function linksOf(
  entries: PrizeEntry[],
  transfers: {
    from: string;
    to: string;
    tx_hash: string;
    block: number;
    tx_index?: number;
    log_index: number;
    token: string;
  }[],
  hubs: Set<string>,
): Link[] {
  const byAddress = new Map<string, string[]>();
  // An entry's addresses: its trading wallet, owner, agent wallet and where its prize would go.
  for (const e of entries)
    for (const a of new Set([
      lc(e.wallet),
      lc(e.owner),
      lc(e.agent_wallet),
      ...(e.vault_wallet ? [lc(e.vault_wallet)] : []),
    ]))
      byAddress.set(a, [...(byAddress.get(a) ?? []), e.entry_id]);
  const links: Link[] = [];
  for (const [address, ids] of byAddress)
    for (let i = 1; i < ids.length; i++) links.push({ kind: "address", a: ids[0]!, b: ids[i]!, evidence: { address } });
  // Chain order: block, transaction, then a native ETH call (log_index below zero) or a log.
  const ordered = [...transfers].sort(
    (x, y) => x.block - y.block || (x.tx_index ?? 0) - (y.tx_index ?? 0) || x.log_index - y.log_index,
  );
  const funder = new Map<string, (typeof ordered)[number]>();
  for (const t of ordered) {
    const [from, to] = [lc(t.from), lc(t.to)];
    if (hubs.has(from) || hubs.has(to) || from === to) continue;
    if (byAddress.has(to) && !funder.has(to)) funder.set(to, t);
    for (const a of byAddress.get(from) ?? [])
      for (const b of byAddress.get(to) ?? [])
        if (a !== b)
          links.push({
            kind: "transfer",
            a,
            b,
            evidence: { from, to, tx_hash: t.tx_hash, block: t.block, token: lc(t.token) },
          });
  }
  const funded = new Map<string, [string, (typeof ordered)[number]][]>();
  for (const [to, t] of funder) funded.set(lc(t.from), [...(funded.get(lc(t.from)) ?? []), [to, t]]);
  for (const [from, list] of funded) {
    const ids = [...new Set(list.flatMap(([to]) => byAddress.get(to)!))];
    for (let i = 1; i < ids.length; i++) {
      const t = list.find(([to]) => byAddress.get(to)!.includes(ids[i]!))![1];
      links.push({
        kind: "funder",
        a: ids[0]!,
        b: ids[i]!,
        evidence: { from, to: lc(t.to), tx_hash: t.tx_hash, block: t.block, token: lc(t.token) },
      });
    }
  }
  return links;
}

const worst = (rules: Rule[]): RuleStatus =>
  (["fail", "flag", "pending", "pass"] as const).find((s) => rules.some((r) => r.status === s)) ?? "pass";

/** Traded the minimum: enough trades on enough days. */
export const tradedMinimum = (b: Pick<BookNumbers, "trades" | "active_days">) =>
  b.trades >= MIN_TRADES && b.active_days >= MIN_ACTIVE_DAYS;

/**
 * The entry's eligibility rules. CONFIRMED and SANCTIONS are never reviewable; an unreadable
 * input is a flag, never a pass; a rule that may still change while the season plays is pending.
 */
export function eligibilityOf(
  e: PrizeEntry,
  b: BookNumbers,
  o: { decided: boolean; ends: number; links_unread?: string | null },
  copy: CopyFinding | null = null,
): Rule[] {
  const r = (rule: string, name: string, status: RuleStatus, reason: string): Rule => ({
    rule,
    name,
    status,
    reason,
    reviewed: false,
  });
  const confirmedInTime = e.confirmed && e.confirmed_at !== null && e.confirmed_at < o.ends;
  return [
    confirmedInTime
      ? r("CONFIRMED", "owner confirmed eligibility", "pass", "the owner's signed prize statement is on file")
      : r(
          "CONFIRMED",
          "owner confirmed eligibility",
          o.decided ? "fail" : "pending",
          "no signed prize statement from the owner: the entry plays and wins nothing until the owner confirms",
        ),
    e.sanctioned === null
      ? r("SANCTIONS", "no address on the sanctions list", "flag", "the sanctions list could not be read")
      : e.sanctioned
        ? r("SANCTIONS", "no address on the sanctions list", "fail", "an address of the entry is on the sanctions list")
        : r("SANCTIONS", "no address on the sanctions list", "pass", "wallet, owner and agent wallet are not listed"),
    e.house
      ? r("HOUSE", "not the developer's own agent", "fail", "a house agent ranks but never takes a paid place")
      : r("HOUSE", "not the developer's own agent", "pass", "not a house agent"),
    e.left_at !== null && e.left_at < o.ends
      ? r("ENTERED", "in the league to the season's end", "fail", `left at ${new Date(e.left_at * 1000).toISOString()}`)
      : r("ENTERED", "in the league to the season's end", "pass", "entered for the whole season"),
    tradedMinimum(b)
      ? r("ACTIVE", "traded the minimum", "pass", `${b.trades} trades on ${b.active_days} days`)
      : r(
          "ACTIVE",
          "traded the minimum",
          o.decided ? "fail" : "pending",
          `${b.trades} trades on ${b.active_days} days; the minimum is ${MIN_TRADES} trades on ${MIN_ACTIVE_DAYS} days`,
        ),
    b.price_outliers > 0
      ? r(
          "PRICES",
          "fills near the marks",
          "flag",
          `${b.price_outliers} trade(s) filled more than ${OUTLIER_BPS / 100} % from the marks of their block: held ` +
            `for review`,
        )
      : r("PRICES", "fills near the marks", "pass", "every valued fill is near its marks"),
    b.unmarked_realised_usd > 0
      ? r(
          "UNMARKED",
          "no gain priced by no one",
          "flag",
          `$${b.unmarked_realised_usd} realised on tokens without an independent mark: held for review`,
        )
      : r("UNMARKED", "no gain priced by no one", "pass", "no realised gain on tokens without an independent mark"),
    copyRule(copy),
    e.vault_wallet === null
      ? r("PAYABLE", "the vault names the agent's wallet", "flag", "the partner vault could not be read")
      : /^0x0{40}$/.test(e.vault_wallet)
        ? r("PAYABLE", "the vault names the agent's wallet", "fail", "the partner vault names no wallet for the agent")
        : r("PAYABLE", "the vault names the agent's wallet", "pass", `prizes go to ${lc(e.vault_wallet)}`),
    // A cluster read without its native ETH links could hide one owner's several entries.
    o.links_unread
      ? r("LINKS", "owner links read in full", "flag", `${o.links_unread}: held for review`)
      : r("LINKS", "owner links read in full", "pass", "token transfers and native ETH moves (traces) were read"),
  ];
}

export type PrizeRow = PrizeEntry &
  BookNumbers & {
    rank: number;
    cluster: string;
    cluster_size: number;
    cluster_links: Link[];
    active: boolean;
    eligibility: { status: RuleStatus; eligible: boolean; checked_at: number; rules: Rule[] };
    place: number | null;
    prize_atoms: string | null;
  };
export type Outcome = {
  eligible_agents: number;
  eligible_owners: number;
  active_clusters: number;
  pays: boolean;
  why: string;
};

/** The three shares of a budget in atoms (50/30/20, rounded down; the dust stays in the reserve). */
export const sharesOf = (budget: bigint): string[] =>
  PRIZE_SPLIT_BPS.map((bps) => ((budget * BigInt(bps)) / 10_000n).toString());

/**
 * Ranks the board by score (ties: the earlier entry), then walks it for the paid places: the
 * best eligible entry of each cluster, three places at most, only when MIN_CLUSTERS clusters traded.
 */
export function prizeStandings(input: {
  entries: PrizeEntry[];
  books: Map<string, BookNumbers>;
  links: Link[];
  decided: boolean;
  ends: number;
  checked_at: number;
  shares: string[] | null;
  /** Why the native ETH links could not be read (rule LINKS flags every entry); null or absent: read. */
  links_unread?: string | null;
  /** Each entry's trades as copy detection reads them (lib/league/copy). */
  trades?: Map<string, CopyTrade[]>;
  /** Copy detection's memo from the previous pass (the standings worker keeps one per season). */
  copyMemo?: CopyMemo;
  /** The operator's reviews of this season's flags (lib/league/review). */
  reviews?: Review[];
}): { rows: PrizeRow[]; outcome: Outcome; places: (string | null)[] } {
  const clusters = clustersOf(input.entries, input.links);
  const copies = copyFindings(
    input.trades ?? new Map(),
    new Map([...clusters].map(([id, c]) => [id, c.cluster])),
    input.copyMemo,
  );
  const rows = input.entries.map((e) => {
    const b = input.books.get(e.entry_id)!;
    const rules = applyReviews(
      e.entry_id,
      eligibilityOf(e, b, input, copies.get(e.entry_id) ?? null),
      input.reviews ?? [],
    );
    const status = worst(rules);
    const c = clusters.get(e.entry_id)!;
    return {
      ...e,
      ...b,
      rank: 0,
      cluster: c.cluster,
      cluster_size: c.size,
      cluster_links: c.links,
      active: tradedMinimum(b),
      eligibility: { status, eligible: status === "pass", checked_at: input.checked_at, rules },
      place: null as number | null,
      prize_atoms: null as string | null,
    };
  });
  rows.sort((x, y) => y.score - x.score || x.entered_at - y.entered_at || (x.entry_id < y.entry_id ? -1 : 1));
  for (const [i, r] of rows.entries()) r.rank = i + 1;
  const active = new Set(rows.filter((r) => r.active).map((r) => r.cluster));
  const eligible = rows.filter((r) => r.eligibility.eligible);
  const pays = active.size >= MIN_CLUSTERS && eligible.length > 0;
  const places: (string | null)[] = [null, null, null];
  const placed = new Set<string>();
  for (const r of pays ? eligible : []) {
    const k = placed.size;
    if (k >= 3) break;
    if (placed.has(r.cluster)) continue;
    placed.add(r.cluster);
    places[k] = r.entry_id;
    r.place = k + 1;
    r.prize_atoms = input.shares ? input.shares[k]! : null;
  }
  const why = pays
    ? `${active.size} owner clusters traded the minimum (at least ${MIN_CLUSTERS} needed); ${eligible.length} ` +
      `eligible entries`
    : active.size < MIN_CLUSTERS
      ? `only ${active.size} owner clusters traded the minimum (${MIN_TRADES} trades on ${MIN_ACTIVE_DAYS} days); a ` +
        `season pays with at least ${MIN_CLUSTERS}`
      : "no entry is eligible";
  return {
    rows,
    outcome: {
      eligible_agents: eligible.length,
      eligible_owners: new Set(eligible.map((r) => r.cluster)).size,
      active_clusters: active.size,
      pays,
      why,
    },
    places,
  };
}
