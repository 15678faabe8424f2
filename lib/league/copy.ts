/**
 * Copy-trading (issue 29 point 2), pure: an entry whose season trades repeat another owner
 * cluster's trades is held for review (rule COPY_TRADING).
 *
 * A trade of entry E "follows" cluster C when, among C's trades of the same pair and direction
 * mined within COPY_WINDOW_S of it (either side, another block), the nearest one came before it.
 * A copier trades consistently just after its leader, so nearly all of its volume follows; two
 * honest agents trading one popular pair at independent times are each nearest to a trade of the
 * other before about as often as after, so neither reaches most of its volume. E is flagged when
 * more than COPY_SHARE_BPS of its season volume (USD at the marks of each trade's block; by trade
 * count when none of its trades is valued) follows one cluster, in at least COPY_MIN_TRADES trades.
 */
import { lc } from "../address.js";
import type { Rule } from "./rules.js";

/** How long after a cluster's trade a trade of the same pair and direction can be its copy. */
export const COPY_WINDOW_S = 300;
/** A copier's followed volume is more than this share of its season volume ("most"). */
export const COPY_SHARE_BPS = 5_000;
/** ... in at least this many trades (the minimum of trading, rules MIN_TRADES): one coincidence is no pattern. */
export const COPY_MIN_TRADES = 3;

export type CopyTrade = {
  id: string;
  ts: number;
  block: number;
  token_in: string;
  token_out: string;
  /** The trade's value at the marks of its block (0 when neither side has a mark). */
  usd: number;
};
export type CopyFinding = {
  /** The entry of the other cluster whose trades were followed most. */
  leader: string;
  cluster: string;
  share_bps: number;
  /** Trades that followed the cluster, of `of`. */
  trades: number;
  of: number;
};

/**
 * One pair and direction's trades sorted by time, then block, as parallel arrays (the window's scan touches numbers
 * only): time, block, owner cluster and entry as small integers, and the trade's id (a trade that went or moved is
 * found by it). Kept in the memo between passes and updated in place (issue 29 point 6).
 */
type PairIndex = { ts: number[]; block: number[]; cluster: number[]; entry: number[]; id: string[] };
const emptyPair = (): PairIndex => ({ ts: [], block: [], cluster: [], entry: [], id: [] });

/** The first index of `ts` (sorted) at least `at`. */
function lowerBound(ts: ArrayLike<number>, at: number): number {
  let [lo, hi] = [0, ts.length];
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ts[mid]! < at) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const pairOf = (t: CopyTrade) => `${lc(t.token_in)}>${lc(t.token_out)}`;

/** pairOf, each pair's string built once per call (a pass asks it several times for each of 100,000 trades). */
function pairNames() {
  const names = new Map<string, Map<string, string>>();
  return (t: CopyTrade) => {
    let out = names.get(t.token_in);
    if (!out) names.set(t.token_in, (out = new Map()));
    let name = out.get(t.token_out);
    if (name === undefined) out.set(t.token_out, (name = pairOf(t)));
    return name;
  };
}

/**
 * The season's entries ranked in string order (a tie between two leaders goes to the smaller id, as strings
 * compare) and their owner clusters numbered.
 */
function numberingOf(trades: Map<string, CopyTrade[]>, clusterOf: Map<string, string>) {
  const entries = [...trades.keys()].sort();
  const rank = new Map(entries.map((e, i) => [e, i]));
  const clusters: string[] = [];
  const clusterNo = new Map<string, number>();
  const entryCluster = new Map<string, number>();
  for (const e of entries) {
    const c = clusterOf.get(e) ?? e;
    if (!clusterNo.has(c)) clusterNo.set(c, clusters.push(c) - 1);
    entryCluster.set(e, clusterNo.get(c)!);
  }
  return { entries, rank, clusters, entryCluster };
}
type Numbering = ReturnType<typeof numberingOf>;

/**
 * Each pair's trades of the whole season, sorted by time then block, ties in the order met (a memo's first pass). The
 * trades' places are sorted, read from numbers (a comparator reading two objects deep per compare was a twentieth of a
 * rebuild: issue 29 point 6).
 */
