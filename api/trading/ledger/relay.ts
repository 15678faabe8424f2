import type { Address, Hex } from "viem";
import {
  type LedgerDeps,
  nowS,
  type StoredPlan,
  type RelayState,
  type RelayedTrade,
  type PendingTrade,
  PLAN_COLUMNS,
  planValues,
} from "./records.js";

/**
 * A relayed trade's life before its receipt: the plan claimed with its pending trade, each send's answer, a resend
 * claimed by one caller.
 */

/** Raised inside claimForRelay's transaction to roll back its plan claim when the hash is already a trade. */
class TradeExists extends Error {}

export async function tradeByHash(d: LedgerDeps, hash: Hex): Promise<RelayedTrade | null> {
  const [r] = await d.db.query("SELECT id, plan_id, key_id, wallet, status, relay FROM app.trades WHERE tx_hash = $1", [
    hash.toLowerCase(),
  ]);
  return r
    ? {
        id: Number(r.id),
        planId: r.plan_id === null ? null : Number(r.plan_id),
        keyId: r.key_id === null ? null : Number(r.key_id),
        wallet: r.wallet as Address,
        status: r.status as string,
        relay: (r.relay as RelayState | null) ?? null,
      }
    : null;
}

/**
 * Claims the plan and writes its trade as pending, with the signed bytes and the fee
 * transaction it claims, in one transaction, before the swap is sent: false when the plan, the
 * swap's hash or the fee transaction is taken (a repeat, a race, or a fee that paid for
 * another plan: app.trades' unique fee_tx_hash decides between instances).
 */
export async function claimForRelay(d: LedgerDeps, planId: number, p: PendingTrade): Promise<boolean> {
  return d.db
    .tx(async (db) => {
      const claimed = await db.query(
        "UPDATE app.plans SET used_at = $2 WHERE id = $1 AND used_at IS NULL RETURNING id",
        [planId, nowS(d)],
      );
      if (claimed.length === 0) return false;
      const rows = await db.query(
        `INSERT INTO app.trades (wallet, key_id, plan_id, path, status, token_in, token_out, amount_in,
               amount_out_min, tx_hash, fee_tx_hash, created_at, raw_tx, relay, sent_at, session_id)
       VALUES ($1, $2, $3, $4, 'pending', $5, $6, $7, $8, $9, $10, $11, $12, 'sending', $11, $13) ON CONFLICT DO
         NOTHING RETURNING id`,
        [
          p.wallet.toLowerCase(),
          p.keyId,
          planId,
          p.path,
          JSON.stringify(p.tokenIn),
          JSON.stringify(p.tokenOut),
          p.amountIn,
          p.amountOutMin,
          p.txHash.toLowerCase(),
          p.feeTxHash?.toLowerCase() ?? null,
          nowS(d),
          p.rawTx,
          p.sessionId ?? null,
        ],
      );
      if (rows.length === 0) throw new TradeExists();
      return true;
    })
    .catch((err) => {
      // The same signed bytes relayed under another plan with the same transaction (two identical plans): a repeat; or
      // the fee is another trade's.
      if (err instanceof TradeExists) return false;
      throw err;
    });
}

/** The trade (pending or not) that claimed this fee transaction, or null. */
export async function feeClaimedBy(
  d: LedgerDeps,
  feeTxHash: Hex,
): Promise<{ id: number; planId: number | null } | null> {
  const [r] = await d.db.query("SELECT id, plan_id FROM app.trades WHERE fee_tx_hash = $1", [feeTxHash.toLowerCase()]);
  return r ? { id: Number(r.id), planId: r.plan_id === null ? null : Number(r.plan_id) } : null;
}

/**
 * A trade the client built (fast mode): its plan and its pending trade, keyed by the signed bytes' hash, in one
 * statement (one round trip, atomic as a transaction). The trade goes first, under the plan id it draws; the plan
 * is written only when the trade was: false when these bytes are already a trade (another call holds them), and
 * nothing of this call is then kept.
 */
export async function recordClientBuilt(
  d: LedgerDeps,
  p: Omit<StoredPlan, "id" | "createdAt" | "usedAt">,
  t: PendingTrade,
): Promise<{ planId: number } | false> {
  const rows = await d.db.query<{ plan_id: string }>(
    `WITH drawn AS (
       SELECT nextval(pg_get_serial_sequence('app.plans', 'id')) AS id
     ), trade AS (
       INSERT INTO app.trades (wallet, key_id, plan_id, path, status, token_in, token_out, amount_in,
             amount_out_min, tx_hash, fee_tx_hash, created_at, raw_tx, relay, sent_at)
       SELECT $14, $15, drawn.id, $16, 'pending', $17, $18, $19, $20, $21, NULL, $13, $22, 'sending', $13 FROM drawn
       ON CONFLICT (tx_hash) DO NOTHING RETURNING plan_id
     ), plan AS (
       INSERT INTO app.plans (id, ${PLAN_COLUMNS}, used_at)
       SELECT trade.plan_id, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13 FROM trade
     )
     SELECT plan_id::text FROM trade`,
    [
      ...planValues(d, p),
      t.wallet.toLowerCase(),
      t.keyId,
      t.path,
      JSON.stringify(t.tokenIn),
      JSON.stringify(t.tokenOut),
      t.amountIn,
      t.amountOutMin,
      t.txHash.toLowerCase(),
      t.rawTx,
    ],
  );
  return rows[0] ? { planId: Number(rows[0].plan_id) } : false;
}

/** What the sequencer said of a send: sent (it took it), lost (no answer), refused (it will not). */
export async function markRelay(d: LedgerDeps, hash: Hex, relay: Exclude<RelayState, "sending">) {
  await d.db.query("UPDATE app.trades SET relay = $2, sends = sends + 1 WHERE tx_hash = $1 AND status = 'pending'", [
    hash.toLowerCase(),
    relay,
  ]);
}

/** Nothing of the trade reached the chain (refused, or a step before it failed): unclaim its plan, forget the row. */
export async function forgetRelay(d: LedgerDeps, hash: Hex, planId: number) {
  await d.db.tx(async (db) => {
    await db.query("DELETE FROM app.trades WHERE tx_hash = $1 AND status = 'pending'", [hash.toLowerCase()]);
    await db.query("UPDATE app.plans SET used_at = NULL WHERE id = $1", [planId]);
  });
}

/**
 * Claims the right to send a pending trade's bytes again: its last send's answer was lost, or
 * a send began before `staleBefore` and never finished (crash), or `ifSentBefore` (the node
 * forgot a sent transaction). One caller wins; the bytes come back to it. Never past the plan's
 * deadline, whichever path asks (submit, fast, the watcher): then the bytes could only revert.
 */
export async function claimResend(
  d: LedgerDeps,
  hash: Hex,
  o: { staleBefore: number; ifSentBefore?: number },
): Promise<Hex | null> {
  const rows = await d.db.query<{ raw_tx: Hex }>(
    `UPDATE app.trades SET relay = 'sending', sent_at = $2 WHERE tx_hash = $1 AND status = 'pending' AND raw_tx IS NOT
           NULL
       AND (relay = 'lost' OR (relay = 'sending' AND sent_at < $3) OR (relay = 'sent' AND sent_at < $4))
       AND NOT EXISTS (SELECT 1 FROM app.plans p WHERE p.id = app.trades.plan_id AND p.deadline < $2)
     RETURNING raw_tx`,
    [hash.toLowerCase(), nowS(d), o.staleBefore, o.ifSentBefore ?? -1],
  );
  return rows[0]?.raw_tx ?? null;
}
