/**
 * The relayed trades the prize board reads: rows of app.trades with their plans, and each as a
 * season's mined trade (amounts from the receipt, the plan `league:verify` recomputes them with).
 */
import { getAddress } from "viem";
import { relayedPlanOf, type TokenRef } from "../trading/index.js";
import type { RelayedPlan } from "../../lib/tradeOutcome.js";
import type { Db } from "../ports/store/db.js";
import type { SeasonTrade } from "../../lib/league/valuation.js";
import { lc } from "../../lib/address.js";

/** A relayed trade's row with its plan, as the league reads it (tradeRows). */
export type TradeRow = {
  id: string;
  wallet: string;
  path: string;
  tx_hash: string;
  block_number: string | null;
  block_time: string | null;
  outcome: string | null;
  mined: boolean;
  final: boolean;
  execution: string;
  p_token_in: string;
  p_token_out: string;
  txs: string;
  summary: string;
};

/** Relayed trades (with their plans) matching `where` over `t` (app.trades, `join` for more), by block then id. */
export function tradeRows(db: Db, where: string, params: unknown[], join = ""): Promise<TradeRow[]> {
  return db.query<TradeRow>(
    `SELECT t.id::text AS id, t.wallet, t.path, t.tx_hash, t.block_number::text AS block_number,
       t.block_time::text AS block_time, t.outcome, t.final,
       (t.status = 'mined' AND NOT t.fee_unpaid AND t.outcome IS NOT NULL) AS mined,
       p.execution, p.token_in AS p_token_in, p.token_out AS p_token_out, p.txs, p.summary
     FROM app.trades t JOIN app.plans p ON p.id = t.plan_id ${join}
     WHERE ${where}
     ORDER BY t.block_number, t.id`,
    params,
  );
}

/**
 * A row as a season's mined trade: amounts from the receipt, the plan that verify needs; null when it is not
 * mined in [from, to) or its outcome lacks an amount or a token.
 */
export function minedTradeOf(r: TradeRow, from: number, to: number) {
  if (!r.mined || r.outcome === null || r.block_time === null || r.block_number === null) return null;
  if (Number(r.block_time) < from || Number(r.block_time) >= to) return null;
  const o = JSON.parse(r.outcome) as { amountIn: string | null; amountOut: string | null };
  const tin = JSON.parse(r.p_token_in) as TokenRef;
  const tout = JSON.parse(r.p_token_out) as TokenRef;
  if (!o.amountIn || !o.amountOut || !tin.address || !tout.address || tin.decimals === null || tout.decimals === null)
    return null;
  const trade: SeasonTrade = {
    id: r.id,
    tx_hash: r.tx_hash,
    block: Number(r.block_number),
    ts: Number(r.block_time),
    token_in: { address: lc(tin.address), decimals: tin.decimals },
    amount_in: BigInt(o.amountIn),
    token_out: { address: lc(tout.address), decimals: tout.decimals },
    amount_out: BigInt(o.amountOut),
  };
  // The plan only matters where the trades are published (a decision, the books route): built when first read, so a
  // standings pass does not parse 100,000 plans' JSON it never looks at (issue 29 point 6).
  let plan: RelayedPlan | null | undefined;
  const planOf = () =>
    (plan =
      plan === undefined
        ? relayedPlanOf(getAddress(r.wallet), r.execution, tin, tout, JSON.parse(r.txs), JSON.parse(r.summary))
        : plan);
  return {
    wallet: lc(r.wallet),
    path: r.path,
    get plan(): RelayedPlan | null {
      return planOf();
    },
    trade,
  };
}
export type MinedTrade = NonNullable<ReturnType<typeof minedTradeOf>>;

/**
 * The trades the service relayed for `wallets` and that were mined in [from, to): amounts from the receipt, the
 * plan that verify needs.
 */
export async function minedTrades(db: Db, wallets: string[], from: number, to: number): Promise<MinedTrade[]> {
  if (!wallets.length) return [];
  const rows = await tradeRows(
    db,
    `t.wallet = ANY($1) AND t.status = 'mined' AND NOT t.fee_unpaid
       AND t.block_time >= $2 AND t.block_time < $3 AND t.outcome IS NOT NULL`,
    [wallets.map(lc), from, to],
  );
  return rows.flatMap((r) => minedTradeOf(r, from, to) ?? []);
}
