import { concat, keccak256, numberToHex, pad, toHex, type Address, type Hex } from "viem";
import type { SqlIndexedReads, TradeRow } from "./indexed.js";
import type { PlanTx } from "./plans.js";
import type { Db } from "./store/db.js";

/** A relayed trade with no receipt after this long is dropped (SPEC.md "Trade record status"). */
export const DROP_AFTER_S = 3_600;

/** Identity of a built transaction: the fields a signature must carry unchanged. */
export const fingerprint = (t: Pick<PlanTx, "to" | "data" | "value" | "chain_id">): Hex =>
  keccak256(concat([t.to.toLowerCase() as Hex, t.data, pad(numberToHex(BigInt(t.value))), pad(toHex(t.chain_id))]));

/** A trade's side; a refused call whose token never resolved has nulls beyond what it named. */
export type TokenRef = { token: string; address: Address | null; symbol: string | null; name: string | null; decimals: number | null };
export type StoredPlan = {
  id: number;
  keyId: number;
  wallet: Address;
  kind: string;
  execution: "router" | "curve" | "batch";
  tokenIn: TokenRef;
  tokenOut: TokenRef;
  amountIn: string;
  amountOutMin: string;
  feeBps: number;
  deadline: number;
  txs: { kind: string; tx: PlanTx }[];
  summary: Record<string, unknown>;
  createdAt: number;
  usedAt: number | null;
};

function planFrom(r: Record<string, unknown>): StoredPlan {
  return {
    id: Number(r.id),
    keyId: Number(r.key_id),
    wallet: r.wallet as Address,
    kind: r.kind as string,
    execution: r.execution as StoredPlan["execution"],
    tokenIn: JSON.parse(r.token_in as string),
    tokenOut: JSON.parse(r.token_out as string),
    amountIn: r.amount_in as string,
    amountOutMin: r.amount_out_min as string,
    feeBps: Number(r.fee_bps),
    deadline: Number(r.deadline),
    txs: JSON.parse(r.txs as string),
    summary: JSON.parse(r.summary as string),
    createdAt: Number(r.created_at),
    usedAt: r.used_at === null || r.used_at === undefined ? null : Number(r.used_at),
  };
}

/**
 * The app store's record of what was built for which key (plans, with a fingerprint per
 * transaction) and of what was relayed or refused (trades). me/trades reads it joined with the
 * indexer's outcome of each relayed hash.
 */
