import type { Address } from "viem";
import { draftWeek, ownTxsIn, type CloseDeps, type TokenRow, type WeekRow } from "./close.js";
import { weekBlocks } from "./gather.js";
import { checkChain, type Integrity } from "./record.js";
import { BUCKETS, SPLIT_BPS, perBucket, type Bucket, type PerBucket } from "./split.js";
import type { TreasuryStore } from "./store.js";
import { weekOf } from "./week.js";
import type { Common } from "../ports/common.js";

/** The preview traces ETH over at most this many blocks (about 1.4 h of chain 4663). */
export const PREVIEW_TRACE_BLOCKS = 50_000;
/** The preview is built without its figures past this (a slow node or a flood of airdropped tokens). */
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

/**
 * Per token over the served rows: sums of what came in and was split; owed and held from the
 * newest row naming it.
 */
export function totalsOf(rows: WeekRow[]): TokenTotal[] {
  const byToken = new Map<
    string,
    { last: TokenRow; received: bigint; outside: bigint; trades: number; booked: PerBucket; moved: PerBucket }
  >();
  for (const r of rows) {
    for (const t of r.tokens) {
      const k = t.token.toLowerCase();
      const acc = byToken.get(k) ?? {
        last: t,
        received: 0n,
        outside: 0n,
        trades: 0,
        booked: perBucket(() => 0n),
        moved: perBucket(() => 0n),
      };
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
    held: (
      BigInt(a.last.carried_out) + BUCKETS.reduce((s, b: Bucket) => s + BigInt(a.last.owed_out[b]), 0n)
    ).toString(),
  }));
}

/**
 * The stored part of the answer (rows through checkChain, prize payouts) is read at most this often
 * (or every cacheMs when shorter), one read shared by concurrent readers.
 */
export const RECORD_TTL_MS = 1_000;

type RecordPart = { at: number; integrity: Integrity; rows: WeekRow[]; prizePayouts: unknown[] };
type Preview = { at: number; row: WeekRow | null };

export type ReaderDeps = CloseDeps &
  Pick<Common, "clock" | "logger"> & {
    store: TreasuryStore;
    cacheMs?: number;
    prizePayouts?: () => Promise<unknown[]>;
  };

/** The reader's state: the stored part shared for its ttl, the worker's last preview, its build queue and timer. */
type ReaderState = {
  d: ReaderDeps;
  cacheMs: number;
  recordTtlMs: number;
  record: { at: number; run: Promise<RecordPart> } | null;
  latest: Preview | null;
  first: Promise<void> | null;
  queue: Promise<void>;
  queued: Promise<void> | null;
  timer: NodeJS.Timeout | null;
};

const nowS = (d: Pick<ReaderDeps, "clock">) => Math.floor(d.clock() / 1000);

/** The draft, or a rejection once it runs past PREVIEW_TIMEOUT_MS. */
async function withinPreviewTime<T>(draft: Promise<T>): Promise<T> {
  draft.catch(() => {}); // a draft outlived by the timeout must not end as an unhandled rejection
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>(
    (_, reject) =>
      (timer = setTimeout(() => reject(new Error(`preview took over ${PREVIEW_TIMEOUT_MS} ms`)), PREVIEW_TIMEOUT_MS)),
  );
  return Promise.race([draft, late]).finally(() => clearTimeout(timer));
}

/** The week in progress as a `preview` row over the stored `rows`; null when the record has it or it cannot be read. */
async function preview(d: ReaderDeps, rows: WeekRow[]): Promise<WeekRow | null> {
  const week = weekOf(nowS(d));
  const last = rows.at(-1);
  if (last && last.week.start >= week.start) return null;
  try {
    const head = Number(await d.chain.getBlockNumber());
    const blocks = await weekBlocks(d.chain, week, head);
    // Built every cacheMs: traces only over a short week so far (a week of chain 4663 is ~6M
    // blocks), else the balance's two reads.
    const { row } = await withinPreviewTime(
      draftWeek(d, week, blocks, last ?? null, ownTxsIn(rows, blocks.first, blocks.last), {
        maxTraceBlocks: PREVIEW_TRACE_BLOCKS,
      }),
    );
    return {
      ...row,
      seq: (last?.seq ?? 0) + 1,
      status: "preview",
      transfers: [],
      prev_hash: null,
      hash: null,
      recorded_at: nowS(d),
    };
  } catch (err) {
    // The record stands without its preview: a node or indexer that cannot answer loses only this week's figures.
    d.logger?.warn({ err }, "treasury preview unavailable");
    return null;
  }
}

