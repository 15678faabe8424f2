import { zeroAddress } from "viem";
import { Refusal } from "../errors/index.js";
import { balanceIn } from "../ports/chainSnapshot.js";
import type { PlanSimulation } from "../ports/simulation.js";
import { buildPlan } from "./build.js";
import { evaluate, type Evaluation, type TradingContext } from "./evaluate.js";
import type { Ledger } from "./ledger.js";
import type { TradeParameters } from "./request.js";
import { simulateSteps, walletOf } from "./simulate.js";
import type { Who } from "./sides.js";
import { msSince, round2 } from "./timing.js";

/** What the plan answer tells about the wallet, as the chain snapshot read it. */
function walletState(e: Evaluation) {
  const w = e.snap.wallet!;
  const rp = w.routerPermit;
  return {
    wallet: w.address,
    eth: (w.eth ?? 0n).toString(),
    token_in: balanceIn(w, e.tin.address).toString(),
    token_out: balanceIn(w, e.tout.address).toString(),
    permit2_allowance: e.tin.address === zeroAddress ? null : (w.allowanceToPermit2?.toString() ?? null),
    router_permit: rp ? { amount: rp[0].toString(), expiration: Number(rp[1]), nonce: Number(rp[2]) } : null,
    delegated: !!w.delegation,
  };
}

/**
 * Simulates a prepared plan: SIMULATION_FAILED when it does not go through, QUOTE_SIM_MISMATCH
 * when it delivers more than 1 bp under the quote.
 */
async function checkedSimulation(
  ctx: TradingContext,
  e: Evaluation,
  steps: Parameters<typeof simulateSteps>[2],
  fund: "auto" | boolean,
) {
  const simulation: PlanSimulation & { block_time: number } = {
    ...(await simulateSteps(ctx, e, steps, e.snap.wallet!.address, fund)),
    block_time: e.snap.time,
  };
  if (!simulation.ok)
    throw new Refusal("SIMULATION_FAILED", `the plan does not go through: ${simulation.error}`, { simulation });
  if (simulation.amount_out !== null && BigInt(simulation.amount_out) < e.expectedOut - e.expectedOut / 10_000n) {
    throw new Refusal(
      "QUOTE_SIM_MISMATCH",
      `the simulation delivers ${simulation.amount_out}, less than the quoted ${e.expectedOut}; ask for a fresh plan`,
      { simulation, quoted: e.expectedOut.toString() },
    );
  }
  return simulation;
}

/** live/build and live/prepare: the plan of SPEC.md "Plan", stored for the relay to compare against. */
export async function planTrade(
  ctx: TradingContext & { ledger: Ledger },
  r: TradeParameters,
  who: Who,
  kind: "build" | "prepare",
) {
  const wallet = walletOf(r, who);
  const e = await evaluate(ctx, r, kind, who, wallet);
  if (e.policy.refusal) throw e.policy.refusal;
  const t3 = performance.now();
  const built = await buildPlan(ctx, e, r, wallet, { fresh: false, simulation: false });
  const ready = built.steps.every((s) => s.tx !== null);
  const timings: Record<string, number> = { ...e.timings, build_ms: msSince(t3) };

  let simulation: Awaited<ReturnType<typeof checkedSimulation>> | null = null;
  if (kind === "prepare" && ready) {
    const t4 = performance.now();
    simulation = await checkedSimulation(ctx, e, built.steps, r.fund);
    timings.simulate_ms = msSince(t4);
  }

  const txs = built.steps.filter((s) => s.tx).map((s) => ({ kind: s.kind, tx: s.tx! }));
  const tokens = { token_in: ctx.sides.ref(e.tin), token_out: ctx.sides.ref(e.tout) };
  const planId = txs.length
    ? await ctx.ledger.savePlan({
        keyId: who.key.keyId,
        wallet,
        kind,
        execution: built.execution,
        tokenIn: tokens.token_in,
        tokenOut: tokens.token_out,
        amountIn: e.amountIn.toString(),
        amountOutMin: built.minOut.toString(),
        feeBps: e.fee.bps,
        deadline: built.deadline,
        txs,
        summary: { route: e.best.row.id, fee: built.fee, built_block: Number(e.snap.block) },
      })
    : null;
  return {
    ready,
    tx: built.swapTx && ready ? built.swapTx : null,
    steps: built.steps,
    execution: built.execution,
    route: e.best.row,
    quote: {
      amount_out: e.best.row.amount_out,
      vs_mid_bps: e.best.row.vs_mid_bps,
      gas: e.best.row.gas,
      gas_usd: e.best.row.gas_usd,
    },
    amount_in: e.amountIn.toString(),
    notional_usd: round2(e.notional),
    amount_out_min: built.minOut.toString(),
    amount_out_expected: e.expectedOut.toString(),
    deadline: built.deadline,
    fee: built.fee,
    ...(kind === "prepare" ? { simulation } : {}),
    checks: e.policy.checks,
    policy_ok: true,
    permit: built.permit,
    permit_now: built.permitNow,
    approval: built.approval,
    wallet_state: walletState(e),
    tokens,
    risks: e.risks,
    accepted_risks: e.policy.accepted,
    ...e.fees,
    timings,
    plan_id: planId,
  };
}