export function createLedger(d: { db: Db; indexed: SqlIndexedReads; clock: () => number }) {
  const now = () => Math.floor(d.clock() / 1000);
  return {
    async savePlan(p: Omit<StoredPlan, "id" | "createdAt" | "usedAt">): Promise<number> {
      return d.db.tx(async (db) => {
        const [row] = await db.query<{ id: string }>(
          `INSERT INTO app.plans (key_id, wallet, kind, execution, token_in, token_out, amount_in, amount_out_min, fee_bps, deadline, txs, summary, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING id::text`,
          [p.keyId, p.wallet.toLowerCase(), p.kind, p.execution, JSON.stringify(p.tokenIn), JSON.stringify(p.tokenOut), p.amountIn, p.amountOutMin, p.feeBps, p.deadline, JSON.stringify(p.txs), JSON.stringify(p.summary), now()],
        );
        const id = Number(row!.id);
        for (const [i, t] of p.txs.entries()) {
          await db.query("INSERT INTO app.plan_txs (fingerprint, plan_id, idx, kind) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING", [fingerprint(t.tx), id, i, t.kind]);
        }
        return id;
      });
    },

    /** The newest plan of this key holding a transaction with this fingerprint. */
    async planByFingerprint(keyId: number, fp: Hex): Promise<{ plan: StoredPlan; idx: number; kind: string } | null> {
      const rows = await d.db.query(
        `SELECT p.*, t.idx AS tx_idx, t.kind AS tx_kind FROM app.plan_txs t JOIN app.plans p ON p.id = t.plan_id
         WHERE t.fingerprint = $1 AND p.key_id = $2 ORDER BY p.id DESC LIMIT 1`,
        [fp, keyId],
      );
      const r = rows[0];
      return r ? { plan: planFrom(r), idx: Number(r.tx_idx), kind: r.tx_kind as string } : null;
    },

    /** This key's newest plans (the candidates a tampered transaction is compared with). */
    async recentPlans(keyId: number, limit = 5): Promise<StoredPlan[]> {
      const rows = await d.db.query(`SELECT * FROM app.plans WHERE key_id = $1 ORDER BY id DESC LIMIT $2`, [keyId, limit]);
      return rows.map(planFrom);
    },

    /** Claims a plan for one relay; false when another submit already used it. */
    async claimPlan(id: number): Promise<boolean> {
      const rows = await d.db.query("UPDATE app.plans SET used_at = $2 WHERE id = $1 AND used_at IS NULL RETURNING id", [id, now()]);
      return rows.length === 1;
    },

    async releasePlan(id: number) {
      await d.db.query("UPDATE app.plans SET used_at = NULL WHERE id = $1", [id]);
    },

    async tradeByHash(hash: Hex): Promise<{ id: number; planId: number | null; keyId: number | null } | null> {
      const [r] = await d.db.query("SELECT id, plan_id, key_id FROM app.trades WHERE tx_hash = $1", [hash.toLowerCase()]);
      return r ? { id: Number(r.id), planId: r.plan_id === null ? null : Number(r.plan_id), keyId: r.key_id === null ? null : Number(r.key_id) } : null;
    },

    async recordPending(p: { wallet: Address; keyId: number; planId: number; path: string; tokenIn: TokenRef; tokenOut: TokenRef; amountIn: string; amountOutMin: string; txHash: Hex; feeTxHash?: Hex | null }) {
      await d.db.query(
        `INSERT INTO app.trades (wallet, key_id, plan_id, path, status, token_in, token_out, amount_in, amount_out_min, tx_hash, fee_tx_hash, created_at)
         VALUES ($1, $2, $3, $4, 'pending', $5, $6, $7, $8, $9, $10, $11) ON CONFLICT (tx_hash) DO NOTHING`,
        [p.wallet.toLowerCase(), p.keyId, p.planId, p.path, JSON.stringify(p.tokenIn), JSON.stringify(p.tokenOut), p.amountIn, p.amountOutMin, p.txHash.toLowerCase(), p.feeTxHash?.toLowerCase() ?? null, now()],
      );
    },

    /** A call never relayed, kept with its code (me/trades?refused=1). */
    async recordRefused(p: { wallet: Address; keyId: number; path: string; code: string; tokenIn: TokenRef | null; tokenOut: TokenRef | null; amountIn: string | null }) {
      await d.db.query(
        `INSERT INTO app.trades (wallet, key_id, path, status, token_in, token_out, amount_in, code, created_at) VALUES ($1, $2, $3, 'refused', $4, $5, $6, $7, $8)`,
        [p.wallet.toLowerCase(), p.keyId, p.path, p.tokenIn ? JSON.stringify(p.tokenIn) : null, p.tokenOut ? JSON.stringify(p.tokenOut) : null, p.amountIn, p.code, now()],
      );
    },

    /** SPEC.md GET me/trades: newest first; dropped and refused rows only with `refused`. */
    async list(wallet: Address, p: { limit: number; before: number | null; refused: boolean }) {
      // Refused rows are filtered in SQL; dropped ones are known only once the indexer is asked.
      const where = `wallet = $1${p.refused ? "" : " AND status <> 'refused'"}`;
      const rows: Record<string, unknown>[] = [];
      let cursor = p.before;
      let outcomes = new Map<string, TradeRow>();
      // Page until `limit` visible rows (dropped rows hidden without refused=1 can thin a page).
      for (let round = 0; round < 5 && rows.length <= p.limit; round++) {
        const batch =
          cursor === null
            ? await d.db.query(`SELECT * FROM app.trades WHERE ${where} ORDER BY id DESC LIMIT $2`, [wallet.toLowerCase(), p.limit + 1])
            : await d.db.query(`SELECT * FROM app.trades WHERE ${where} AND id < $3 ORDER BY id DESC LIMIT $2`, [wallet.toLowerCase(), p.limit + 1, cursor]);
        if (batch.length === 0) break;
        const hashes = batch.map((r) => r.tx_hash as Hex | null).filter((h): h is Hex => !!h);
        const found = await d.indexed.tradesByHashes(hashes);
        outcomes = new Map([...outcomes, ...found.map((t) => [t.txHash.toLowerCase(), t] as const)]);
        for (const r of batch) {
          const o = r.tx_hash ? outcomes.get(String(r.tx_hash)) : undefined;
          const status = r.status === "refused" ? "refused" : o ? (o.status === "success" ? "mined" : "reverted") : now() - Number(r.created_at) > DROP_AFTER_S ? "dropped" : "pending";
          if (status === "dropped" && !p.refused) continue;
          rows.push({ ...r, status, outcome: o ?? null });
        }
        cursor = Number(batch[batch.length - 1]!.id);
        if (batch.length <= p.limit) break;
      }
      const page = rows.slice(0, p.limit);
      const more = rows.length > p.limit;
      return {
        trades: page.map((r) => tradeRecord(r)),
        next_before: more ? Number(page[page.length - 1]!.id) : null,
      };
    },
  };
}

function tradeRecord(r: Record<string, unknown>) {
  const o = r.outcome as TradeRow | null;
  const tokenOut = r.token_out ? (JSON.parse(r.token_out as string) as TokenRef) : null;
  let amountOut: string | null = (r.amount_out_min as string | null) ?? null;
  let kind: "actual" | "minimum" | null = amountOut === null ? null : "minimum";
  if (r.status === "mined" || r.status === "reverted") {
    // Actual: what of the output token reached the wallet (ETH: the unwrap or curve payment).
    const got = o?.tokenOut && tokenOut?.address && o.tokenOut.toLowerCase() === tokenOut.address.toLowerCase() ? o.amountOut : null;
    amountOut = r.status === "mined" && got !== null ? got.toString() : null;
    kind = amountOut === null ? null : "actual";
  }
  return {
    id: Number(r.id),
    time: Number(r.created_at),
    path: r.path,
    status: r.status,
    token_in: r.token_in ? JSON.parse(r.token_in as string) : null,
    token_out: tokenOut,
    amount_in: (r.amount_in as string | null) ?? null,
    amount_out: amountOut,
    amount_out_kind: kind,
    amount_out_min: (r.amount_out_min as string | null) ?? null,
    tx_hash: (r.tx_hash as string | null) ?? null,
    block: o ? o.block : null,
    session_id: (r.session_id as string | null) ?? null,
    ...(r.status === "refused" ? { code: r.code } : {}),
  };
}

export type Ledger = ReturnType<typeof createLedger>;