/** The worker's build: the preview over the record as stored now. */
async function build(s: ReaderState) {
  const { rows } = checkChain(await s.d.store.rows());
  const at = s.d.clock();
  s.latest = { at, row: await preview(s.d, rows as unknown as WeekRow[]) };
}

/** A build that starts after this call (one queued build is shared by every caller waiting for it). */
function refresh(s: ReaderState): Promise<void> {
  if (s.queued) return s.queued;
  const run = s.queue.then(async () => {
    s.queued = null;
    await build(s).catch((err) => s.d.logger?.warn({ err }, "treasury preview build failed"));
  });
  s.queued = run;
  s.queue = run;
  return run;
}

async function readRecord(d: ReaderDeps): Promise<RecordPart> {
  const at = d.clock();
  const { integrity, rows } = checkChain(await d.store.rows());
  // The league's seasons paid, newest first (empty until the first payout).
  return {
    at,
    integrity,
    rows: rows as unknown as WeekRow[],
    prizePayouts: d.prizePayouts ? await d.prizePayouts() : [],
  };
}

/** The stored part, read afresh once its ttl passed; one read shared by concurrent readers. */
function recordPart(s: ReaderState): Promise<RecordPart> {
  if (!s.record || s.d.clock() - s.record.at >= s.recordTtlMs) {
    const run = readRecord(s.d);
    const mine = { at: s.d.clock(), run };
    s.record = mine;
    run.catch(() => s.record === mine && (s.record = null));
  }
  return s.record.run;
}

async function answer(s: ReaderState): Promise<TreasuryAnswer> {
  const { d } = s;
  const rec = await recordPart(s);
  // Only the worker's first build is waited for (bounded by the preview's own timeout); never a build of our own.
  if (!s.latest && s.first) await s.first;
  const last = rec.rows.at(-1);
  const p = s.latest?.row && !(last && last.week.start >= s.latest.row.week.start) ? s.latest : null;
  const at = Math.min(rec.at, p?.at ?? rec.at);
  return {
    platform_wallet: d.config.feeRecipient,
    buckets: d.config.treasuryBuckets,
    split_bps: SPLIT_BPS,
    integrity: rec.integrity,
    weeks: [...(p?.row ? [{ ...p.row, seq: (last?.seq ?? 0) + 1 }] : []), ...[...rec.rows].reverse()],
    totals: totalsOf(rec.rows),
    prize_payouts: rec.prizePayouts,
    explorer_tx: d.config.explorerTx,
    generated_at: Math.floor(at / 1000),
    cached_s: Math.max(0, Math.floor((d.clock() - at) / 1000)),
  };
}

/**
 * GET treasury's answer: the stored rows replayed through checkChain (rows from a broken one on
 * are not served), newest first, with the week in progress as a `preview` row first. The preview
 * (chain reads: traces or balances, every foreign token's facts) is built only by this instance's
 * worker, every `cacheMs` and when the closer appends (`refresh`); readers get the last one and
 * never start a build. The stored part is a cheap store read, shared for RECORD_TTL_MS. A preview
 * of a week the record has closed since is left out (the closer's append asks for the next build).
 */
export function createTreasuryReader(d: ReaderDeps) {
  const cacheMs = d.cacheMs ?? 15_000;
  const s: ReaderState = {
    d,
    cacheMs,
    recordTtlMs: Math.min(cacheMs, RECORD_TTL_MS),
    record: null,
    latest: null,
    first: null,
    queue: Promise.resolve(),
    queued: null,
    timer: null,
  };
  return {
    answer: () => answer(s),
    /** The record changed (the closer appended): read it afresh and build the preview again. */
    invalidate() {
      s.record = null;
      void refresh(s);
    },
    refresh: () => refresh(s),
    /** The worker: a build now, then every cacheMs (0: none on a timer; tests call refresh). */
    start() {
      if (s.first) return;
      s.first = refresh(s);
      if (s.cacheMs > 0) {
        s.timer = setInterval(() => void (s.queued ?? refresh(s)), s.cacheMs);
        s.timer.unref();
      }
    },
    async stop() {
      if (s.timer) clearInterval(s.timer);
      s.timer = null;
      await s.queue;
    },
  };
}

export type TreasuryReader = ReturnType<typeof createTreasuryReader>;