function pairsOf(trades: Map<string, CopyTrade[]>, nb: Numbering, pair: (t: CopyTrade) => string) {
  const met = new Map<string, PairIndex>();
  for (const [e, own] of trades) {
    const [entry, cluster] = [nb.rank.get(e)!, nb.entryCluster.get(e)!];
    for (const t of own) {
      const k = pair(t);
      let p = met.get(k);
      if (!p) met.set(k, (p = emptyPair()));
      p.ts.push(t.ts);
      p.block.push(t.block);
      p.cluster.push(cluster);
      p.entry.push(entry);
      p.id.push(t.id);
    }
  }
  const pairs = new Map<string, PairIndex>();
  for (const [k, p] of met) {
    const order = Array.from(p.ts, (_, i) => i);
    order.sort((a, b) => p.ts[a]! - p.ts[b]! || p.block[a]! - p.block[b]! || a - b);
    const take = <T>(xs: T[]) => order.map((i) => xs[i]!);
    pairs.set(k, {
      ts: take(p.ts),
      block: take(p.block),
      cluster: take(p.cluster),
      entry: take(p.entry),
      id: take(p.id),
    });
  }
  return pairs;
}

/** A trade into its pair's index, after those at its time and block. */
function insertInto(pairs: Map<string, PairIndex>, pair: string, t: CopyTrade, entry: number, cluster: number) {
  let p = pairs.get(pair);
  if (!p) pairs.set(pair, (p = emptyPair()));
  let i = lowerBound(p.ts, t.ts);
  while (i < p.ts.length && p.ts[i] === t.ts && p.block[i]! <= t.block) i++;
  p.ts.splice(i, 0, t.ts);
  p.block.splice(i, 0, t.block);
  p.cluster.splice(i, 0, cluster);
  p.entry.splice(i, 0, entry);
  p.id.splice(i, 0, t.id);
}

/** A trade of `entry` out of its pair's index, found at the time it was indexed with. */
function removeFrom(pairs: Map<string, PairIndex>, pair: string, ts: number, id: string, entry: number) {
  const p = pairs.get(pair);
  if (!p) return;
  for (let i = lowerBound(p.ts, ts); i < p.ts.length && p.ts[i] === ts; i++)
    if (p.id[i] === id && p.entry[i] === entry) {
      for (const list of [p.ts, p.block, p.cluster, p.entry, p.id] as unknown[][]) list.splice(i, 1);
      return;
    }
}

/**
 * A trade's follows: pairs of (cluster followed, its leading entry's rank), in the order its scan met the clusters.
 * Typed and kept only when they change: a pass scans again every trade near a new one, and most come out the same
 * (a growing array per scan was most of what a pass allocated, issue 29 point 6).
 */
type Follows = Int32Array;
const NO_FOLLOWS: Follows = new Int32Array(0);

/**
 * The scan's scratch, one slot per cluster, reset lazily by a stamp (the trade being scanned): the nearest
 * other-cluster trade mined before and after, and the entry of the one before; the clusters met (`touched`, the first
 * `met` of them) and the scan's follows (`out`, the first `n`). Typed arrays with counts: an array emptied by
 * `length = 0` gives up its storage in V8, and each push then grows a new one.
 */
function scratchOf(n: number) {
  return {
    stamp: new Int32Array(n).fill(-1),
    before: new Float64Array(n),
    after: new Float64Array(n),
    leader: new Int32Array(n),
    touched: new Int32Array(n),
    met: 0,
    out: new Int32Array(2 * n),
    n: 0,
  };
}
type Scratch = ReturnType<typeof scratchOf>;

/**
 * For one trade (scan number `no`): the clusters it follows, each with its leading entry's rank, as pairs in
 * `s.out` (its first `s.n`). Among another cluster's trades of its pair and direction within the window, another
 * block, the nearest before is nearer than the nearest after.
 */
