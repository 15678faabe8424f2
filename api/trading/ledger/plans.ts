import type { Hex } from "viem";
import { type LedgerDeps, fingerprint, type StoredPlan, planFrom, PLAN_COLUMNS, planValues } from "./records.js";

/** The plans built for a key, each transaction findable by its fingerprint (what a signature must carry unchanged). */

/**
 * Stores the plan and its transactions' fingerprints as one statement (one round trip, atomic as a transaction): a
 * prepare's only write. A fingerprint already stored for this plan (the same transaction twice) keeps its first index.
 */
export async function savePlan(d: LedgerDeps, p: Omit<StoredPlan, "id" | "createdAt" | "usedAt">): Promise<number> {
  const [row] = await d.db.query<{ id: string }>(
    `WITH plan AS (
       INSERT INTO app.plans (${PLAN_COLUMNS})
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING id
     ), txs AS (
       INSERT INTO app.plan_txs (fingerprint, plan_id, idx, kind)
       SELECT t.fingerprint, plan.id, t.n - 1, t.kind FROM plan,
         unnest($14::text[], $15::text[]) WITH ORDINALITY AS t(fingerprint, kind, n) ORDER BY t.n
       ON CONFLICT DO NOTHING
     )
     SELECT id::text FROM plan`,
    [...planValues(d, p), p.txs.map((t) => fingerprint(t.tx)), p.txs.map((t) => t.kind)],
  );
  return Number(row!.id);
}

/** The newest plan of this key holding a transaction with this fingerprint. */
export async function planByFingerprint(
  d: LedgerDeps,
  keyId: number,
  fp: Hex,
): Promise<{ plan: StoredPlan; idx: number; kind: string } | null> {
  const rows = await d.db.query(
    `SELECT p.*, t.idx AS tx_idx, t.kind AS tx_kind FROM app.plan_txs t JOIN app.plans p ON p.id = t.plan_id
     WHERE t.fingerprint = $1 AND p.key_id = $2 ORDER BY p.id DESC LIMIT 1`,
    [fp, keyId],
  );
  const r = rows[0];
  return r ? { plan: planFrom(r), idx: Number(r.tx_idx), kind: r.tx_kind as string } : null;
}

/**
 * A session plan holding this transaction, whoever's key built it (the relay checks the key against its wallet and
 * executor).
 */
export async function sessionPlanByFingerprint(
  d: LedgerDeps,
  fp: Hex,
): Promise<{ plan: StoredPlan; idx: number; kind: string } | null> {
  const rows = await d.db.query(
    `SELECT p.*, t.idx AS tx_idx, t.kind AS tx_kind FROM app.plan_txs t JOIN app.plans p ON p.id = t.plan_id
     WHERE t.fingerprint = $1 AND p.kind = 'session' ORDER BY p.id DESC LIMIT 1`,
    [fp],
  );
  const r = rows[0];
  return r ? { plan: planFrom(r), idx: Number(r.tx_idx), kind: r.tx_kind as string } : null;
}

/** This key's newest plans (the candidates a tampered transaction is compared with). */
export async function recentPlans(d: LedgerDeps, keyId: number, limit = 5): Promise<StoredPlan[]> {
  const rows = await d.db.query(`SELECT * FROM app.plans WHERE key_id = $1 ORDER BY id DESC LIMIT $2`, [keyId, limit]);
  return rows.map(planFrom);
}

export async function planById(d: LedgerDeps, id: number): Promise<StoredPlan | null> {
  const [r] = await d.db.query("SELECT * FROM app.plans WHERE id = $1", [id]);
  return r ? planFrom(r) : null;
}
