import type { Address } from "viem";
import { type LedgerDeps, nowS, DROP_AFTER_S, type TokenRef, outcomeOf } from "./records.js";

/** The wallet's trade records as GET me/trades and me/portfolio read them, refused calls included. */

/** A call never relayed, kept with its code (me/trades?refused=1). */
export async function recordRefused(
  d: LedgerDeps,
  p: {
    wallet: Address;
    keyId: number;
    path: string;
    code: string;
    tokenIn: TokenRef | null;
    tokenOut: TokenRef | null;
    amountIn: string | null;
    sessionId?: string | null;
  },
) {
  await d.db.query(
    `INSERT INTO app.trades (wallet, key_id, path, status, token_in, token_out, amount_in, code, created_at, ` +
      `session_id) VALUES ($1, $2, $3, 'refused', $4, $5, $6, $7, $8, $9)`,
    [
      p.wallet.toLowerCase(),
      p.keyId,
      p.path,
      p.tokenIn ? JSON.stringify(p.tokenIn) : null,
      p.tokenOut ? JSON.stringify(p.tokenOut) : null,
      p.amountIn,
      p.code,
      nowS(d),
      p.sessionId ?? null,
    ],
  );
}

/** SPEC.md GET me/trades: newest first; dropped and refused rows only with `refused`. */
export async function listTrades(
  d: LedgerDeps,
  wallet: Address,
  p: { limit: number; before: number | null; refused: boolean },
) {
  // Refused rows are filtered in SQL; dropped ones are pending rows past the hour (service clock).
  const where = `wallet = $1${p.refused ? "" : " AND status <> 'refused'"}`;
  const rows: Record<string, unknown>[] = [];
  let cursor = p.before;
  // Page until `limit` visible rows (dropped rows hidden without refused=1 can thin a page).
  for (let round = 0; round < 5 && rows.length <= p.limit; round++) {
    const batch =
      cursor === null
        ? await d.db.query(`SELECT * FROM app.trades WHERE ${where} ORDER BY id DESC LIMIT $2`, [
            wallet.toLowerCase(),
            p.limit + 1,
          ])
        : await d.db.query(`SELECT * FROM app.trades WHERE ${where} AND id < $3 ORDER BY id DESC LIMIT $2`, [
            wallet.toLowerCase(),
            p.limit + 1,
            cursor,
          ]);
    if (batch.length === 0) break;
    for (const r of batch) {
      const status =
        r.status === "pending" && nowS(d) - Number(r.created_at) > DROP_AFTER_S ? "dropped" : (r.status as string);
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
}

/**
 * The distinct tokens of the wallet's relayed trades (either side), newest first, leaving out
 * `except` (the core assets): me/portfolio's address-named tokens. Refused calls traded nothing.
 */
export async function tradedTokens(
  d: LedgerDeps,
  wallet: Address,
  except: Address[],
  limit: number,
): Promise<Address[]> {
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
}

/**
 * The wallet's relayed trades with these transaction hashes, oldest first, as GET me/trades answers
 * them (a pending one past the drop window is `dropped`): a hosted agent's live_stats reads its own.
 */
export async function tradesByHash(d: LedgerDeps, wallet: Address, hashes: string[]): Promise<TradeRecord[]> {
  if (!hashes.length) return [];
  const rows = await d.db.query(
    "SELECT * FROM app.trades WHERE wallet = $1 AND tx_hash = ANY($2::text[]) ORDER BY id",
    [wallet.toLowerCase(), hashes.map((h) => h.toLowerCase())],
  );
  return rows.map((r) =>
    tradeRecord(
      r.status === "pending" && nowS(d) - Number(r.created_at) > DROP_AFTER_S ? { ...r, status: "dropped" } : r,
    ),
  );
}

/** One trade as GET me/trades answers it. */
export type TradeRecord = ReturnType<typeof tradeRecord>;

/** A trades row as GET me/trades answers it: the output amount actual once mined, else the minimum. */
function tradeRecord(r: Record<string, unknown>) {
  const o = outcomeOf(r.outcome);
  const tokenOut = r.token_out ? (JSON.parse(r.token_out as string) as TokenRef) : null;
  let amountOut: string | null = (r.amount_out_min as string | null) ?? null;
  let kind: "actual" | "minimum" | null = amountOut === null ? null : "minimum";
  if (r.status === "mined" || r.status === "reverted") {
    // Actual: what of the output token reached the wallet (ETH: the last Swap or the curve's payment).
    const got =
      o?.tokenOut && tokenOut?.address && o.tokenOut.toLowerCase() === tokenOut.address.toLowerCase()
        ? o.amountOut
        : null;
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
    block:
      (r.status === "mined" || r.status === "reverted") && r.block_number !== null && r.block_number !== undefined
        ? Number(r.block_number)
        : null,
    session_id: (r.session_id as string | null) ?? null,
    ...(r.status === "refused" ? { code: r.code } : {}),
  };
}