function followsOf(t: Pick<CopyTrade, "ts" | "block">, cluster: number, p: PairIndex, s: Scratch, no: number) {
  s.met = 0;
  for (let i = lowerBound(p.ts, t.ts - COPY_WINDOW_S); i < p.ts.length && p.ts[i]! <= t.ts + COPY_WINDOW_S; i++) {
    const c = p.cluster[i]!;
    const block = p.block[i]!;
    // The same block: neither saw the other mined.
    if (c === cluster || block === t.block) continue;
    if (s.stamp[c] !== no) {
      s.stamp[c] = no;
      s.before[c] = Infinity;
      s.after[c] = Infinity;
      s.leader[c] = -1;
      s.touched[s.met++] = c;
    }
    const d = Math.abs(t.ts - p.ts[i]!);
    if (block < t.block && (d < s.before[c]! || (d === s.before[c]! && p.entry[i]! < s.leader[c]!))) {
      s.before[c] = d;
      s.leader[c] = p.entry[i]!;
    }
    if (block > t.block && d < s.after[c]!) s.after[c] = d;
  }
  s.n = 0;
  for (let k = 0; k < s.met; k++) {
    const c = s.touched[k]!;
    if (s.before[c]! < s.after[c]!) {
      s.out[s.n++] = c;
      s.out[s.n++] = s.leader[c]!;
    }
  }
}

/** `was` when the scan just made (`s.out`) says the same, else a copy of the scan's follows. */
function keptFollows(was: Follows | undefined, s: Scratch): Follows {
  if (was && was.length === s.n) {
    let k = 0;
    while (k < s.n && was[k] === s.out[k]) k++;
    if (k === s.n) return was;
  }
  return s.n ? s.out.slice(0, s.n) : NO_FOLLOWS;
}

/** Per-cluster tallies of one entry's followed volume and trades, reset through `touched`'s first `met`. */
function talliesOf(n: number) {
  return { usd: new Float64Array(n), n: new Int32Array(n), touched: new Int32Array(n), met: 0 };
}
type Tallies = ReturnType<typeof talliesOf>;

/** The entry the followed volume of `cluster` came from most (then the smaller id, as ranks order). */
function leaderOf(own: CopyTrade[], follows: Follows[], cluster: number, weight: (t: CopyTrade) => number) {
  const by = new Map<number, number>();
  own.forEach((t, j) => {
    const fs = follows[j]!;
    for (let x = 0; x < fs.length; x += 2)
      if (fs[x] === cluster) by.set(fs[x + 1]!, (by.get(fs[x + 1]!) ?? 0) + weight(t));
  });
  return [...by].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0]![0];
}

/**
 * An entry's finding as the memo keeps it: the finding or null, of how many trades, the volume they weigh (`total`,
 * whether by value: `valued`), and `top`, at least the followed volume of any one cluster (exact when the finding was
 * made; each later change to a follow adds its trade's weight).
 */
type Kept = { best: CopyFinding | null; n: number; total: number; valued: boolean; top: number };

/** A trade's weight in its entry's volume: its value, or one where none of the entry's trades is valued. */
const weightOf = (t: { usd: number }, valued: boolean) => (valued ? Math.max(t.usd, 0) : 1);

/**
 * Whether followed volume `usd` of `total` can not be most of it (COPY_SHARE_BPS, with a margin for sums added in
 * another order).
 */
const neverMost = (usd: number, total: number) => usd * (1 + 1e-9) * 10_000 <= total * COPY_SHARE_BPS;

/**
 * One entry's finding from its trades' follows (volume summed in its trades' order). Plain loops over typed arrays: a
 * pass of a busy hour sums a few million follows here (issue 29 point 6).
 */
function findingOf(own: CopyTrade[], follows: Follows[], ix: Numbering, tl: Tallies): Kept {
  const valued = own.some((t) => t.usd > 0);
  const weight = (t: CopyTrade) => weightOf(t, valued);
  const total = own.reduce((a, t) => a + weight(t), 0);
  const { usd: tUsd, n: tN, touched } = tl;
  let met = 0;
  for (let j = 0; j < own.length; j++) {
    const fs = follows[j]!;
    const w = weight(own[j]!);
    for (let x = 0; x < fs.length; x += 2) {
      const c = fs[x]!;
      if (tN[c] === 0) touched[met++] = c;
      tUsd[c] = tUsd[c]! + w;
      tN[c] = tN[c]! + 1;
    }
  }
  tl.met = met;
  let best: { c: number; cluster: string; share_bps: number; n: number } | null = null;
  let top = 0;
  for (let k = 0; k < met; k++) {
    const c = touched[k]!;
    const [usd, n, cluster] = [tl.usd[c]!, tl.n[c]!, ix.clusters[c]!];
    tl.usd[c] = 0;
    tl.n[c] = 0;
    top = Math.max(top, usd);
    const share_bps = total > 0 ? Math.floor((usd / total) * 10_000) : 0;
    if (n < COPY_MIN_TRADES || usd * 10_000 <= total * COPY_SHARE_BPS) continue;
    if (best && (share_bps < best.share_bps || (share_bps === best.share_bps && cluster > best.cluster))) continue;
    best = { c, cluster, share_bps, n };
  }
  const kept = { n: own.length, total, valued, top };
  if (!best) return { best: null, ...kept };
  // A trade follows a cluster once at most (followsOf): the cluster's count is its trades.
  const leader = ix.entries[leaderOf(own, follows, best.c, weight)]!;
  return {
    best: { leader, cluster: best.cluster, share_bps: best.share_bps, trades: best.n, of: own.length },
    ...kept,
  };
}

