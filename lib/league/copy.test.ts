import { describe, expect, it } from "vitest";
import { lc } from "../address.js";
import {
  COPY_MIN_TRADES,
  COPY_SHARE_BPS,
  COPY_WINDOW_S,
  copyFindings,
  copyMemo,
  type CopyFinding,
  type CopyTrade,
} from "./copy.js";
import { prizeStandings, sharesOf, type BookNumbers, type PrizeEntry } from "./rules.js";
import type { Review } from "./review.js";

const ETH = "0x00000000000000000000000000000000000000e7";
const USDG = "0x0000000000000000000000000000000000000005";
const BTC = "0x00000000000000000000000000000000000000b7";

/** A trade at `ts` (its block grows with time), selling ETH for USDG unless told. */
const t = (id: string, ts: number, o: Partial<CopyTrade> = {}): CopyTrade => ({
  id,
  ts,
  block: Math.floor(ts / 2),
  token_in: ETH,
  token_out: USDG,
  usd: 100,
  ...o,
});
/** Entries' trades, each entry its own cluster unless `clusters` names it. */
const find = (trades: Record<string, CopyTrade[]>, clusters: Record<string, string> = {}) =>
  copyFindings(new Map(Object.entries(trades)), new Map(Object.keys(trades).map((e) => [e, clusters[e] ?? e])));
const DAY = 86_400;
/** The leader's three trades on two days. */
const leader = [t("l1", 10_000), t("l2", 20_000), t("l3", DAY + 10_000)];
const lagged = (lag: number, o: Partial<CopyTrade> = {}) => leader.map((x, i) => t(`c${i}`, x.ts + lag, o));

describe("copy-trading detection", () => {
  it("flags an entry whose trades follow another cluster's within the window, and not the one it follows", () => {
    const f = find({ leader, copier: lagged(12) });
    expect(f.get("copier")).toEqual({ leader: "leader", cluster: "leader", share_bps: 10_000, trades: 3, of: 3 });
    expect(f.has("leader")).toBe(false);
    // At the window's edge it still follows; a second later it does not.
    expect(find({ leader, copier: lagged(COPY_WINDOW_S) }).has("copier")).toBe(true);
    expect(find({ leader, copier: lagged(COPY_WINDOW_S + 1) }).has("copier")).toBe(false);
  });

  it("does not flag two honest agents trading one pair at independent times, near each other in either order", () => {
    // Each is once just before the other, once just after, once alone: a third of its volume follows.
    const a = [t("a1", 10_000), t("a2", 20_060), t("a3", DAY + 30_000)];
    const b = [t("b1", 10_060), t("b2", 20_000), t("b3", DAY + 50_000)];
    expect(find({ a, b }).size).toBe(0);
    // One agent trading every 100 s, another at times of its own: its nearest comes before only now and then.
    const busy = Array.from({ length: 400 }, (_, i) => t(`m${i}`, 10_000 + 100 * i));
    const own = [10_070, 12_020, 15_080, 18_060, 22_090, 27_040].map((ts, i) => t(`o${i}`, ts));
    expect(find({ busy, own }).size).toBe(0);
  });

  it("needs most of the season volume: half is not most, and a large trade of its own outweighs small copies", () => {
    const own = [t("o1", 3 * DAY), t("o2", 4 * DAY), t("o3", 5 * DAY)];
    expect(find({ leader, copier: [...lagged(10), ...own] }).has("copier")).toBe(false);
    const four = find({ leader, copier: [...lagged(10), ...own.slice(1)] }).get("copier");
    expect(four).toMatchObject({ share_bps: 6_000, trades: 3, of: 5 });
    expect(find({ leader, copier: [...lagged(10), t("big", 3 * DAY, { usd: 301 })] }).has("copier")).toBe(false);
    // Without any valued trade, trades count instead.
    expect(find({ leader, copier: lagged(10, { usd: 0 }) }).get("copier")).toMatchObject({ share_bps: 10_000 });
  });

  it("needs the same pair and direction, another block, another cluster, and three trades", () => {
    expect(find({ leader, copier: lagged(10, { token_in: USDG, token_out: ETH }) }).size).toBe(0);
    expect(find({ leader, copier: lagged(10, { token_out: BTC }) }).size).toBe(0);
    expect(find({ leader, copier: leader.map((x, i) => t(`c${i}`, x.ts, { block: x.block })) }).size).toBe(0);
    expect(find({ leader, copier: lagged(10) }, { copier: "leader" }).size).toBe(0);
    expect(find({ leader, copier: lagged(10).slice(0, 2) }).size).toBe(0);
  });

  it("counts a cluster's entries together and names the entry it followed most", () => {
    const other = [t("x1", 40_000)];
    const copier = [...lagged(10).slice(0, 2), t("c9", 40_010)];
    const f = find({ leader: leader.slice(0, 2), other, copier }, { other: "leader" });
    expect(f.get("copier")).toMatchObject({ leader: "leader", cluster: "leader", trades: 3, share_bps: 10_000 });
  });
});

