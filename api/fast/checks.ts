import { zeroAddress, type Address } from "viem";
import { bpsOf } from "../../lib/fees.js";
import type { FastPair } from "../../lib/fastRoutes.js";
import type { Code } from "../errors/index.js";
import type { Mark } from "../market/index.js";
import type { PlanSimulation } from "../ports/simulation.js";
import { LIMITS, slippageCapBps } from "../trading/index.js";
import type { FastTx } from "./decode.js";
import type { FastParameters } from "./request.js";

/** SPEC "Limits" (fast mode). */
export const FAST_LIMITS = {
  deadlineS: 60,
  maxGas: 1_000_000,
  maxFeeMultiple: 10,
  maxCostWei: 200_000_000_000_000n,
  amountUsdToleranceBps: 300,
} as const;

/** The rules after decoding, in SPEC's order ("Errors: Fast mode"); the first failing one is answered. */
export const FAST_RULES = [
  "TX_ENCODING",
  "FAST_PAIR",
  "MARKET_CLOSED",
  "PRICE_STALE",
  "TX_TYPE",
  "CHAIN_ID",
  "ROUTER",
  "VALUE",
  "WALLET_MISMATCH",
  "NOTIONAL",
  "ROUTE_CAP",
  "DEADLINE",
  "GAS",
  "FEE_BPS",
  "MIN_OUT",
  "AMOUNT_USD",
  "CLIENT_CAP",
  "PERMIT",
  "NOT_AS_BUILT",
  "GEOFENCE",
  "STOCK_PAUSED",
  "WALLET_BLOCKED",
  "SIMULATION_FAILED",
  "POOL_FAR",
  "ROUTE_VS_MID",
  "NO_REFERENCE_MID",
  "FAST_FUNDS",
] as const satisfies readonly Code[];
export type FastRule = (typeof FAST_RULES)[number];
export type FastFailure = { rule: FastRule; message: string; terms?: Record<string, unknown> };

/** Everything the rules judge, read before they run (the chain, marks, the rebuilt calldata, the simulation). */
export type FastFacts = {
  now: number;
  chainId: number;
  router: Address;
  wallet: Address;
  tx: FastTx;
  req: FastParameters;
  pair: FastPair;
  amountIn: bigint;
  minOut: bigint;
  marks: { in: Mark | null; out: Mark | null };
  decimals: { in: number; out: number };
  stockInvolved: boolean;
  stockOpen: boolean;
  fee: { bps: number; tier: number };
  /** The fee the signed calldata pays (bps), as the router reading finds it; null: none or not a fee of bps. */
  calldataFeeBps: number | null;
  baseFee: bigint;
  /** NOT_AS_BUILT: the rebuilt call's differences from the signed one, in SPEC's diff names. */
  diffs: { field: string; built: string | null; signed: string | null }[];
  permitProblem: string | null;
  stock: { paused: boolean; walletBlocked: boolean } | null;
  simulation: PlanSimulation | null;
  /** The route's pool mid: output atoms per input atom; null: unreadable. */
  midOutPerIn: number | null;
  /** With simulate false: whether the wallet holds and has allowed what it spends; null when simulated. */
  funded: boolean | null;
};

const usdOf = (atoms: bigint, decimals: number, mark: Mark) => (Number(atoms) / 10 ** decimals) * mark.usd;
const poolFeeBps = (p: FastPair) => p.hops.reduce((s, h) => s + h.fee / 100, 0);

/**
 * The least min_out the service accepts: under the oracle value by at most cap + pool fee + band,
 * under the simulated delivery by at most the cap.
 */