/** A trade as the memo last saw it: where it was, its value, its follows, and the pass that saw it last. */
type MemoTrade = { pair: string; ts: number; block: number; usd: number; fs: Follows; seen: number };

/**
 * What copy detection keeps between the standings worker's passes (issue 29 point 6): each pair's index of the
 * season's trades, each trade's follows and where it was, each entry's finding. A trade's follows depend only on its
 * pair's trades within COPY_WINDOW_S of it, so a pass updates the index and scans again only the trades near one
 * that came, went or moved; an entry whose follows and values are unchanged keeps its finding. Valid for one set of
 * entries and clusters (`key`); any change there starts over.
 */
export type CopyMemo = {
  key: string;
  /** Passes made (a record not seen by the latest is a trade that went). */
  pass: number;
  /** By entry, then trade id (updated in place: a pass allocates only for what changed). */
  trades: Map<string, Map<string, MemoTrade>>;
  /** By entry: its finding, how many trades it was made of, and what bounds it (Kept). */
  findings: Map<string, Kept>;
  /** Each pair's trades sorted (PairIndex), as of the latest pass. */
  pairs: Map<string, PairIndex>;
  /**
   * By entry: the list the latest pass was given. A caller that gives the same array again for an entry whose trades
   * did not change (the standings worker's kept lists: never changed in place) has that entry skipped unless a trade
   * near one of its own came, went or moved; a new array is compared trade by trade.
   */
  lists: Map<string, CopyTrade[]>;
};
export const copyMemo = (): CopyMemo => ({
  key: "",
  pass: 0,
  trades: new Map(),
  findings: new Map(),
  pairs: new Map(),
  lists: new Map(),
});

const memoKey = (nb: Numbering) => nb.entries.map((e) => `${e}=${nb.clusters[nb.entryCluster.get(e)!]}`).join("\n");

const sameAt = (was: MemoTrade | undefined, pair: string, t: CopyTrade) =>
  was !== undefined && was.pair === pair && was.ts === t.ts && was.block === t.block;

/**
 * Per pair, the sorted times of the trades that came, went or moved since the memo's pass, among the entries
 * `relisted` (given a list other than the memo's) and those gone from `trades`; the records of trades gone are
 * dropped. Each such trade is taken out of its pair's index where it was and put in where it is now.
 */
function movedTimes(
  trades: Map<string, CopyTrade[]>,
  relisted: string[],
  memo: CopyMemo,
  pair: (t: CopyTrade) => string,
  nb: Numbering,
) {
  const times = new Map<string, number[]>();
  const add = (p: string, ts: number) => (times.get(p) ?? times.set(p, []).get(p)!).push(ts);
  const pass = ++memo.pass;
  const drop = (entry: string, mine: Map<string, MemoTrade>, gone: (was: MemoTrade) => boolean) => {
    for (const [id, was] of mine)
      if (gone(was)) {
        add(was.pair, was.ts);
        removeFrom(memo.pairs, was.pair, was.ts, id, nb.rank.get(entry) ?? -1);
        mine.delete(id);
      }
  };
  for (const entry of relisted) {
    const own = trades.get(entry)!;
    const mine = memo.trades.get(entry);
    const [rank, cluster] = [nb.rank.get(entry)!, nb.entryCluster.get(entry)!];
    for (const t of own) {
      const was = mine?.get(t.id);
      if (was) was.seen = pass;
      const p = pair(t);
      if (sameAt(was, p, t)) continue;
      add(p, t.ts);
      if (was) add(was.pair, was.ts);
      if (was) removeFrom(memo.pairs, was.pair, was.ts, t.id, rank);
      insertInto(memo.pairs, p, t, rank, cluster);
    }
    if (mine) drop(entry, mine, (was) => was.seen !== pass);
  }
  for (const [entry, mine] of memo.trades)
    if (!trades.has(entry)) {
      drop(entry, mine, () => true);
      memo.trades.delete(entry);
    }
  return new Map([...times].map(([p, list]) => [p, Float64Array.from(list).sort()]));
}

