import { getAddress, zeroAddress, type Address } from "viem";
import { Refusal, rpc } from "../errors/index.js";
import { balanceIn } from "../ports/chainSnapshot.js";
import {
  balanceOverride,
  findBalanceSlot,
  simulatePlan,
  type Override,
  type PlanSimulation,
} from "../ports/simulation.js";
import { buildPlan } from "./build.js";
import { evaluate, type Evaluation, type TradingContext } from "./evaluate.js";
import type { TradeParameters, TradeRequest } from "./request.js";
import { CURVE_VENUE } from "./routing.js";
import type { Who } from "./sides.js";
import type { Step } from "./txs.js";
import { msSince } from "./timing.js";
import { lc } from "../../lib/address.js";

/** The wallet live/simulate uses when none is given: funded by overrides, never signable. */
export const SYNTHETIC_WALLET = "0x00000000000000000000000000000000005139a7" as Address;

/** Extra ETH lent for gas-free value checks: enough for the router's value and any wrap. */
const ETH_CUSHION = 10n ** 17n;

/** The request's wallet, which must be the key's (403 WALLET_MISMATCH otherwise). */
export function walletOf(r: TradeRequest, who: Who): Address {
  if (!r.wallet) throw new Refusal("BAD_REQUEST", "wallet is required");
  if (lc(r.wallet) !== lc(who.key.wallet)) throw new Refusal("WALLET_MISMATCH", "this key is bound to another wallet");
  return getAddress(r.wallet);
}

/** State overrides that lend the input when asked (fund true, or auto and the wallet lacks it). */
async function lendingOverrides(
  ctx: TradingContext,
  e: Evaluation,
  steps: Step[],
  wallet: Address,
  fund: "auto" | boolean,
): Promise<Override[]> {
  const w = e.snap.wallet;
  const have = w ? balanceIn(w, e.tin.address) : 0n;
  if (!(fund === true || (fund === "auto" && have < e.amountIn))) return [];
  const eth = w?.eth ?? 0n;
  const txValue = steps.reduce((s, x) => s + BigInt(x.tx?.value ?? "0"), 0n);
  if (e.tin.address === zeroAddress) return [{ address: wallet, balance: eth + e.amountIn + txValue + ETH_CUSHION }];
  const slot = await rpc(findBalanceSlot(ctx.chain, e.tin.address));
  if (slot === null)
    throw new Refusal(
      "DRY_RUN_UNFUNDABLE",
      `${e.tin.symbol || e.tin.address} keeps balances where overrides cannot fake them; ` +
        "simulate with fund false from a wallet that holds it, or trade small",
    );
  const overrides: Override[] = [];
  const lent = balanceOverride(e.tin.address, wallet, slot, have + e.amountIn);
  // Lent WETH must be backed by ETH in WETH9, or the router's unwrap fails.
  overrides.push(lc(e.tin.address) === lc(ctx.config.tokens.WETH!.address) ? { ...lent, balance: 10n ** 30n } : lent);
  if (eth < txValue + 10n ** 16n) overrides.push({ address: wallet, balance: eth + txValue + ETH_CUSHION });
  return overrides;
}

/** Simulates a plan's transactions in order from `wallet`, lending the input as `fund` says. */
export async function simulateSteps(
  ctx: TradingContext,
  e: Evaluation,
  steps: Step[],
  wallet: Address,
  fund: "auto" | boolean,
): Promise<PlanSimulation> {
  const c = ctx.config.contracts;
  return rpc(
    simulatePlan({
      chain: ctx.chain,
      multicall3: c.multicall3,
      wallet,
      txs: steps.filter((s) => s.tx).map((s) => ({ to: s.tx!.to, data: s.tx!.data, value: BigInt(s.tx!.value) })),
      tokenOut: e.tout.address,
      feeToken: e.best.quote.route.venue === CURVE_VENUE ? zeroAddress : e.feeToken.address,
      feeRecipient: ctx.config.feeRecipient,
      overrides: await lendingOverrides(ctx, e, steps, wallet, fund),
    }),
  );
}

/**
 * live/simulate: with a wallet, that wallet's plan (fund false: its real balances); without, a
 * synthetic funded wallet that discloses only. mode `first` adds the approvals a fresh wallet needs.
 */
export async function simulateTrade(ctx: TradingContext, r: TradeParameters, who: Who) {
  const synthetic = !r.wallet;
  const wallet = synthetic ? SYNTHETIC_WALLET : walletOf(r, who);
  const e = await evaluate(ctx, r, "simulate", who, wallet, synthetic);
  if (!synthetic && e.policy.refusal) throw e.policy.refusal;
  const built = await buildPlan(ctx, e, r, wallet, { fresh: synthetic || r.mode === "first", simulation: true });
  const txSteps = built.steps.filter((s) => s.tx !== null);
  const t = performance.now();
  const sim = await simulateSteps(ctx, e, txSteps, wallet, synthetic ? true : r.fund);
  const gasUsd = e.ethUsd !== null ? ((sim.gas_total * Number(e.gasPrice)) / 1e18) * e.ethUsd : null;
  return {
    ok: sim.ok,
    error: sim.error,
    block: { number: Number(e.snap.block), timestamp: e.snap.time },
    transactions: txSteps.map((s, i) => ({ kind: s.kind, to: s.tx!.to, value: s.tx!.value, gas: sim.gas[i] ?? null })),
    amount_out: sim.amount_out,
    amount_out_min: built.minOut.toString(),
    fee_paid: sim.fee_transfer?.amount ?? null,
    fee_transfer: sim.fee_transfer,
    gas_total: sim.gas_total,
    gas_usd: gasUsd === null ? null : Math.round(gasUsd * 1e6) / 1e6,
    funded_by_overrides: sim.funded_by_overrides,
    synthetic,
    mode: r.mode,
    build: {
      route: e.best.row,
      amount_in: e.amountIn.toString(),
      amount_out_expected: e.expectedOut.toString(),
      deadline: built.deadline,
      steps: built.steps.map((s) => ({ kind: s.kind, tx: s.tx })),
    },
    policy: { ok: e.policy.ok, code: e.policy.code, message: e.policy.message, checks: e.policy.checks },
    risks: e.risks,
    ...e.fees,
    timings: { ...e.timings, simulate_ms: msSince(t) },
  };
}