export function minOutFloor(f: FastFacts) {
  const cap = slippageCapBps(f.marks.in ? usdOf(f.amountIn, f.decimals.in, f.marks.in) : LIMITS.maxNotionalUsd);
  const allowed = cap + poolFeeBps(f.pair) + f.pair.band_bps;
  let oracle: bigint | null = null;
  if (f.marks.in && f.marks.out) {
    const afterFee = f.pair.fee_side === "input" ? f.amountIn - bpsOf(f.amountIn, f.fee.bps) : f.amountIn;
    const outUsd =
      usdOf(afterFee, f.decimals.in, f.marks.in) * (f.pair.fee_side === "output" ? 1 - f.fee.bps / 10_000 : 1);
    const outAtoms = BigInt(Math.floor((outUsd / f.marks.out.usd) * 10 ** f.decimals.out));
    oracle = bpsOf(outAtoms, 10_000 - Math.min(allowed, 10_000));
  }
  const delivered = f.simulation?.ok && f.simulation.amount_out ? BigInt(f.simulation.amount_out) : null;
  const bySimulation = delivered === null ? null : bpsOf(delivered, 10_000 - cap);
  const floor = [oracle, bySimulation].reduce<bigint | null>(
    (m, x) => (x === null ? m : m === null || x > m ? x : m),
    null,
  );
  return { floor, oracle, bySimulation, cap_bps: cap, pool_fee_bps: poolFeeBps(f.pair), band_bps: f.pair.band_bps };
}

/** What the rules on the transaction and the key alone judge: they run with or without a pinned route. */
export type TxFacts = Pick<FastFacts, "now" | "chainId" | "router" | "wallet" | "tx" | "req">;
type Fail = (rule: FastRule, message: string, terms?: Record<string, unknown>) => void;
const inSpecOrder = (out: FastFailure[]) => out.sort((a, b) => FAST_RULES.indexOf(a.rule) - FAST_RULES.indexOf(b.rule));
const collector = () => {
  const out: FastFailure[] = [];
  const fail: Fail = (rule, message, terms) => void out.push({ rule, message, ...(terms ? { terms } : {}) });
  return { out, fail };
};

/**
 * Every rule that can be judged, each failing one listed (SPEC: "`failures` lists all"), in SPEC's
 * order: the first is the one answered. A rule with several causes names them all in its message.
 * Skipped only where there is nothing to judge: BAD_REQUEST (body, raw_tx or its signer
 * unreadable) is answered alone before any rule; without a pinned route (FAST_PAIR, see
 * unroutedFailures) the rules judged against the route are; without an input mark (PRICE_STALE)
 * NOTIONAL, ROUTE_CAP, AMOUNT_USD and CLIENT_CAP are; POOL_FAR needs a delivery (a simulation that ran).
 */
export function fastFailures(f: FastFacts): FastFailure[] {
  const { out, fail } = collector();
  txRules(f, fail);
  routedRules(f, fail);
  return inSpecOrder(out);
}

/** FAST_PAIR with the rules that need no route (TX_ENCODING, TX_TYPE, CHAIN_ID, ROUTER, WALLET_MISMATCH, DEADLINE). */
export function unroutedFailures(f: TxFacts, pairProblem: string): FastFailure[] {
  const { out, fail } = collector();
  fail("FAST_PAIR", pairProblem);
  txRules(f, fail);
  return inSpecOrder(out);
}

function txRules(f: TxFacts, fail: Fail) {
  const { tx, req } = f;
  if (tx.encoding.length) fail("TX_ENCODING", `raw_tx: ${tx.encoding.join("; ")}`);
  if (tx.type !== "eip1559") fail("TX_TYPE", `a ${tx.type} transaction: fast mode takes EIP-1559 (type 2) only`);
  if (tx.chainId !== f.chainId) fail("CHAIN_ID", `signed for chain ${tx.chainId}, not ${f.chainId}`);
  if (!tx.to || tx.to.toLowerCase() !== f.router.toLowerCase())
    fail("ROUTER", `sent to ${tx.to ?? "no address"}, not the pinned router ${f.router}`);
  if (tx.from.toLowerCase() !== f.wallet.toLowerCase())
    fail("WALLET_MISMATCH", `signed by ${tx.from}, not by this key's wallet`);
  if (req.deadline <= f.now || req.deadline > f.now + FAST_LIMITS.deadlineS)
    fail(
      "DEADLINE",
      `deadline ${req.deadline} must be after now (${f.now}) and at most ${FAST_LIMITS.deadlineS} s away`,
    );
}

/** The rules judged against the pinned route, the marks, the rebuilt calldata and the simulation, in SPEC's order. */
function routedRules(f: FastFacts, fail: Fail) {
  const usdIn = marketRules(f, fail);
  costRules(f, fail);
  boundRules(f, usdIn, fail);
  outcomeRules(f, usdIn, fail);
}