/*
 * The implementation before the indexed scan (each trade's window scanned with a Map per trade), kept as the
 * reference the scan must agree with, field for field.
 */
type Placed = CopyTrade & { entry: string; cluster: string };

/** Reference: the first index of `list` (sorted by ts) whose ts is at least `ts`. */
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
function referenceFindings(trades: Map<string, CopyTrade[]>, clusterOf: Map<string, string>) {
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

/** A small deterministic generator (tests repeat). */
function rng(seed: number) {
  // Spread small seeds over 32 bits: xorshift starts slowly from a small state.
  let x = Math.imul(seed, 2654435761) >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

/** A random season: few clusters of several entries, under six hours, a few pairs, shared blocks, unvalued trades. */
function randomSeason(seed: number) {
  const r = rng(seed);
  const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)]!;
  const pairs = [
    [ETH, USDG],
    [USDG, ETH],
    [ETH, BTC],
    [BTC.toUpperCase().replace("0X", "0x"), ETH],
  ] as const;
  const trades = new Map<string, CopyTrade[]>();
  const clusters = new Map<string, string>();
  const entries = 2 + Math.floor(r() * 12);
  const valuedAll = r() < 0.8;
  for (let e = 0; e < entries; e++) {
    const id = `le_${Math.floor(r() * 1000)}_${e}`;
    clusters.set(id, `c${Math.floor(r() * Math.max(1, entries / 2))}`);
    const monotonic = r() < 0.5;
    const list = Array.from({ length: Math.floor(r() * 25) }, (_, i): CopyTrade => {
      const ts = Math.floor(r() * 20_000);
      const [token_in, token_out] = pick([...pairs]);
      const usd = !valuedAll || r() < 0.15 ? 0 : Math.round(r() * 1e6) / 100;
      return {
        id: `${id}-${i}`,
        ts,
        block: monotonic ? Math.floor(ts / 12) : Math.floor(r() * 300),
        token_in,
        token_out,
        usd,
      };
    });
    // Some entries copy an earlier one: its trades a little later (or not), in other blocks, with some of their own.
    const earlier = [...trades.values()];
    if (earlier.length && r() < 0.5) {
      const lag = Math.floor(r() * 160) - 20;
      for (const x of pick(earlier))
        if (r() < 0.85) list.push({ ...x, id: `${id}-c${x.id}`, ts: x.ts + lag, block: x.block + Math.floor(r() * 4) });
    }
    trades.set(id, list);
  }
  return { trades, clusters };
}

/**
 * One pass's changes to a season: new trades near old ones, one gone, one moved, one revalued, maybe a cluster. As
 * the standings worker's kept lists change: an entry that changes gets a new list, the others keep theirs (the memo
 * skips a list it was given before).
 */
function mutate(trades: Map<string, CopyTrade[]>, clusters: Map<string, string>, r: () => number, pass: number) {
  const ids = [...trades.keys()];
  const some = () => {
    const id = ids[Math.floor(r() * ids.length)]!;
    const list = [...trades.get(id)!];
    trades.set(id, list);
    return list;
  };
  for (let i = 0; i < 4; i++) {
    const [from, to] = [some(), some()];
    const x = from[Math.floor(r() * from.length)];
    if (x) to.push({ ...x, id: `p${pass}-${i}`, ts: x.ts + Math.floor(r() * 90) - 10, block: x.block + 1 });
  }
  const gone = some();
  if (gone.length) gone.splice(Math.floor(r() * gone.length), 1);
  const moved = some();
  if (moved.length) {
    const j = Math.floor(r() * moved.length);
    moved[j] = { ...moved[j]!, ts: moved[j]!.ts + 40, block: moved[j]!.block + 2 };
  }
  const revalued = some();
  if (revalued.length) revalued[0] = { ...revalued[0]!, usd: revalued[0]!.usd * 3 + 1 };
  if (r() < 0.2) clusters.set(ids[0]!, `c${Math.floor(r() * 3)}`);
}

