import type { PlatformSigner } from "../ports/platformSigner.js";
import type { Ledger } from "../trading/index.js";
import { draftWeek, ownTxsIn, type CloseDeps, type Planned, type WeekRow } from "./close.js";
import { weekBlocks, type WeekBlocks } from "./gather.js";
import { checkChain, GENESIS_HASH, rowHash } from "./record.js";
import { deliverSplit, signSplit, SplitRefused, type Send } from "./send.js";
import { BUCKETS } from "./split.js";
import type { TreasuryStore } from "./store.js";
import { weekAfter, weekOf, type Week } from "./week.js";
import type { Common } from "../ports/common.js";
import { FINALITY_BLOCKS } from "../../lib/finality.js";
import { treasuryWeeksClosed, workerPass, type PassOutcome } from "../../lib/metrics.js";

const LOCK = "treasury-week-closer";

export type CloserDeps = CloseDeps &
  Pick<Common, "clock" | "logger"> & {
    store: TreasuryStore;
    ledger: CloseDeps["ledger"] & Pick<Ledger, "firstMinedAt" | "unsettledBefore">;
    signer: PlatformSigner | null;
    confirmations?: number;
    intervalMs?: number;
    /**
     * How long to wait for each split transfer's receipt before giving the pass up (the next pass
     * sends the same bytes).
     */
    deliverTimeoutMs?: number;
    /** Called after rows were appended (the reader drops its cached answer). */
    onClosed?: () => void;
  };

/** Per token (lower-case address), what the wallet must still hold after the split: carried plus owed. */
const heldAfter = (tokens: WeekRow["tokens"]) =>
  new Map(
    tokens.map((t) => [
      t.token.toLowerCase(),
      BigInt(t.carried_out) + BUCKETS.reduce((s, b) => s + BigInt(t.owed_out[b]), 0n),
    ]),
  );

type Draft = { row: Awaited<ReturnType<typeof draftWeek>>["row"]; planned: Planned[]; status: "moved" | "booked" };

const nowS = (d: Pick<CloserDeps, "clock">) => Math.floor(d.clock() / 1000);
/** A week closes once its last block is this deep in the indexer. */
const confirmationsOf = (d: CloserDeps) => d.confirmations ?? FINALITY_BLOCKS;

/** The first week to record: the one of the first fee that reached the wallet or the first trade mined. */
async function firstWeek(d: CloserDeps): Promise<Week | null> {
  const times = [await d.indexed.firstFeeTransferAt(), await d.ledger.firstMinedAt()].filter(
    (t): t is number => t !== null,
  );
  return times.length ? weekOf(Math.min(...times)) : null;
}

/** The week's blocks once it is final enough to close, else null. */
async function readyBlocks(d: CloserDeps, week: Week) {
  if (week.end > nowS(d)) return null;
  const indexedHead = await d.indexed.head();
  // Uncached (viem keeps a block number for the client's cacheTime): the week's last block is
  // searched up to `head`, and a head older than the indexer's would end the week too early.
  const head = Number(await d.chain.getBlockNumber({ cacheTime: 0 }));
  if (!indexedHead || indexedHead.timestamp < week.end || head < indexedHead.block) return null;
  const blocks = await weekBlocks(d.chain, week, head);
  const boundary = blocks.last ?? indexedHead.block;
  if (indexedHead.block < boundary + confirmationsOf(d)) return null;
  if ((await d.ledger.unsettledBefore(week.end)) > 0) return null;
  return blocks;
}

/**
 * A record that lost its store (or a second one beside it) would split old weeks again: before
 * signing, no transfer from the wallet to a bucket may have landed after the week's end that
 * this record did not send itself.
 */
async function assertNoUnknownSplit(d: CloserDeps, week: Week, rows: WeekRow[]) {
  // The guard reads the indexer: it must be near the chain's head, or a split sent moments ago
  // by another record would not be seen yet.
  const indexedHead = await d.indexed.head();
  const head = Number(await d.chain.getBlockNumber({ cacheTime: 0 }));
  if (!indexedHead || head - indexedHead.block > confirmationsOf(d))
    throw new SplitRefused(
      `the indexer is ${indexedHead ? head - indexedHead.block : "all"} blocks behind the chain: ` +
        `bucket transfers after ${week.label} may not be seen yet; nothing is sent`,
    );
  const known = new Set(rows.flatMap((r) => r.transfers.map((t) => t.tx_hash.toLowerCase())));
  const buckets = new Set(Object.values(d.config.treasuryBuckets).flatMap((b) => (b ? [b.toLowerCase()] : [])));
  const later = await d.indexed.feeTransfersBetween(week.end, Number.MAX_SAFE_INTEGER);
  const unknown = later.filter(
    (t) => t.direction === "out" && buckets.has(t.to.toLowerCase()) && !known.has(t.txHash.toLowerCase()),
  );
  if (unknown.length)
    throw new SplitRefused(
      `${unknown.length} transfer(s) from the platform wallet to a bucket after ${week.label} are not in this ` +
        `record (first ${unknown[0]!.txHash}): was it split already? nothing is sent`,
    );
}

/**
 * The week's draft and its signed split transfers, kept in the store before any is sent (a retry sends the same
 * bytes).
 */
