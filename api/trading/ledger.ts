import { concat, keccak256, numberToHex, pad, toHex, zeroAddress, type Address, type Hex } from "viem";
import type { RelayedOutcome, RelayedPlan } from "../../lib/tradeOutcome.js";
import type { PlanTx } from "./txs.js";
import type { Db } from "../ports/store/db.js";

/** Raised inside claimForRelay's transaction to roll back its plan claim when the hash is already a trade. */
class TradeExists extends Error {}

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

/** An outcome as the app store keeps it (JSON, atoms as strings). */
export type StoredOutcome = { tokenIn: Address; amountIn: string | null; tokenOut: Address; amountOut: string | null; feeToken: Address | null; feeAmount: string | null; eth: string[] };
const str = (v: bigint | null) => (v === null ? null : v.toString());
export const storedOutcome = (o: RelayedOutcome): StoredOutcome => ({ tokenIn: o.tokenIn, amountIn: str(o.amountIn), tokenOut: o.tokenOut, amountOut: str(o.amountOut), feeToken: o.feeToken, feeAmount: str(o.feeAmount), eth: o.eth });
const outcomeOf = (v: unknown): StoredOutcome | null => (typeof v === "string" ? (JSON.parse(v) as StoredOutcome) : null);

/** How far the relay got with a trade's signed bytes (null: relayed before the bytes were kept). */
export type RelayState = "sending" | "sent" | "lost" | "refused";
export type RelayedTrade = { id: number; planId: number | null; keyId: number | null; wallet: Address; status: string; relay: RelayState | null };
export type PendingTrade = { wallet: Address; keyId: number; path: string; tokenIn: TokenRef; tokenOut: TokenRef; amountIn: string; amountOutMin: string; txHash: Hex; feeTxHash?: Hex | null; sessionId?: string | null; rawTx: Hex };

/** A relayed trade the watcher still follows: pending, or an outcome whose block is not final yet. */
export type WatchedTrade = {
  id: number;
  wallet: Address;
  txHash: Hex;
  feeTxHash: Hex | null;
  status: "pending" | "mined" | "reverted";
  blockNumber: number | null;
  blockHash: Hex | null;
  createdAt: number;
  checkedAt: number | null;
  /** The signed bytes (null for trades relayed before they were kept), how far their relay got, when last sent. */
  rawTx: Hex | null;
  relay: RelayState | null;
  sentAt: number | null;
  /** The plan's deadline: past it, sending the bytes again could only revert. */
  deadline: number | null;
  /** What relayedOutcome needs of the stored plan; null for a trade without one. */
  plan: RelayedPlan | null;
};

/** The stored plan as lib/tradeOutcome's input: tokens, the swap's value, the fee as built. */
export function relayedPlanOf(wallet: Address, execution: string, tokenIn: TokenRef, tokenOut: TokenRef, txs: { kind: string; tx: PlanTx }[], summary: Record<string, unknown>): RelayedPlan | null {
  const fee = summary.fee as { bps: number; side: "input" | "output"; recipient: Address; token: Address; amount: string | null } | undefined;
  const swap = txs.find((t) => t.kind === "swap");
  // A plan whose summary does not say its fee amount is not followed as an outcome (never a watcher that throws).
  if (!fee || !swap || !tokenIn.address || !tokenOut.address || typeof fee.amount !== "string" || !/^[0-9]+$/.test(fee.amount)) return null;
  return {
    wallet,
    execution: execution as RelayedPlan["execution"],
    tokenIn: tokenIn.address,
    tokenOut: tokenOut.address,
    // A session's redeem carries no value: the wallet spends the execution's value through itself.
    txValue: BigInt(typeof summary.execution_value === "string" ? summary.execution_value : swap.tx.value),
    fee: { side: fee.side, bps: Number(fee.bps), token: fee.token ?? zeroAddress, recipient: fee.recipient, amount: BigInt(fee.amount) },
  };
}

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
 * transaction) and of what was relayed or refused (trades), with the outcome of each relayed hash
 * as the relay watcher (watcher.ts) read it from its receipt.
 */