describe("copy detection's indexed scan", () => {
  it("agrees with the reference field for field on 400 random seasons", () => {
    let flagged = 0;
    for (let seed = 1; seed <= 400; seed++) {
      const { trades, clusters } = randomSeason(seed);
      const found = copyFindings(trades, clusters);
      flagged += found.size;
      expect([...found], `seed ${seed}`).toEqual([...referenceFindings(trades, clusters)]);
    }
    // Not only empty answers: the seasons are dense enough that entries follow each other.
    expect(flagged).toBeGreaterThan(50);
  });

  it("with a memo kept across passes, agrees after trades come, go, move and change value, and clusters change", () => {
    let flagged = 0;
    for (let seed = 1; seed <= 120; seed++) {
      const { trades, clusters } = randomSeason(seed);
      const r = rng(seed + 10_000);
      const memo = copyMemo();
      for (let pass = 0; pass < 6; pass++) {
        const found = copyFindings(trades, clusters, memo);
        flagged += found.size;
        expect([...found], `seed ${seed} pass ${pass}`).toEqual([...referenceFindings(trades, clusters)]);
        mutate(trades, clusters, r, pass);
      }
    }
    expect(flagged).toBeGreaterThan(50);
  });

  it("finds a copier whose own list stayed the same when another cluster's trades changed around it", () => {
    // The copier's trades come 10 s after the leader's, and the leader traded again 5 s after each: nearer after than
    // before, so none follows. Then those later trades go (a reorganisation): the copier's list is the one it was
    // given, its trades near the change are scanned again, and every one follows now.
    const copier = lagged(10);
    const again = leader.map((x, i) => t(`a${i}`, x.ts + 15, { usd: 1 }));
    const memo = copyMemo();
    const trades = new Map([
      ["leader", [...leader, ...again]],
      ["copier", copier],
    ]);
    const clusters = new Map([...trades.keys()].map((e) => [e, e]));
    expect(copyFindings(trades, clusters, memo).has("copier")).toBe(false);
    trades.set("leader", [...leader]);
    expect(copyFindings(trades, clusters, memo).get("copier")).toEqual(
      referenceFindings(trades, clusters).get("copier"),
    );
    expect(memo.findings.get("copier")?.best).toMatchObject({ leader: "leader", trades: 3, of: 3 });
  });

  it("agrees on a dense season where many entries copy", () => {
    const trades = new Map<string, CopyTrade[]>();
    for (let i = 0; i < 60; i++)
      trades.set(
        `le_${i}`,
        Array.from({ length: 40 }, (_, g) => ({
          id: `${i}-${g}`,
          ts: (g * 9973 + i * 7919) % 86_400,
          block: 1 + ((g * 7 + i * 13) % 150),
          token_in: g % 2 ? USDG : ETH,
          token_out: g % 2 ? ETH : USDG,
          usd: 10 + g * 1.1,
        })),
      );
    const clusters = new Map([...trades.keys()].map((k, i) => [k, `c${i % 37}`]));
    const found = copyFindings(trades, clusters);
    expect(found.size).toBeGreaterThan(0);
    expect([...found]).toEqual([...referenceFindings(trades, clusters)]);
  });
});

const addr = (n: number) => `0x${n.toString(16).padStart(40, "0")}`;
const entry = (i: number): PrizeEntry => ({
  entry_id: `le_${i}`,
  agent_id: i,
  wallet: addr(100 + i),
  owner: addr(200 + i),
  agent_wallet: addr(300 + i),
  token: addr(1),
  symbol: `A${i}`,
  name: `Agent ${i}`,
  confirmed: true,
  confirmed_at: 10,
  entered_at: i,
  left_at: null,
  house: false,
  sanctioned: false,
  vault_wallet: addr(300 + i),
});
const book = (profit: number): BookNumbers => ({
  profit_usd: profit,
  score: profit,
  return_pct: null,
  max_dd_pct: null,
  capital_usd: 0,
  trades: 3,
  active_days: 2,
  unvalued: 0,
  open_unpriced: 0,
  price_outliers: 0,
  uncredited_usd: 0,
  unmarked_realised_usd: 0,
});

