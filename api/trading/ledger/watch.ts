import type { Address, Hex } from "viem";
import {
  type LedgerDeps,
  nowS,
  type StoredOutcome,
  outcomeOf,
  type RelayState,
  type WatchedTrade,
  relayedPlanOf,
} from "./records.js";

/** The relay watcher's side: the trades it follows and what it read from their receipts. */

/**
 * The relayed trades to look at: pending ones relayed since `since` (or never looked at, e.g.
 * relayed before the watcher existed), and outcomes not final yet. Oldest first.
 */
export async function watchList(d: LedgerDeps, since: number, limit = 500): Promise<WatchedTrade[]> {
  const rows = await d.db.query(
    `SELECT t.id, t.wallet, t.tx_hash, t.fee_tx_hash, t.status, t.block_number, t.block_hash, t.created_at,
           t.checked_at,
            t.raw_tx, t.relay, t.sent_at, p.deadline AS p_deadline, p.execution AS p_execution, p.token_in AS
              p_token_in, p.token_out AS p_token_out, p.txs AS p_txs, p.summary AS p_summary
     FROM app.trades t LEFT JOIN app.plans p ON p.id = t.plan_id
     WHERE t.tx_hash IS NOT NULL AND NOT t.final AND t.status IN ('pending', 'mined', 'reverted')
       AND (t.status <> 'pending' OR t.created_at >= $1 OR t.checked_at IS NULL)
     ORDER BY t.id LIMIT $2`,
    [since, limit],
  );
  return rows.map((r) => ({
    id: Number(r.id),
    wallet: r.wallet as Address,
    txHash: r.tx_hash as Hex,
    feeTxHash: (r.fee_tx_hash as Hex | null) ?? null,
    status: r.status as WatchedTrade["status"],
    blockNumber: r.block_number === null ? null : Number(r.block_number),
    blockHash: (r.block_hash as Hex | null) ?? null,
    createdAt: Number(r.created_at),
    checkedAt: r.checked_at === null ? null : Number(r.checked_at),
    rawTx: (r.raw_tx as Hex | null) ?? null,
    relay: (r.relay as RelayState | null) ?? null,
    sentAt: r.sent_at === null || r.sent_at === undefined ? null : Number(r.sent_at),
    deadline: r.p_deadline === null || r.p_deadline === undefined ? null : Number(r.p_deadline),
    plan:
      r.p_execution === null || r.p_execution === undefined
        ? null
        : relayedPlanOf(
            r.wallet as Address,
            r.p_execution as string,
            JSON.parse(r.p_token_in as string),
            JSON.parse(r.p_token_out as string),
            JSON.parse(r.p_txs as string),
            JSON.parse(r.p_summary as string),
          ),
  }));
}

/**
 * Records a receipt's outcome (first sight, or the trade's block changed in a reorg), only
 * if the row is still as the watcher read it (`seenHash`: the block hash it had, null when
 * pending), so two watchers on one store cannot undo each other's newer reading.
 */
export async function recordOutcome(
  d: LedgerDeps,
  id: number,
  seenHash: Hex | null,
  o: {
    status: "mined" | "reverted";
    blockNumber: number;
    blockHash: Hex;
    blockTime: number;
    outcome: StoredOutcome | null;
    final: boolean;
    feeUnpaid: boolean;
  },
) {
  await d.db.query(
    `UPDATE app.trades SET status = $3, block_number = $4, block_hash = $5, block_time = $6, outcome = $7, final = $8,
           checked_at = $9, fee_unpaid = $10
     WHERE id = $1 AND status IN ('pending', 'mined', 'reverted') AND block_hash IS NOT DISTINCT FROM $2`,
    [
      id,
      seenHash?.toLowerCase() ?? null,
      o.status,
      o.blockNumber,
      o.blockHash.toLowerCase(),
      o.blockTime,
      o.outcome ? JSON.stringify(o.outcome) : null,
      o.final,
      nowS(d),
      o.feeUnpaid,
    ],
  );
}

/** The receipt is gone (its block was reorged away): pending again. */
export async function backToPending(d: LedgerDeps, id: number, seenHash: Hex) {
  await d.db.query(
    `UPDATE app.trades SET status = 'pending', block_number = NULL, block_hash = NULL, block_time = NULL, outcome =
           NULL, checked_at = $3
     WHERE id = $1 AND block_hash = $2 AND NOT final`,
    [id, seenHash.toLowerCase(), nowS(d)],
  );
}

/** What the watcher recorded for a relayed hash: status, block and outcome (null: not relayed). */
export async function outcomeByHash(
  d: LedgerDeps,
  hash: Hex,
): Promise<{
  status: string;
  blockNumber: number | null;
  blockHash: Hex | null;
  blockTime: number | null;
  final: boolean;
  outcome: StoredOutcome | null;
} | null> {
  const [r] = await d.db.query(
    "SELECT status, block_number, block_hash, block_time, final, outcome FROM app.trades WHERE tx_hash = $1",
    [hash.toLowerCase()],
  );
  if (!r) return null;
  const n = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  return {
    status: r.status as string,
    blockNumber: n(r.block_number),
    blockHash: (r.block_hash as Hex | null) ?? null,
    blockTime: n(r.block_time),
    final: Boolean(r.final),
    outcome: outcomeOf(r.outcome),
  };
}

/** Looked at, nothing new (no receipt yet). */
export async function markChecked(d: LedgerDeps, id: number) {
  await d.db.query("UPDATE app.trades SET checked_at = $2 WHERE id = $1", [id, nowS(d)]);
}

/** The outcome's block is final: no more re-checks. */
export async function markFinal(d: LedgerDeps, id: number, seenHash: Hex) {
  await d.db.query("UPDATE app.trades SET final = true, checked_at = $3 WHERE id = $1 AND block_hash = $2", [
    id,
    seenHash.toLowerCase(),
    nowS(d),
  ]);
}