export function createLedger(d: { db: Db; clock: () => number }) {
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
    /** A session plan holding this transaction, whoever's key built it (the relay checks the key against its wallet and executor). */
    async sessionPlanByFingerprint(fp: Hex): Promise<{ plan: StoredPlan; idx: number; kind: string } | null> {
      const rows = await d.db.query(
        `SELECT p.*, t.idx AS tx_idx, t.kind AS tx_kind FROM app.plan_txs t JOIN app.plans p ON p.id = t.plan_id
         WHERE t.fingerprint = $1 AND p.kind = 'session' ORDER BY p.id DESC LIMIT 1`,
        [fp],
      );
      const r = rows[0];
      return r ? { plan: planFrom(r), idx: Number(r.tx_idx), kind: r.tx_kind as string } : null;
    },

    async recentPlans(keyId: number, limit = 5): Promise<StoredPlan[]> {
      const rows = await d.db.query(`SELECT * FROM app.plans WHERE key_id = $1 ORDER BY id DESC LIMIT $2`, [keyId, limit]);
      return rows.map(planFrom);
    },

    async planById(id: number): Promise<StoredPlan | null> {
      const [r] = await d.db.query("SELECT * FROM app.plans WHERE id = $1", [id]);
      return r ? planFrom(r) : null;
    },

    async tradeByHash(hash: Hex): Promise<RelayedTrade | null> {
      const [r] = await d.db.query("SELECT id, plan_id, key_id, wallet, status, relay FROM app.trades WHERE tx_hash = $1", [hash.toLowerCase()]);
      return r ? { id: Number(r.id), planId: r.plan_id === null ? null : Number(r.plan_id), keyId: r.key_id === null ? null : Number(r.key_id), wallet: r.wallet as Address, status: r.status as string, relay: (r.relay as RelayState | null) ?? null } : null;
    },

    /**
     * Claims the plan and writes its trade as pending, with the signed bytes and the fee
     * transaction it claims, in one transaction, before the swap is sent: false when the plan, the
     * swap's hash or the fee transaction is taken (a repeat, a race, or a fee that paid for
     * another plan: app.trades' unique fee_tx_hash decides between instances).
     */
    async claimForRelay(planId: number, p: PendingTrade): Promise<boolean> {
      return d.db.tx(async (db) => {
        const claimed = await db.query("UPDATE app.plans SET used_at = $2 WHERE id = $1 AND used_at IS NULL RETURNING id", [planId, now()]);
        if (claimed.length === 0) return false;
        const rows = await db.query(
          `INSERT INTO app.trades (wallet, key_id, plan_id, path, status, token_in, token_out, amount_in, amount_out_min, tx_hash, fee_tx_hash, created_at, raw_tx, relay, sent_at, session_id)
           VALUES ($1, $2, $3, $4, 'pending', $5, $6, $7, $8, $9, $10, $11, $12, 'sending', $11, $13) ON CONFLICT DO NOTHING RETURNING id`,
          [p.wallet.toLowerCase(), p.keyId, planId, p.path, JSON.stringify(p.tokenIn), JSON.stringify(p.tokenOut), p.amountIn, p.amountOutMin, p.txHash.toLowerCase(), p.feeTxHash?.toLowerCase() ?? null, now(), p.rawTx, p.sessionId ?? null],
        );
        if (rows.length === 0) throw new TradeExists();
        return true;
      }).catch((err) => {
        // The same signed bytes relayed under another plan with the same transaction (two identical plans): a repeat; or the fee is another trade's.
        if (err instanceof TradeExists) return false;
        throw err;
      });
    },

    /** The trade (pending or not) that claimed this fee transaction, or null. */
    async feeClaimedBy(feeTxHash: Hex): Promise<{ id: number; planId: number | null } | null> {
      const [r] = await d.db.query("SELECT id, plan_id FROM app.trades WHERE fee_tx_hash = $1", [feeTxHash.toLowerCase()]);
      return r ? { id: Number(r.id), planId: r.plan_id === null ? null : Number(r.plan_id) } : null;
    },

    /**
     * A trade the client built (fast mode): its plan and its pending trade in one transaction,
     * keyed by the signed bytes' hash. false when these bytes are already a trade (another call
     * holds them); nothing of this call is then kept.
     */
    async recordClientBuilt(p: Omit<StoredPlan, "id" | "createdAt" | "usedAt">, t: PendingTrade): Promise<{ planId: number } | false> {
      return d.db
        .tx(async (db) => {
          const [plan] = await db.query<{ id: string }>(
            `INSERT INTO app.plans (key_id, wallet, kind, execution, token_in, token_out, amount_in, amount_out_min, fee_bps, deadline, txs, summary, created_at, used_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13) RETURNING id::text`,
            [p.keyId, p.wallet.toLowerCase(), p.kind, p.execution, JSON.stringify(p.tokenIn), JSON.stringify(p.tokenOut), p.amountIn, p.amountOutMin, p.feeBps, p.deadline, JSON.stringify(p.txs), JSON.stringify(p.summary), now()],
          );
          const rows = await db.query(
            `INSERT INTO app.trades (wallet, key_id, plan_id, path, status, token_in, token_out, amount_in, amount_out_min, tx_hash, fee_tx_hash, created_at, raw_tx, relay, sent_at)
             VALUES ($1, $2, $3, $4, 'pending', $5, $6, $7, $8, $9, NULL, $10, $11, 'sending', $10) ON CONFLICT (tx_hash) DO NOTHING RETURNING id`,
            [t.wallet.toLowerCase(), t.keyId, plan!.id, t.path, JSON.stringify(t.tokenIn), JSON.stringify(t.tokenOut), t.amountIn, t.amountOutMin, t.txHash.toLowerCase(), now(), t.rawTx],
          );
          if (rows.length === 0) throw new TradeExists();
          return { planId: Number(plan!.id) };
        })
        .catch((err) => {
          if (err instanceof TradeExists) return false as const;
          throw err;
        });
    },

    /** What the sequencer said of a send: sent (it took it), lost (no answer), refused (it will not). */
    async markRelay(hash: Hex, relay: Exclude<RelayState, "sending">) {
      await d.db.query("UPDATE app.trades SET relay = $2, sends = sends + 1 WHERE tx_hash = $1 AND status = 'pending'", [hash.toLowerCase(), relay]);
    },

    /** Nothing of the trade reached the chain (refused, or a step before it failed): unclaim its plan, forget the row. */
    async forgetRelay(hash: Hex, planId: number) {
      await d.db.tx(async (db) => {
        await db.query("DELETE FROM app.trades WHERE tx_hash = $1 AND status = 'pending'", [hash.toLowerCase()]);
        await db.query("UPDATE app.plans SET used_at = NULL WHERE id = $1", [planId]);
      });
    },

    /**
     * Claims the right to send a pending trade's bytes again: its last send's answer was lost, or
     * a send began before `staleBefore` and never finished (crash), or `ifSentBefore` (the node
     * forgot a sent transaction). One caller wins; the bytes come back to it. Never past the plan's
     * deadline, whichever path asks (submit, fast, the watcher): then the bytes could only revert.
     */
    async claimResend(hash: Hex, o: { staleBefore: number; ifSentBefore?: number }): Promise<Hex | null> {
      const rows = await d.db.query<{ raw_tx: Hex }>(
        `UPDATE app.trades SET relay = 'sending', sent_at = $2 WHERE tx_hash = $1 AND status = 'pending' AND raw_tx IS NOT NULL
           AND (relay = 'lost' OR (relay = 'sending' AND sent_at < $3) OR (relay = 'sent' AND sent_at < $4))
           AND NOT EXISTS (SELECT 1 FROM app.plans p WHERE p.id = app.trades.plan_id AND p.deadline < $2)
         RETURNING raw_tx`,
        [hash.toLowerCase(), now(), o.staleBefore, o.ifSentBefore ?? -1],
      );
      return rows[0]?.raw_tx ?? null;
    },

    /**
     * The fee of every relayed trade mined with from <= block time < to (unix s), as the relay
     * watcher read it from the receipt: the treasury's ledger side. `feeTxHash` is a two_step
     * curve plan's own fee transaction; a trade whose fee never landed (fee_unpaid) books nothing.
     */
    async feesMinedBetween(from: number, to: number): Promise<{ txHash: Hex; feeTxHash: Hex | null; token: Address; amount: bigint }[]> {
      const rows = await d.db.query<{ tx_hash: Hex; fee_tx_hash: Hex | null; outcome: string | null }>(
        "SELECT tx_hash, fee_tx_hash, outcome FROM app.trades WHERE status = 'mined' AND NOT fee_unpaid AND block_time >= $1 AND block_time < $2 ORDER BY id",
        [from, to],
      );
      return rows.flatMap((r) => {
        const o = outcomeOf(r.outcome);
        return o?.feeToken && o.feeAmount && BigInt(o.feeAmount) > 0n ? [{ txHash: r.tx_hash, feeTxHash: r.fee_tx_hash, token: o.feeToken, amount: BigInt(o.feeAmount) }] : [];
      });
    },

    /** Unix time of the first relayed trade mined, or null. */
    async firstMinedAt(): Promise<number | null> {
      const [r] = await d.db.query<{ t: string | null }>("SELECT min(block_time)::text AS t FROM app.trades WHERE status = 'mined'");
      return r?.t ? Number(r.t) : null;
    },

    /** Trades relayed before `before` that may still be mined (pending, younger than the drop window): their fees are not known yet. */
    async unsettledBefore(before: number): Promise<number> {
      const [r] = await d.db.query<{ n: string }>("SELECT count(*)::text AS n FROM app.trades WHERE status = 'pending' AND tx_hash IS NOT NULL AND created_at < $1 AND created_at >= $2", [before, now() - DROP_AFTER_S]);
      return Number(r?.n ?? 0);
    },

    /** Outcomes of the wallet's relayed trades mined since `since` (unix s), those whose fee landed: the volume tier's input. */
    async minedSince(wallet: Address, since: number): Promise<StoredOutcome[]> {
      const rows = await d.db.query("SELECT outcome FROM app.trades WHERE wallet = $1 AND status = 'mined' AND NOT fee_unpaid AND created_at >= $2", [wallet.toLowerCase(), since]);
      return rows.map((r) => outcomeOf(r.outcome)).filter((o): o is StoredOutcome => o !== null);
    },

    /**
     * The relayed trades to look at: pending ones relayed since `since` (or never looked at, e.g.
     * relayed before the watcher existed), and outcomes not final yet. Oldest first.
     */
    async watchList(since: number, limit = 500): Promise<WatchedTrade[]> {
      const rows = await d.db.query(
        `SELECT t.id, t.wallet, t.tx_hash, t.fee_tx_hash, t.status, t.block_number, t.block_hash, t.created_at, t.checked_at,
                t.raw_tx, t.relay, t.sent_at, p.deadline AS p_deadline, p.execution AS p_execution, p.token_in AS p_token_in, p.token_out AS p_token_out, p.txs AS p_txs, p.summary AS p_summary
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
            : relayedPlanOf(r.wallet as Address, r.p_execution as string, JSON.parse(r.p_token_in as string), JSON.parse(r.p_token_out as string), JSON.parse(r.p_txs as string), JSON.parse(r.p_summary as string)),
      }));
    },

    /**
     * Records a receipt's outcome (first sight, or the trade's block changed in a reorg), only
     * if the row is still as the watcher read it (`seenHash`: the block hash it had, null when
     * pending), so two watchers on one store cannot undo each other's newer reading.
     */
    async recordOutcome(id: number, seenHash: Hex | null, o: { status: "mined" | "reverted"; blockNumber: number; blockHash: Hex; blockTime: number; outcome: StoredOutcome | null; final: boolean; feeUnpaid: boolean }) {
      await d.db.query(
        `UPDATE app.trades SET status = $3, block_number = $4, block_hash = $5, block_time = $6, outcome = $7, final = $8, checked_at = $9, fee_unpaid = $10
         WHERE id = $1 AND status IN ('pending', 'mined', 'reverted') AND block_hash IS NOT DISTINCT FROM $2`,
        [id, seenHash?.toLowerCase() ?? null, o.status, o.blockNumber, o.blockHash.toLowerCase(), o.blockTime, o.outcome ? JSON.stringify(o.outcome) : null, o.final, now(), o.feeUnpaid],
      );
    },

    /** The receipt is gone (its block was reorged away): pending again. */
    async backToPending(id: number, seenHash: Hex) {
      await d.db.query(
        `UPDATE app.trades SET status = 'pending', block_number = NULL, block_hash = NULL, block_time = NULL, outcome = NULL, checked_at = $3
         WHERE id = $1 AND block_hash = $2 AND NOT final`,
        [id, seenHash.toLowerCase(), now()],
      );
    },

    /** What the watcher recorded for a relayed hash: status, block and outcome (null: not relayed). */
    async outcomeByHash(hash: Hex): Promise<{ status: string; blockNumber: number | null; blockHash: Hex | null; blockTime: number | null; final: boolean; outcome: StoredOutcome | null } | null> {
      const [r] = await d.db.query("SELECT status, block_number, block_hash, block_time, final, outcome FROM app.trades WHERE tx_hash = $1", [hash.toLowerCase()]);
      if (!r) return null;
      const n = (v: unknown) => (v === null || v === undefined ? null : Number(v));
      return { status: r.status as string, blockNumber: n(r.block_number), blockHash: (r.block_hash as Hex | null) ?? null, blockTime: n(r.block_time), final: Boolean(r.final), outcome: outcomeOf(r.outcome) };
    },

    /** Looked at, nothing new (no receipt yet). */
    async markChecked(id: number) {
      await d.db.query("UPDATE app.trades SET checked_at = $2 WHERE id = $1", [id, now()]);
    },

    /** The outcome's block is final: no more re-checks. */
    async markFinal(id: number, seenHash: Hex) {
      await d.db.query("UPDATE app.trades SET final = true, checked_at = $3 WHERE id = $1 AND block_hash = $2", [id, seenHash.toLowerCase(), now()]);
    },

    /** A call never relayed, kept with its code (me/trades?refused=1). */
    async recordRefused(p: { wallet: Address; keyId: number; path: string; code: string; tokenIn: TokenRef | null; tokenOut: TokenRef | null; amountIn: string | null; sessionId?: string | null }) {
      await d.db.query(
        `INSERT INTO app.trades (wallet, key_id, path, status, token_in, token_out, amount_in, code, created_at, session_id) VALUES ($1, $2, $3, 'refused', $4, $5, $6, $7, $8, $9)`,
        [p.wallet.toLowerCase(), p.keyId, p.path, p.tokenIn ? JSON.stringify(p.tokenIn) : null, p.tokenOut ? JSON.stringify(p.tokenOut) : null, p.amountIn, p.code, now(), p.sessionId ?? null],
      );
    },

    /** SPEC.md GET me/trades: newest first; dropped and refused rows only with `refused`. */
    async list(wallet: Address, p: { limit: number; before: number | null; refused: boolean }) {
      // Refused rows are filtered in SQL; dropped ones are pending rows past the hour (service clock).
      const where = `wallet = $1${p.refused ? "" : " AND status <> 'refused'"}`;
      const rows: Record<string, unknown>[] = [];
      let cursor = p.before;
      // Page until `limit` visible rows (dropped rows hidden without refused=1 can thin a page).
      for (let round = 0; round < 5 && rows.length <= p.limit; round++) {
        const batch =
          cursor === null
            ? await d.db.query(`SELECT * FROM app.trades WHERE ${where} ORDER BY id DESC LIMIT $2`, [wallet.toLowerCase(), p.limit + 1])
            : await d.db.query(`SELECT * FROM app.trades WHERE ${where} AND id < $3 ORDER BY id DESC LIMIT $2`, [wallet.toLowerCase(), p.limit + 1, cursor]);
        if (batch.length === 0) break;
        for (const r of batch) {
          const status = r.status === "pending" && now() - Number(r.created_at) > DROP_AFTER_S ? "dropped" : (r.status as string);
          if (status === "dropped" && !p.refused) continue;
          rows.push({ ...r, status });
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

    /**
     * The distinct tokens of the wallet's relayed trades (either side), newest first, leaving out
     * `except` (the core assets): me/portfolio's address-named tokens. Refused calls traded nothing.
     */
    async tradedTokens(wallet: Address, except: Address[], limit: number): Promise<Address[]> {
      const skip = except.map((_, i) => `$${i + 3}`).join(", ");
      const rows = await d.db.query<{ address: string }>(
        `SELECT address FROM (
           SELECT lower(side::json->>'address') AS address, max(id) AS last FROM (
             SELECT id, token_in AS side FROM app.trades WHERE wallet = $1 AND status <> 'refused'
             UNION ALL SELECT id, token_out FROM app.trades WHERE wallet = $1 AND status <> 'refused'
           ) sides WHERE side IS NOT NULL GROUP BY 1
         ) traded WHERE address IS NOT NULL${skip ? ` AND address NOT IN (${skip})` : ""} ORDER BY last DESC LIMIT $2`,
        [wallet.toLowerCase(), limit, ...except.map((a) => a.toLowerCase())],
      );
      return rows.map((r) => r.address as Address);
    },
  };
}

function tradeRecord(r: Record<string, unknown>) {
  const o = outcomeOf(r.outcome);
  const tokenOut = r.token_out ? (JSON.parse(r.token_out as string) as TokenRef) : null;
  let amountOut: string | null = (r.amount_out_min as string | null) ?? null;
  let kind: "actual" | "minimum" | null = amountOut === null ? null : "minimum";
  if (r.status === "mined" || r.status === "reverted") {
    // Actual: what of the output token reached the wallet (ETH: the last Swap or the curve's payment).
    const got = o?.tokenOut && tokenOut?.address && o.tokenOut.toLowerCase() === tokenOut.address.toLowerCase() ? o.amountOut : null;
    amountOut = r.status === "mined" && got !== null ? got : null;
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
    block: (r.status === "mined" || r.status === "reverted") && r.block_number !== null && r.block_number !== undefined ? Number(r.block_number) : null,
    session_id: (r.session_id as string | null) ?? null,
    ...(r.status === "refused" ? { code: r.code } : {}),
  };
}

export type Ledger = ReturnType<typeof createLedger>;