describe("rule COPY_TRADING and the operator's review", () => {
  const twelve = Array.from({ length: 12 }, (_, i) => entry(i + 1));
  // Entry 1 copies entry 2 and scores best.
  const trades = new Map([
    ["le_1", lagged(5)],
    ["le_2", leader],
  ]);
  const board = (reviews: Review[] = []) =>
    prizeStandings({
      entries: twelve,
      books: new Map(twelve.map((e, i) => [e.entry_id, book(100 - i)])),
      links: [],
      decided: false,
      ends: 10 * DAY,
      checked_at: 2 * DAY,
      shares: sharesOf(1_000n),
      trades,
      reviews,
    });
  const rule = (st: ReturnType<typeof board>, id: string, name: string) =>
    st.rows.find((r) => r.entry_id === id)!.eligibility.rules.find((r) => r.rule === name)!;
  const review = (o: Partial<Review>): Review => ({
    id: 1,
    season: 1,
    entry_id: "le_1",
    rule: "COPY_TRADING",
    verdict: "pass",
    flag_reason: rule(board(), "le_1", "COPY_TRADING").reason,
    reason: "signals from a shared public feed",
    by: "alice",
    at: DAY,
    ...o,
  });

  it("holds the copier for review with the matched entry and the share; the place goes down the board", () => {
    const st = board();
    expect(rule(st, "le_1", "COPY_TRADING")).toEqual({
      rule: "COPY_TRADING",
      name: "does not copy another cluster's trades",
      status: "flag",
      reason:
        "100.00 % of its season volume (3 of 3 trades) repeats entry le_2's trades (cluster le_2): the same pair " +
        `and direction, mined up to ${COPY_WINDOW_S} s after them: held for review`,
      reviewed: false,
    });
    expect(rule(st, "le_2", "COPY_TRADING").status).toBe("pass");
    expect(st.rows.find((r) => r.entry_id === "le_1")).toMatchObject({ place: null, eligibility: { eligible: false } });
    expect(st.rows.find((r) => r.place === 1)!.entry_id).toBe("le_2");
  });

  it("a review of the flag as it stands decides it, the latest one wins, and it names who, when and why", () => {
    const passed = board([review({})]);
    expect(rule(passed, "le_1", "COPY_TRADING")).toMatchObject({
      status: "pass",
      reviewed: true,
      reason: expect.stringMatching(
        /held for review; reviewed pass by alice at 1970-01-02T00:00:00.000Z: signals from a shared public feed$/,
      ),
    });
    expect(passed.rows.find((r) => r.entry_id === "le_1")).toMatchObject({ place: 1, eligibility: { eligible: true } });
    const failed = board([review({}), review({ id: 2, verdict: "fail", at: DAY + 1 })]);
    expect(rule(failed, "le_1", "COPY_TRADING")).toMatchObject({ status: "fail", reviewed: true });
    expect(failed.rows.find((r) => r.entry_id === "le_1")!.place).toBeNull();
  });

  it("a review of another flag, another entry or a rule never reviewed changes nothing", () => {
    const stale = review({ flag_reason: "66.66 % of its season volume (2 of 3 trades) ..." });
    expect(rule(board([stale]), "le_1", "COPY_TRADING")).toMatchObject({ status: "flag", reviewed: false });
    expect(rule(board([review({ entry_id: "le_3" })]), "le_1", "COPY_TRADING").status).toBe("flag");
    const listed = prizeStandings({
      entries: [{ ...entry(1), sanctioned: null }],
      books: new Map([["le_1", book(1)]]),
      links: [],
      decided: false,
      ends: 10 * DAY,
      checked_at: 2 * DAY,
      shares: null,
      reviews: [review({ rule: "SANCTIONS", flag_reason: "the sanctions list could not be read" })],
    });
    expect(rule(listed, "le_1", "SANCTIONS")).toMatchObject({ status: "flag", reviewed: false });
  });
});