/**
 * By entry rank, the ids of its trades in their pair's index within the window of a time in `moved` (their follows
 * may have changed): one walk along each pair's index, the windows of the sorted times taken in order.
 */
function tradesNear(moved: Map<string, Float64Array>, pairs: Map<string, PairIndex>): Map<number, Set<string>> {
  const out = new Map<number, Set<string>>();
  for (const [pair, times] of moved) {
    const p = pairs.get(pair);
    if (!p) continue;
    let i = 0;
    for (const ts of times) {
      i = Math.max(i, lowerBound(p.ts, ts - COPY_WINDOW_S));
      for (; i < p.ts.length && p.ts[i]! <= ts + COPY_WINDOW_S; i++) {
        const ids = out.get(p.entry[i]!);
        if (ids) ids.add(p.id[i]!);
        else out.set(p.entry[i]!, new Set([p.id[i]!]));
      }
    }
  }
  return out;
}

/** Whether `t` is within the window of a trade that moved (its follows may have changed). */
function nearMoved(t: CopyTrade, pair: string, moved: Map<string, Float64Array>) {
  const list = moved.get(pair);
  if (!list) return false;
  const i = lowerBound(list, t.ts - COPY_WINDOW_S);
  return i < list.length && list[i]! <= t.ts + COPY_WINDOW_S;
}

/**
 * Each entry that copies another cluster, with the cluster it follows most and the share of its
 * volume that follows it. `clusterOf` names each entry's owner cluster; trades of one's own
 * cluster are never a copy. Each trade scans only its pair's trades within the window (a binary
 * search into that pair's trades sorted by time), with per-cluster scratch in typed arrays: no
 * allocation per neighbour (it was 20 to 35 s for 1,000 entrants of 100 trades over three days).
 * With a `memo` (kept by the caller between calls) only trades near a change are scanned again.
 */
export function copyFindings(trades: Map<string, CopyTrade[]>, clusterOf: Map<string, string>, memo?: CopyMemo) {
  const pair = pairNames();
  const nb = numberingOf(trades, clusterOf);
  const m = memo ?? copyMemo();
  const key = memoKey(nb);
  const built = m.key !== key;
  if (built) Object.assign(m, { ...copyMemo(), pairs: pairsOf(trades, nb, pair) });
  // Not valid until this pass ends: a pass that throws half-way leaves the next one to start over.
  m.key = "";
  const relisted = [...trades].filter(([e, own]) => m.lists.get(e) !== own).map(([e]) => e);
  // A memo built now keeps no follows: every trade is scanned, none needs to be found near a change.
  if (built) m.pass++;
  const moved = built ? new Map<string, Float64Array>() : movedTimes(trades, relisted, m, pair, nb);
  const near = built ? new Map<number, Set<string>>() : tradesNear(moved, m.pairs);
  const n = nb.clusters.length;
  const scan: Scan = { m, nb, pair, moved, scratch: scratchOf(n), tallies: talliesOf(n), no: 0 };
  const out = new Map<string, CopyFinding>();
  for (const [entry, own] of trades) {
    const prev = m.findings.get(entry);
    const ids = near.get(nb.rank.get(entry)!);
    // The same list: its follows stand but for its trades near one that came, went or moved.
    const kept = prev && m.lists.get(entry) === own ? (ids ? nearFinding(scan, entry, own, prev, ids) : prev) : null;
    const found = kept ?? relistedFinding(scan, entry, own, prev);
    m.lists.set(entry, own);
    m.findings.set(entry, found);
    if (found.best) out.set(entry, found.best);
  }
  for (const entry of m.lists.keys()) if (!trades.has(entry)) m.lists.delete(entry);
  for (const entry of m.findings.keys()) if (!trades.has(entry)) m.findings.delete(entry);
  m.key = key;
  return out;
}

