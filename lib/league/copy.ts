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

type Placed = CopyTrade & { entry: string; cluster: string };

/** The first index of `list` (sorted by ts) whose ts is at least `ts`. */
function lowerBound(list: Placed[], ts: number): number {
  let [lo, hi] = [0, list.length];
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (list[mid]!.ts < ts) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** For one trade: each other cluster with a trade in the window, its nearest before and after, and who was before. */
function nearestOf(t: Placed, list: Placed[]) {
  const near = new Map<string, { before: number; after: number; leader: string }>();
  for (let i = lowerBound(list, t.ts - COPY_WINDOW_S); i < list.length && list[i]!.ts <= t.ts + COPY_WINDOW_S; i++) {
    const u = list[i]!;
    // The same block: neither saw the other mined.
    if (u.cluster === t.cluster || u.block === t.block) continue;
    const n = near.get(u.cluster) ?? { before: Infinity, after: Infinity, leader: "" };
    const d = Math.abs(t.ts - u.ts);
    if (u.block < t.block && (d < n.before || (d === n.before && u.entry < n.leader)))
      Object.assign(n, { before: d, leader: u.entry });
    if (u.block > t.block && d < n.after) n.after = d;
    near.set(u.cluster, n);
  }
  return near;
}

/**
 * Each entry that copies another cluster, with the cluster it follows most and the share of its
 * volume that follows it. `clusterOf` names each entry's owner cluster; trades of one's own
 * cluster are never a copy.
 */
export function copyFindings(trades: Map<string, CopyTrade[]>, clusterOf: Map<string, string>) {
  const byPair = new Map<string, Placed[]>();
  const placed = new Map<string, Placed[]>();
  for (const [entry, list] of trades) {
    const cluster = clusterOf.get(entry) ?? entry;
    const own = list.map((t) => ({ ...t, entry, cluster }));
    placed.set(entry, own);
    for (const t of own) {
      const k = `${lc(t.token_in)}>${lc(t.token_out)}`;
      if (!byPair.has(k)) byPair.set(k, []);
      byPair.get(k)!.push(t);
    }
  }
  for (const list of byPair.values()) list.sort((a, b) => a.ts - b.ts || a.block - b.block);
  const out = new Map<string, CopyFinding>();
  for (const [entry, own] of placed) {
    const valued = own.some((t) => t.usd > 0);
    const weight = (t: Placed) => (valued ? Math.max(t.usd, 0) : 1);
    const total = own.reduce((a, t) => a + weight(t), 0);
    // Per followed cluster: volume, trades, and the volume per leading entry.
    const followed = new Map<string, { usd: number; n: number; by: Map<string, number> }>();
    for (const t of own) {
      const near = nearestOf(t, byPair.get(`${lc(t.token_in)}>${lc(t.token_out)}`)!);
      for (const [cluster, n] of near) {
        if (!(n.before < n.after)) continue;
        const f = followed.get(cluster) ?? { usd: 0, n: 0, by: new Map<string, number>() };
        f.usd += weight(t);
        f.n++;
        f.by.set(n.leader, (f.by.get(n.leader) ?? 0) + weight(t));
        followed.set(cluster, f);
      }
    }
    let best: CopyFinding | null = null;
    for (const [cluster, f] of followed) {
      const share_bps = total > 0 ? Math.floor((f.usd / total) * 10_000) : 0;
      if (f.n < COPY_MIN_TRADES || f.usd * 10_000 <= total * COPY_SHARE_BPS) continue;
      if (best && (share_bps < best.share_bps || (share_bps === best.share_bps && cluster > best.cluster))) continue;
      const leader = [...f.by].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]![0];
      best = { leader, cluster, share_bps, trades: f.n, of: own.length };
    }
    if (best) out.set(entry, best);
  }
  return out;
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