/** The market open, fresh oracle marks, the value sent, the size: the trade's worth in USD (null without a mark). */
function marketRules(f: FastFacts, fail: Fail): number | null {
  const { tx, pair } = f;
  const ethIn = pair.address_in === zeroAddress;
  if (f.stockInvolved && !f.stockOpen)
    fail("MARKET_CLOSED", "stock tokens trade from Sunday 20:00 to Friday 20:00 New York time");
  // Oracle (or USDG's fixed dollar) only: a pool mid is what a fast trade could itself be moving.
  const independent = (m: Mark | null) => !!m && !m.stale && (m.source === "oracle" || m.source === "fixed");
  if (!independent(f.marks.in) || !independent(f.marks.out))
    fail("PRICE_STALE", "an oracle mark of the pair is missing or stale; retry when the feed posts", {
      marks: { token_in: f.marks.in, token_out: f.marks.out },
    });
  const value = ethIn ? f.amountIn : 0n;
  if (tx.value !== value) fail("VALUE", `the transaction sends ${tx.value} wei; this trade sends ${value}`);

  const usdIn = f.marks.in ? usdOf(f.amountIn, f.decimals.in, f.marks.in) : null;
  if (usdIn !== null) {
    if (usdIn < LIMITS.minNotionalUsd || usdIn > LIMITS.maxNotionalUsd)
      fail(
        "NOTIONAL",
        `the trade is $${usdIn.toFixed(2)}: fast trades are $${LIMITS.minNotionalUsd} to $${LIMITS.maxNotionalUsd}`,
      );
    if (usdIn > pair.max_usd)
      fail("ROUTE_CAP", `the trade is $${usdIn.toFixed(2)}, over this route's $${pair.max_usd}`);
  }
  return usdIn;
}

/** GAS and FEE_BPS: the transaction's gas within the terms, the fee this wallet's. */
function costRules(f: FastFacts, fail: Fail) {
  const { req, pair } = f;
  const gasTerms = {
    base_fee_wei: f.baseFee.toString(),
    gas_floor: req.permit ? pair.gas_floor_permit : pair.gas_floor,
    max_gas: FAST_LIMITS.maxGas,
    max_fee_multiple: FAST_LIMITS.maxFeeMultiple,
    max_cost_wei: FAST_LIMITS.maxCostWei.toString(),
  };
  const gasProblems = gasProblemsOf(f, gasTerms.gas_floor);
  if (gasProblems.length) fail("GAS", gasProblems.join("; "), gasTerms);

  const how = pair.fee_side === "input" ? "an input-side TRANSFER of exactly the bps" : "an output-side PAY_PORTION";
  const feeTerms = { fee: { bps: f.fee.bps, tier: f.fee.tier, shield: req.shield, side: pair.fee_side } };
  const feeProblems = [
    ...(req.fee_bps !== f.fee.bps ? [`fee_bps ${req.fee_bps} is not this wallet's fee: ${f.fee.bps} bps`] : []),
    ...(f.calldataFeeBps !== f.fee.bps
      ? [`the calldata pays ${f.calldataFeeBps ?? "no single"} bps, not this wallet's ${f.fee.bps} bps (${how})`]
      : []),
  ];
  if (feeProblems.length) fail("FEE_BPS", feeProblems.join("; "), feeTerms);
}

/** MIN_OUT, the client's own bounds, the permit and the calldata as rebuilt. */
function boundRules(f: FastFacts, usdIn: number | null, fail: Fail) {
  const { req } = f;
  const floor = minOutFloor(f);
  if (floor.floor !== null && f.minOut < floor.floor) {
    fail("MIN_OUT", `min_out ${f.minOut} is under the least ${floor.floor} this service relays`, {
      floor: floor.floor.toString(),
      by_oracle: floor.oracle?.toString() ?? null,
      by_simulation: floor.bySimulation?.toString() ?? null,
      cap_bps: floor.cap_bps,
      pool_fee_bps: floor.pool_fee_bps,
      band_bps: floor.band_bps,
    });
  }
  if (
    req.amount_usd !== undefined &&
    usdIn !== null &&
    Math.abs(usdIn - req.amount_usd) > (req.amount_usd * FAST_LIMITS.amountUsdToleranceBps) / 10_000
  ) {
    fail(
      "AMOUNT_USD",
      `amount_in is worth $${usdIn.toFixed(2)} at the oracle marks, more than 3% from amount_usd $${req.amount_usd}`,
    );
  }
  if (req.max_notional_usd !== undefined && usdIn !== null && usdIn > req.max_notional_usd)
    fail("CLIENT_CAP", `amount_in is worth $${usdIn.toFixed(2)}, over your max_notional_usd $${req.max_notional_usd}`);
  if (f.permitProblem) fail("PERMIT", f.permitProblem);
  if (f.diffs.length)
    fail(
      "NOT_AS_BUILT",
      `the calldata is not the pinned route's as rebuilt: ${f.diffs.map((d) => d.field).join(", ")}`,
      { diffs: f.diffs },
    );
}