/** One call's scan: the memo, the entries' numbering, the moved times, the scratch and tallies, the scan counter. */
type Scan = {
  m: CopyMemo;
  nb: Numbering;
  pair: (t: CopyTrade) => string;
  moved: Map<string, Float64Array>;
  scratch: Scratch;
  tallies: Tallies;
  no: number;
};
/**
 * An entry given a list the memo has not seen (or without a finding): each trade's follows scanned again where it is
 * new, moved or near a change, its record updated, and its finding made again when a follow or a value changed.
 */
function relistedFinding(s: Scan, entry: string, own: CopyTrade[], prev: Kept | undefined): Kept {
  const { m, pair } = s;
  const cluster = s.nb.entryCluster.get(entry)!;
  let mine = m.trades.get(entry);
  if (!mine) m.trades.set(entry, (mine = new Map()));
  // New, or it lost trades (a reorganisation): valued again.
  let changed = prev?.n !== own.length;
  const follows = own.map((t) => {
    const p = pair(t);
    const was = mine.get(t.id);
    let fs = was?.fs;
    if (!fs || !sameAt(was, p, t) || nearMoved(t, p, s.moved)) {
      followsOf(t, cluster, m.pairs.get(p)!, s.scratch, s.no++);
      fs = keptFollows(was?.fs, s.scratch);
      changed ||= fs !== was?.fs;
    }
    changed ||= was?.usd !== t.usd;
    if (!was) mine.set(t.id, { pair: p, ts: t.ts, block: t.block, usd: t.usd, fs, seen: m.pass });
    else if (was.fs !== fs || !sameAt(was, p, t) || was.usd !== t.usd)
      Object.assign(was, { pair: p, ts: t.ts, block: t.block, usd: t.usd, fs });
    return fs;
  });
  return changed || !prev ? findingOf(own, follows, s.nb, s.tallies) : prev;
}

/**
 * An entry given the same list as before, whose trades `ids` are within the window of a change: only those are
 * scanned again (a trade's follows depend only on its pair's trades within the window), and its finding is made
 * again only if one's follows changed and a cluster might now weigh most of its volume. Null where a trade of the list
 * has no record (the caller scans it all).
 *
 * A changed trade moves any one cluster's followed volume by its weight at most, so with `top` (a bound of any
 * cluster's) plus the changed weights still short of most, there is no finding now (nor was there: a finding's cluster
 * weighs most): the bound grows, and the entry's follows are not summed again (a burst puts hundreds of trades near
 * each other, and each entry with a changed follow had its thousands of follows summed again: issue 29 point 6).
 */
function nearFinding(s: Scan, entry: string, own: CopyTrade[], prev: Kept, ids: Set<string>): Kept | null {
  const mine = s.m.trades.get(entry);
  if (!mine) return null;
  const cluster = s.nb.entryCluster.get(entry)!;
  let grew = 0;
  let changed = false;
  for (const id of ids) {
    const was = mine.get(id);
    if (!was) return null;
    followsOf(was, cluster, s.m.pairs.get(was.pair)!, s.scratch, s.no++);
    const fs = keptFollows(was.fs, s.scratch);
    if (fs === was.fs) continue;
    was.fs = fs;
    changed = true;
    grew += weightOf(was, prev.valued);
  }
  if (!changed) return prev;
  if (neverMost(prev.top + grew, prev.total)) return { ...prev, top: prev.top + grew };
  const follows: Follows[] = [];
  for (const t of own) {
    const was = mine.get(t.id);
    if (!was) return null;
    follows.push(was.fs);
  }
  return findingOf(own, follows, s.nb, s.tallies);
}

/** The rule's reason for a finding: the matched entry and the share of volume. */
export const copyReason = (f: CopyFinding) =>
  `${(f.share_bps / 100).toFixed(2)} % of its season volume (${f.trades} of ${f.of} trades) repeats entry ` +
  `${f.leader}'s trades (cluster ${f.cluster}): the same pair and direction, mined up to ${COPY_WINDOW_S} s after ` +
  `them: held for review`;

/** Rule COPY_TRADING: a flag held for review with the matched entry and the share, or a pass. */
export const copyRule = (f: CopyFinding | null): Rule => ({
  rule: "COPY_TRADING",
  name: "does not copy another cluster's trades",
  status: f ? "flag" : "pass",
  reason: f
    ? copyReason(f)
    : `most of its season volume does not follow another cluster's trades within ${COPY_WINDOW_S} s`,
  reviewed: false,
});
