import type { Address } from "viem";
import type { Logger } from "pino";
import { draftWeek, ownTxsIn, type CloseDeps, type TokenRow, type WeekRow } from "./close.js";
import { weekBlocks } from "./gather.js";
import { checkChain, type Integrity } from "./record.js";
import { BUCKETS, SPLIT_BPS, perBucket, type Bucket, type PerBucket } from "./split.js";
import type { TreasuryStore } from "./store.js";
import { weekOf } from "./week.js";

/** The preview traces ETH over at most this many blocks (about 1.4 h of chain 4663). */
export const PREVIEW_TRACE_BLOCKS = 50_000;
/** The record is served without its preview past this (a slow node or a flood of airdropped tokens). */
const PREVIEW_TIMEOUT_MS = 5_000;

export type TokenTotal = {
  token: Address;
  symbol: string;
  decimals: number;
  received: string;
  outside: string;
  trades: number;
  booked: PerBucket<string>;
  moved: PerBucket<string>;
  /** Shares still held for buckets without a wallet, as of the newest row. */
  owed: PerBucket<string>;
  /** What the platform wallet holds for the record: carried plus owed, as of the newest row. */
  held: string;
};

export type TreasuryAnswer = {
  platform_wallet: Address;
  buckets: PerBucket<Address | null>;
  split_bps: typeof SPLIT_BPS;
  integrity: Integrity;
  weeks: WeekRow[];
  totals: TokenTotal[];
  prize_payouts: unknown[];
  explorer_tx: string | null;
  generated_at: number;
  cached_s: number;
};

/** Per token over the served rows: sums of what came in and was split; owed and held from the newest row naming it. */
export function totalsOf(rows: WeekRow[]): TokenTotal[] {
  const byToken = new Map<string, { last: TokenRow; received: bigint; outside: bigint; trades: number; booked: PerBucket; moved: PerBucket }>();
  for (const r of rows) {
    for (const t of r.tokens) {
      const k = t.token.toLowerCase();
      const acc = byToken.get(k) ?? { last: t, received: 0n, outside: 0n, trades: 0, booked: perBucket(() => 0n), moved: perBucket(() => 0n) };
      acc.last = t;
      acc.received += BigInt(t.received);
      acc.outside += BigInt(t.outside);
      acc.trades += t.trades;
      for (const b of BUCKETS) {
        acc.booked[b] += BigInt(t.booked[b]);
        acc.moved[b] += BigInt(t.moved[b]);
      }
      byToken.set(k, acc);
    }
  }
  return [...byToken.values()].map((a) => ({
    token: a.last.token,
    symbol: a.last.symbol,
    decimals: a.last.decimals,
    received: a.received.toString(),
    outside: a.outside.toString(),
    trades: a.trades,
    booked: perBucket((b) => a.booked[b].toString()),
    moved: perBucket((b) => a.moved[b].toString()),
    owed: a.last.owed_out,
    held: (BigInt(a.last.carried_out) + BUCKETS.reduce((s, b: Bucket) => s + BigInt(a.last.owed_out[b]), 0n)).toString(),
  }));
}

/**
 * GET treasury's answer: the stored rows replayed through checkChain (rows from a broken one on
 * are not served), newest first, with the week in progress as a `preview` row first. Kept for
 * `cacheMs` (cached_s says how old); the closer drops it when it appends.
 */
export function createTreasuryReader(d: CloseDeps & { store: TreasuryStore; clock: () => number; logger?: Logger; cacheMs?: number; prizePayouts?: () => Promise<unknown[]> }) {
  let cached: { at: number; body: Omit<TreasuryAnswer, "cached_s"> } | null = null;
  let building: Promise<Omit<TreasuryAnswer, "cached_s">> | null = null;
  const cacheMs = d.cacheMs ?? 15_000;
  const now = () => Math.floor(d.clock() / 1000);

  async function preview(rows: WeekRow[]): Promise<WeekRow | null> {
    const week = weekOf(now());
    const last = rows.at(-1);
    if (last && last.week.start >= week.start) return null;
    try {
      const head = Number(await d.chain.getBlockNumber());
      const blocks = await weekBlocks(d.chain, week, head);
      // Served every cacheMs: traces only over a short week so far (a week of chain 4663 is ~6M blocks), else the balance's two reads.
      const draft = draftWeek(d, week, blocks, last ?? null, ownTxsIn(rows, blocks.first, blocks.last), { maxTraceBlocks: PREVIEW_TRACE_BLOCKS });
      draft.catch(() => {}); // a draft outlived by the timeout must not end as an unhandled rejection
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`preview took over ${PREVIEW_TIMEOUT_MS} ms`)), PREVIEW_TIMEOUT_MS)));
      const { row } = await Promise.race([draft, late]).finally(() => clearTimeout(timer));
      return { ...row, seq: (last?.seq ?? 0) + 1, status: "preview", transfers: [], prev_hash: null, hash: null, recorded_at: now() };
    } catch (err) {
      // The record stands without its preview: a node or indexer that cannot answer loses only this week's figures.
      d.logger?.warn({ err }, "treasury preview unavailable");
      return null;
    }
  }

  async function build(): Promise<Omit<TreasuryAnswer, "cached_s">> {
    const { integrity, rows } = checkChain(await d.store.rows());
    const served = rows as unknown as WeekRow[];
    const p = await preview(served);
    return {
      platform_wallet: d.config.feeRecipient,
      buckets: d.config.treasuryBuckets,
      split_bps: SPLIT_BPS,
      integrity,
      weeks: [...(p ? [p] : []), ...[...served].reverse()],
      totals: totalsOf(served),
      // The league's seasons paid, newest first (empty until the first payout).
      prize_payouts: d.prizePayouts ? await d.prizePayouts() : [],
      explorer_tx: d.config.explorerTx,
      generated_at: now(),
    };
  }

  return {
    async answer(): Promise<TreasuryAnswer> {
      if (!cached || d.clock() - cached.at >= cacheMs) {
        // Concurrent readers of a stale answer share one rebuild.
        building ??= build().finally(() => (building = null));
        cached = { at: d.clock(), body: await building };
      }
      return { ...cached.body, cached_s: Math.floor((d.clock() - cached.at) / 1000) };
    },
    invalidate() {
      cached = null;
    },
  };
}

export type TreasuryReader = ReturnType<typeof createTreasuryReader>;
