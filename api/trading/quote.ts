import type { AggregatorRow } from "../ports/aggregators.js";
import { costVsMid, evaluate, markView, type Evaluation, type TradingContext } from "./evaluate.js";
import type { TradeParameters } from "./request.js";
import { CURVE_VENUE } from "./routing.js";
import type { Who } from "./sides.js";
import { round2 } from "./timing.js";

/** An aggregator's row in the same terms as ours: against the best route's mid (its output carries no fee of ours). */
function compareRow(e: Evaluation, row: AggregatorRow) {
  if (!row.ok || !row.amount_out || !e.best.midAtoms) return row;
  const out = Number(row.amount_out);
  const gas = typeof row.gas === "number" ? row.gas : null;
  const { gasUsd, totalBps } = costVsMid({
    amountOut: out,
    gas,
    amountIn: e.amountIn,
    midAtoms: e.best.midAtoms,
    gasPrice: e.gasPrice,
    ethUsd: e.ethUsd,
    markOut: e.markOut,
    outDecimals: e.tout.decimals,
  });
  return {
    ...row,
    vs_mid_bps: Math.round((out / (Number(e.amountIn) * e.best.midAtoms) - 1) * 10_000),
    gas_usd: gasUsd,
    total_bps: totalBps,
  };
}

/** live/quote: read-only; discloses every route and the policy's verdict, never refuses for risk. */
export async function quoteTrade(ctx: TradingContext, r: TradeParameters, who: Who) {
  const e = await evaluate(ctx, r, "quote", who, null);
  const mid = e.best.midAtoms !== null ? e.best.midAtoms * 10 ** (e.tin.decimals - e.tout.decimals) : null;
  const ours = e.rows
    .map((x) => x.row)
    .sort((a, b) => (a.ok === b.ok ? (a.total_bps ?? 1e9) - (b.total_bps ?? 1e9) : a.ok ? -1 : 1));
  return {
    token_in: ctx.sides.ref(e.tin),
    token_out: ctx.sides.ref(e.tout),
    amount_in: e.amountIn.toString(),
    notional_usd: round2(e.notional),
    slippage_bps: e.slippage,
    best: e.best.row,
    routes: [...ours, ...e.aggRows.map((row) => compareRow(e, row))],
    candidates: e.rows.length + e.aggRows.length,
    fast: r.fast ? { used_recent_winner: e.fastHit } : undefined,
    mid:
      mid === null
        ? null
        : {
            price: mid,
            route: e.best.row.id,
            source: e.best.quote.route.venue === CURVE_VENUE ? ("curve" as const) : ("pool-mid" as const),
          },
    marks: { token_in: markView(e.markIn), token_out: markView(e.markOut), ETH: markView(e.markEth) },
    gas_price_wei: e.gasPrice.toString(),
    eth_usd: e.ethUsd,
    policy: {
      ok: e.policy.ok,
      code: e.policy.code,
      message: e.policy.message,
      checks: e.policy.checks,
      unaccepted: e.policy.unaccepted,
    },
    policy_ok: e.policy.ok,
    timings: e.timings,
    risks: e.risks,
    ...e.fees,
  };
}