/** The stock token's switches, the simulation, the delivery against the marks and the pool mid, the funds. */
function outcomeRules(f: FastFacts, usdIn: number | null, fail: Fail) {
  const { req, pair } = f;
  if (f.stockInvolved) {
    if (!req.owner_attests_non_us)
      fail("GEOFENCE", "a stock token: set owner_attests_non_us true to attest the owner is not a US person");
    if (f.stock?.paused) fail("STOCK_PAUSED", "the issuer has paused this stock token");
    if (f.stock?.walletBlocked) fail("WALLET_BLOCKED", "the stock token registry blocks this wallet");
  }
  const sim = f.simulation;
  if (sim && !sim.ok)
    fail("SIMULATION_FAILED", `the signed transaction fails in simulation: ${sim.error ?? "reverted"}`);
  const delivered = sim?.ok && sim.amount_out ? BigInt(sim.amount_out) : null;
  if (delivered !== null && usdIn !== null && f.marks.out) {
    const worth = usdOf(delivered, f.decimals.out, f.marks.out);
    const under = Math.round((1 - worth / (usdIn * (1 - f.fee.bps / 10_000))) * 10_000);
    const allowed = poolFeeBps(pair) + pair.band_bps;
    if (under > allowed)
      fail("POOL_FAR", `the pinned pools deliver ${under} bps under the oracle marks (at most ${allowed})`);
  }
  if (f.stockInvolved) {
    const afterFee = pair.fee_side === "input" ? f.amountIn - bpsOf(f.amountIn, f.fee.bps) : f.amountIn;
    if (f.midOutPerIn === null) fail("NO_REFERENCE_MID", "the reference pool mid is unreadable; retry shortly");
    else {
      const judged = delivered ?? f.minOut;
      const vsMid = Math.round(
        (Number(judged) /
          (Number(afterFee) * f.midOutPerIn * (pair.fee_side === "output" ? 1 - f.fee.bps / 10_000 : 1)) -
          1) *
          10_000,
      );
      if (vsMid < -LIMITS.maxVsMidBps)
        fail(
          "ROUTE_VS_MID",
          `${delivered !== null ? "the delivery" : "min_out"} is ${-vsMid} bps under the pool mid ` +
            `(at most ${LIMITS.maxVsMidBps})`,
        );
    }
  }
  if (f.funded === false)
    fail("FAST_FUNDS", "the wallet does not hold, or has not allowed through Permit2, what this trade spends");
}

/**
 * GAS, every cause: a limit within the route's floor and the cap, fees within the base fee's 1x-10x, a
 * tip within the fee cap, a bounded worst cost.
 */
function gasProblemsOf(f: FastFacts, floor: number): string[] {
  const { tx } = f;
  const out: string[] = [];
  if (tx.gas < BigInt(floor) || tx.gas > BigInt(FAST_LIMITS.maxGas))
    out.push(`gas limit ${tx.gas} must be from ${floor} to ${FAST_LIMITS.maxGas}`);
  const maxFee = tx.maxFeePerGas ?? 0n;
  if (maxFee < f.baseFee || maxFee > f.baseFee * BigInt(FAST_LIMITS.maxFeeMultiple))
    out.push(`maxFeePerGas ${maxFee} must be from the base fee ${f.baseFee} to ${FAST_LIMITS.maxFeeMultiple} times it`);
  if ((tx.maxPriorityFeePerGas ?? 0n) > maxFee) out.push("maxPriorityFeePerGas is over maxFeePerGas");
  if (tx.gas * maxFee > FAST_LIMITS.maxCostWei)
    out.push(`the transaction may cost ${tx.gas * maxFee} wei, over ${FAST_LIMITS.maxCostWei}`);
  return out;
}