async function keptDraft(d: CloserDeps, week: Week, blocks: WeekBlocks, rows: WeekRow[]) {
  const kept = await d.store.draft<Draft, Send>(week.start);
  if (kept) return kept;
  const draft = await draftWeek(d, week, blocks, rows.at(-1) ?? null, ownTxsIn(rows, blocks.first, blocks.last));
  if (d.signer && draft.planned.length) await assertNoUnknownSplit(d, week, rows);
  const sends = d.signer ? await signSplit(d.chain, d.signer, draft.planned, heldAfter(draft.row.tokens)) : [];
  // "moved" when every bucket has a wallet the split went to; "booked" when a share stays held.
  const status = Object.values(d.moving).every(Boolean) ? "moved" : "booked";
  return d.store.keepDraft<Draft, Send>(week.start, { ...draft, status }, sends, nowS(d));
}

function logClosed(d: CloserDeps, week: Week, row: WeekRow) {
  d.logger?.info(
    {
      week: week.label,
      seq: row.seq,
      status: row.status,
      transfers: row.transfers.length,
      reconciliation: row.reconciliation.status,
    },
    "treasury week closed",
  );
  // The ledger and the chain disagree (or the chain could not be read): an operator looks
  // (also counted in GET health).
  if (row.reconciliation.status === "accepted")
    d.logger?.warn(
      { week: week.label, seq: row.seq, reasons: row.reconciliation.accepted },
      "treasury week recorded as accepted, not agrees",
    );
}

/**
 * Closes one week on top of `rows` once it is ready (null until then): draft, split sent, row appended
 * once the split's transfers are as deep as the week's last block had to be.
 */
async function closeWeek(d: CloserDeps, week: Week, rows: WeekRow[]): Promise<WeekRow | null> {
  const blocks = await readyBlocks(d, week);
  if (!blocks) return null;
  const prev = rows.at(-1) ?? null;
  const kept = await keptDraft(d, week, blocks, rows);
  const transfers = await deliverSplit(
    d.chain,
    kept.sends,
    { from: d.config.feeRecipient, buckets: d.config.treasuryBuckets },
    { timeoutMs: d.deliverTimeoutMs, confirmations: confirmationsOf(d) },
  );
  if (!transfers) return null;
  const row: WeekRow = {
    ...kept.draft.row,
    seq: (prev?.seq ?? 0) + 1,
    status: kept.draft.status,
    transfers,
    prev_hash: prev?.hash ?? GENESIS_HASH,
    hash: null,
    recorded_at: nowS(d),
  };
  row.hash = rowHash(row);
  await d.store.append({ ...row, hash: row.hash, prev_hash: row.prev_hash! }, JSON.stringify(row));
  treasuryWeeksClosed.inc({ status: row.status, reconciliation: row.reconciliation.status });
  logClosed(d, week, row);
  return row;
}

/**
 * Closes every finished week not yet recorded, once across instances; answers the rows appended. The pass's
 * outcome goes to pit_worker_passes_total (treasury_closer): waiting when a finished week is not ready yet,
 * failed when the record is broken or the pass threw, not_held when another instance holds the lock.
 */
async function closeDue(d: CloserDeps): Promise<WeekRow[]> {
  let outcome: PassOutcome = "ran";
  const out = await d.store.db
    .exclusive(LOCK, async () => {
      const { integrity, rows } = checkChain(await d.store.rows());
      if (!integrity.ok) {
        d.logger?.error({ integrity }, "treasury record broken: no week is closed on top of it");
        outcome = "failed";
        return [];
      }
      const chain = rows as unknown as WeekRow[];
      const appended: WeekRow[] = [];
      const last = chain.at(-1);
      let week = last ? weekAfter(weekOf(last.week.start)) : await firstWeek(d);
      while (week && week.end <= nowS(d)) {
        const row = await closeWeek(d, week, [...chain, ...appended]);
        if (!row) {
          outcome = "waiting";
          break;
        }
        appended.push(row);
        week = weekAfter(week);
      }
      return appended;
    })
    .catch((err) => (workerPass("treasury_closer", "failed"), Promise.reject(err)));
  workerPass("treasury_closer", out ? outcome : "not_held");
  if (out?.value.length) d.onClosed?.();
  return out?.value ?? [];
}

/**
 * The week closer: after Monday 00:00 UTC it closes each finished week in order, once across
 * instances (the store's exclusive lock: a PostgreSQL advisory lock; the one PGlite process).
 * A week waits until its last block is FINALITY_BLOCKS deep in the indexer and no trade
 * relayed before its end can still be mined. It never extends a chain that fails its integrity.
 */
export function createWeekCloser(d: CloserDeps) {
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<unknown> | null = null;

  async function tick() {
    try {
      await closeDue(d);
    } catch (err) {
      d.logger?.error({ err }, "treasury week closer failed; trying again");
    }
  }

  return {
    /** Closes every finished week not yet recorded; answers the rows appended. */
    closeDue: () => closeDue(d),
    start() {
      if (timer) return;
      timer = setInterval(() => void (running ??= tick().finally(() => (running = null))), d.intervalMs ?? 30_000);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = null;
      await running;
    },
  };
}

export type WeekCloser = ReturnType<typeof createWeekCloser>;
