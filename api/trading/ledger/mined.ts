import type { Address, Hex } from "viem";
import { type LedgerDeps, nowS, DROP_AFTER_S, type StoredOutcome, outcomeOf } from "./records.js";

/** What was mined, as the relay watcher read it: the treasury's fees and the volume tier's outcomes. */

/**
 * The fee of every relayed trade mined with from <= block time < to (unix s), as the relay
 * watcher read it from the receipt: the treasury's ledger side. `feeTxHash` is a two_step
 * curve plan's own fee transaction; a trade whose fee never landed (fee_unpaid) books nothing.
 */
export async function feesMinedBetween(
  d: LedgerDeps,
  from: number,
  to: number,
): Promise<{ txHash: Hex; feeTxHash: Hex | null; token: Address; amount: bigint }[]> {
  const rows = await d.db.query<{ tx_hash: Hex; fee_tx_hash: Hex | null; outcome: string | null }>(
    "SELECT tx_hash, fee_tx_hash, outcome FROM app.trades WHERE status = 'mined' AND NOT fee_unpaid AND block_time " +
      ">= $1 AND block_time < $2 ORDER BY id",
    [from, to],
  );
  return rows.flatMap((r) => {
    const o = outcomeOf(r.outcome);
    return o?.feeToken && o.feeAmount && BigInt(o.feeAmount) > 0n
      ? [{ txHash: r.tx_hash, feeTxHash: r.fee_tx_hash, token: o.feeToken, amount: BigInt(o.feeAmount) }]
      : [];
  });
}

/** Unix time of the first relayed trade mined, or null. */
export async function firstMinedAt(d: LedgerDeps): Promise<number | null> {
  const [r] = await d.db.query<{ t: string | null }>(
    "SELECT min(block_time)::text AS t FROM app.trades WHERE status = 'mined'",
  );
  return r?.t ? Number(r.t) : null;
}

/**
 * Trades relayed before `before` that may still be mined (pending, younger than the drop window): their fees are not
 * known yet.
 */
export async function unsettledBefore(d: LedgerDeps, before: number): Promise<number> {
  const [r] = await d.db.query<{ n: string }>(
    "SELECT count(*)::text AS n FROM app.trades WHERE status = 'pending' AND tx_hash IS NOT NULL AND created_at < $1 " +
      "AND created_at >= $2",
    [before, nowS(d) - DROP_AFTER_S],
  );
  return Number(r?.n ?? 0);
}

/**
 * Outcomes of the wallet's relayed trades mined since `since` (unix s), those whose fee landed: the volume tier's
 * input.
 */
export async function minedSince(d: LedgerDeps, wallet: Address, since: number): Promise<StoredOutcome[]> {
  const rows = await d.db.query(
    "SELECT outcome FROM app.trades WHERE wallet = $1 AND status = 'mined' AND NOT fee_unpaid AND created_at >= $2",
    [wallet.toLowerCase(), since],
  );
  return rows.map((r) => outcomeOf(r.outcome)).filter((o): o is StoredOutcome => o !== null);
}
