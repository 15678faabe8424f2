import { getAddress, zeroAddress, type Address, type Hex } from "viem";
import { z } from "zod";
import { bpsOf } from "../../lib/fees.js";
import {
  curveGroupOf,
  curveGroupSizes,
  delegationHash,
  leafIsOnce,
  redeemCalldata,
  walletBatch,
  withGroup,
  withRootGroup,
  type Delegation,
  type Execution,
} from "../../lib/delegation.js";
import { bindingHash, EXPIRY_MARGIN_S } from "../../lib/sessionBinding.js";
import { Refusal, rpc } from "../errors/index.js";
import type { CosignAnswer } from "../ports/cosigner.js";
import { simulatePlan } from "../ports/simulation.js";
import {
  buildRouterSwap,
  LIMITS,
  type CurveRoute,
  msSince,
  parseTradeRequest,
  round2,
  type Evaluation,
  type PlanTx,
  type TradeRequest,
  type Who,
} from "../trading/index.js";
import type { SessionDeps } from "./deps.js";
import type { StoredSession } from "./store.js";
import { lc } from "../../lib/address.js";

/** Gas of redeemDelegations around the router call: two delegations, their signatures and eleven enforcer hooks. */
const REDEEM_GAS = 260_000;

export const sessionTradeRequest = z
  .object({
    session_id: z.string().min(1).max(64),
    token_in: z.string(),
    token_out: z.string(),
    notional_usd: z.unknown().optional(),
    amount_in: z.unknown().optional(),
    slippage_bps: z.unknown().optional(),
    min_amount_out: z.unknown().optional(),
    route_id: z.unknown().optional(),
    owner_attests_non_us: z.unknown().optional(),
    fund: z.unknown().optional(),
    max_fee_bps: z.unknown().optional(),
    accept_risks: z.array(z.string().max(64)).max(32).optional(),
    shield: z.boolean().optional(),
    policies: z.array(z.string().max(64)).max(8).optional(),
  })
  .strict();
/** A session trade, as the trade route (or a hosted tick, through the same schema) parses it. */
export type SessionTradeParameters = z.infer<typeof sessionTradeRequest>;

const sameSet = (a: string[], b: string[]) =>
  a.length === b.length && [...a].sort().every((x, i) => x === [...b].sort()[i]);

/** The session's swap as buildSwap makes it. */
type SessionSwap = ReturnType<typeof buildSwap>;
/** What the co-signer signed and what the executor sends: the leaf, the redeemed execution, the transaction. */
type Cosigned = {
  signed: CosignAnswer;
  execution: Execution;
  fee: Execution | undefined;
  redeemed: Execution;
  curve: { root: Delegation; group: number } | null;
  tx: PlanTx;
  cosignMs: number;
};

/**
 * live/session/trade: the house's trading stages build the swap for the session wallet; the
 * co-signer re-reads it and signs a leaf to the executor; the answer is the executor's
 * `redeemDelegations([leaf, root])` transaction, simulated from the executor, stored as a plan
 * that submit relays only byte for byte.
 */
export async function sessionTrade(d: SessionDeps, q: SessionTradeParameters, who: Who) {
  const t0 = performance.now();
  const s = await tradableSession(d, q.session_id, who);
  const r = tradeRequestOf(s, q);
  await assertSessionTokens(d, s, r, who);
  const e = await evaluateWithin(d, s, r, who);
  const swap = buildSwap(d, s, e, r);
  const co = await cosignSwap(d, s, e, swap);
  // The simulation and the stored plan do not wait for each other.
  const t2 = performance.now();
  const [simulation, planId] = await Promise.all([simulateLeaf(d, s, e, co), savePlan(d, s, e, swap, co, who)]);
  const timings = { cosign_ms: co.cosignMs, simulate_ms: msSince(t2), t0 };
  return tradeAnswer(d, s, e, swap, co, { simulation, planId, timings });
}

/**
 * The trade as the house's stages take it, for the session's wallet under the session's risk
 * terms (SESSION_TERMS when it asks others), approvals exact and no permit inside.
 */
function tradeRequestOf(s: StoredSession, q: SessionTradeParameters): TradeRequest {
  const terms = s.binding.risk_terms;
  if (
    (q.accept_risks && !sameSet(q.accept_risks, terms.accept_risks)) ||
    (q.shield !== undefined && q.shield !== terms.shield) ||
    (q.policies && !sameSet(q.policies, terms.policies))
  ) {
    throw new Refusal(
      "SESSION_TERMS",
      "the trade asks other risk terms than the session binds; omit them or grant a session with these terms",
      { risk_terms: terms },
    );
  }
  const { session_id: _id, ...rest } = q;
  return parseTradeRequest({
    ...rest,
    wallet: s.wallet,
    accept_risks: terms.accept_risks,
    shield: terms.shield,
    policies: terms.policies,
    approval_mode: "exact",
    permit_mode: "transaction",
  });
}

/** Tokens of the session only (SESSION_TOKENS), before any chain read. */
async function assertSessionTokens(d: SessionDeps, s: StoredSession, r: TradeRequest, who: Who) {
  const { tin, tout } = await d.trading.context.sides.pair(r, who);
  for (const t of [tin, tout])
    if (!s.binding.tokens.includes(lc(t.address)))
      throw new Refusal("SESSION_TOKENS", `${t.symbol || t.address} is not one of this session's tokens`, {
        tokens: s.tokens,
      });
}

/**
 * The house's evaluation of the trade for the session wallet, within the session: its policy, its
 * per-trade cap, and the curve root or the setup the route needs.
 */
async function evaluateWithin(d: SessionDeps, s: StoredSession, r: TradeRequest, who: Who): Promise<Evaluation> {
  const e = await d.trading.stages.evaluate(d.trading.context, r, "prepare", who, s.wallet);
  if (e.policy.refusal) throw e.policy.refusal;
  // The per-trade cap needs no counter: refused before co-signing (the co-signer counts the rest under its lock).
  if (e.notional > s.binding.limits.max_trade_usd)
    throw new Refusal(
      "SESSION_MAX_TRADE",
      `$${round2(e.notional)} is over the session's $${s.binding.limits.max_trade_usd} per trade`,
    );
  const route = e.best.quote.route;
  if (route.venue === "curve") assertCurve(d, s, e, route);
  else assertSetup(d, s, e);
  return e;
}

/**
 * The co-signer's leaf for the swap, checked to allow exactly this execution for the session's
 * executor under its root (SIGNER_MISMATCH otherwise), and the executor's redeemDelegations call.
 */
async function cosignSwap(d: SessionDeps, s: StoredSession, e: Evaluation, swap: SessionSwap): Promise<Cosigned> {
  const execution: Execution = { target: swap.tx.to, value: BigInt(swap.tx.value), callData: swap.tx.data };
  const fee: Execution | undefined = swap.feeTx
    ? { target: swap.feeTx.to, value: BigInt(swap.feeTx.value), callData: swap.feeTx.data }
    : undefined;
  const t1 = performance.now();
  const signed = await d.cosigner!.cosign({
    delegationHash: s.delegationHash,
    execution,
    fee,
    declared: { feeBps: e.fee.bps, expectedOut: swap.expectedOut },
  });
  const cosignMs = msSince(t1);
  // The leaf redeems the root that allows its call: the session's root, or for a curve trade its
  // curve root over the wallet's own batch [fee, curve call] (one execution: never one without the other).
  const route = e.best.quote.route;
  const curveRoot = s.curveRoots[0];
  const curve =
    fee && curveRoot && route.venue === "curve"
      ? { root: curveRoot, group: curveGroupOf(s.binding.curve_tokens!.indexOf(lc(route.token)), route.buy) }
      : null;
  if (fee && !curve)
    throw new Refusal("SESSION_CURVE", "this session has no curve root: grant one that lists the curve token and ETH");
  const redeemed: Execution = fee ? walletBatch(s.wallet, [fee, execution]) : execution;
  assertLeafAllows(d, s, e, signed, curve ? delegationHash(curve.root) : s.delegationHash, redeemed);
  const data = curve
    ? redeemCalldata(
        [signed.leaf, withGroup(curve.root, curve.group, curveGroupSizes(s.binding.curve_tokens!.length))],
        redeemed,
      )
    : redeemCalldata([signed.leaf, withRootGroup(s.root, 0)], execution);
  const tx: PlanTx = {
    to: getAddress(d.config.contracts.delegationManager),
    data,
    value: "0",
    chain_id: d.config.chainId,
  };
  return { signed, execution, fee, redeemed, curve, tx, cosignMs };
}

/** The leaf delegates from the co-signer to the executor, under `authority`, once, for `redeemed` only. */
function assertLeafAllows(
  d: SessionDeps,
  s: StoredSession,
  e: Evaluation,
  signed: CosignAnswer,
  authority: Hex,
  redeemed: Execution,
) {
  const leaf = signed.leaf;
  const allows =
    lc(leaf.delegator) === lc(d.cosigner!.address) &&
    lc(leaf.delegate) === lc(s.executor) &&
    lc(leaf.authority) === lc(authority) &&
    leafIsOnce(leaf, redeemed, d.config.contracts.enforcers, Math.max(d.now(), e.snap.time));
  if (!allows)
    throw new Refusal(
      "SIGNER_MISMATCH",
      "the co-signer answered a leaf for another executor, root or execution; nothing co-signed is used",
    );
}

/** The executor's transaction simulated from the executor against the session wallet. */
function simulateLeaf(d: SessionDeps, s: StoredSession, e: Evaluation, co: Cosigned) {
  return rpc(
    simulatePlan({
      chain: d.chain,
      multicall3: d.config.contracts.multicall3,
      wallet: s.wallet,
      from: s.executor,
      txs: [{ to: co.tx.to, data: co.tx.data, value: 0n }],
      tokenOut: e.tout.address,
      feeToken: e.feeToken.address,
      feeRecipient: d.config.feeRecipient,
      overrides: [],
    }),
  );
}

/** The tokens of the trade as the answer and the plan name them. */
const tokensOf = (d: SessionDeps, e: Evaluation) => ({
  token_in: d.trading.context.sides.ref(e.tin),
  token_out: d.trading.context.sides.ref(e.tout),
});

/** The plan submit relays byte for byte (a session plan). */
function savePlan(d: SessionDeps, s: StoredSession, e: Evaluation, swap: SessionSwap, co: Cosigned, who: Who) {
  const tokens = tokensOf(d, e);
  return d.ledger.savePlan({
    keyId: who.key.keyId,
    wallet: s.wallet,
    kind: "session",
    // Fee and curve call in one transaction from the wallet: a batch, as prepare's delegated plans.
    execution: co.fee ? "batch" : "router",
    tokenIn: tokens.token_in,
    tokenOut: tokens.token_out,
    amountIn: e.amountIn.toString(),
    amountOutMin: swap.minOut.toString(),
    feeBps: e.fee.bps,
    deadline: co.signed.expires,
    txs: [{ kind: "swap", tx: co.tx }],
    summary: {
      route: e.best.row.id,
      fee: swap.fee,
      session_id: s.id,
      executor: s.executor,
      execution_value: co.execution.value.toString(),
      leaf_hash: co.signed.leafHash,
    },
  });
}

/** live/session/trade's answer: the executor's transaction, the leaf, the swap, the checks and the plan. */
function tradeAnswer(
  d: SessionDeps,
  s: StoredSession,
  e: Evaluation,
  swap: SessionSwap,
  co: Cosigned,
  out: {
    simulation: Awaited<ReturnType<typeof simulateLeaf>>;
    planId: Awaited<ReturnType<typeof savePlan>>;
    timings: { cosign_ms: number; simulate_ms: number; t0: number };
  },
) {
  const { simulation, timings } = out;
  const { signed } = co;
  const gas = Number(e.best.row.gas) + REDEEM_GAS;
  return {
    session_id: s.id,
    ready: simulation.ok,
    simulated_ok: simulation.ok,
    tx: {
      ...co.tx,
      from: s.executor,
      gas: simulation.ok && simulation.gas_total ? Math.ceil(simulation.gas_total * 1.25) : gas,
    },
    executor: s.executor,
    wallet: s.wallet,
    leaf: {
      delegation_hash: signed.leafHash,
      expires: signed.expires,
      delegate: signed.leaf.delegate,
      delegator: signed.leaf.delegator,
      authority: signed.leaf.authority,
      caveats: signed.leaf.caveats,
      salt: signed.leaf.salt.toString(),
      signature: signed.leaf.signature,
    },
    execution: executionView(co.redeemed, co.curve?.group ?? 0, co.fee && { fee: co.fee, trade: co.execution }),
    swap: {
      route: e.best.row,
      amount_in: e.amountIn.toString(),
      notional_usd: round2(e.notional),
      amount_out_expected: e.expectedOut.toString(),
      amount_out_min: swap.minOut.toString(),
      deadline: swap.deadline,
      fee: swap.fee,
      tokens: tokensOf(d, e),
    },
    simulation: { ...simulation, from: s.executor },
    checks: { policy: e.policy.checks, signer: signed.checks },
    spend: signed.spend,
    risks: e.risks,
    ...e.fees,
    risk_terms: s.binding.risk_terms,
    plan_id: out.planId,
    timings: {
      ...e.timings,
      cosign_ms: timings.cosign_ms,
      simulate_ms: timings.simulate_ms,
      total_ms: msSince(timings.t0),
    },
  };
}

const callView = (x: Execution) => ({ target: x.target, value: x.value.toString(), call_data: x.callData });

/**
 * What the leaf allows, redeemed in single mode under `root_group` of its root. A curve trade's is
 * the wallet's own batch: `calls` lists it, the fee first (`fee` repeats it).
 */
function executionView(
  redeemed: Execution,
  group: number,
  curve: { fee: Execution; trade: Execution } | null | undefined,
) {
  const base = { ...callView(redeemed), mode: "single", root_group: group };
  if (!curve) return { ...base, root: "session" as const };
  return {
    ...base,
    root: "curve" as const,
    batch: true as const,
    calls: [
      { kind: "fee_transfer" as const, ...callView(curve.fee) },
      { kind: "curve" as const, ...callView(curve.trade) },
    ],
    fee: callView(curve.fee),
  };
}

/**
 * A session the key may trade: the wallet's or the executor's key; switched on, not revoked, not
 * ending within seconds.
 */
async function tradableSession(d: SessionDeps, id: string, who: Who): Promise<StoredSession> {
  if (!d.cosigner)
    throw new Refusal(
      "SIGNER_UNAVAILABLE",
      "no co-signer is configured: sessions cannot be co-signed now",
      {},
      { retryAfterS: 60 },
    );
  const s = await d.store.byId(id);
  const w = who.key.wallet;
  if (!s || !w || (lc(w) !== lc(s.wallet) && lc(w) !== lc(s.executor)))
    throw new Refusal("NO_SESSION", "no such session for this key");
  if (s.status === "pending")
    throw new Refusal(
      "SESSION_PENDING",
      "the session is not switched on yet: send the signatures with live/session/grant",
    );
  if (s.status === "revoked") throw new Refusal("SESSION_REVOKED", "the session was revoked");
  const now = d.now();
  if (s.expires <= now) throw new Refusal("SESSION_EXPIRED", `the session ended at ${s.expires}`);
  if (s.expires - now <= EXPIRY_MARGIN_S)
    throw new Refusal("SESSION_EXPIRY", `the session ends in ${s.expires - now} s; grant a new one`);
  if (BigInt(bindingHash(s.binding)) !== s.root.salt)
    throw new Refusal("SESSION_BOUND", "the stored binding does not hash to the root's salt; grant again");
  return s;
}

/** A token input needs the router's Permit2 allowance from setup, large enough and unexpired. */
function assertSetup(d: SessionDeps, s: StoredSession, e: Evaluation) {
  if (e.tin.address === zeroAddress) return;
  const w = e.snap.wallet;
  const [amount, expiration] = w?.routerPermit ?? [0n, 0, 0];
  const toPermit2 = w?.allowanceToPermit2 ?? 0n;
  if (amount < e.amountIn || toPermit2 < e.amountIn || expiration <= d.now()) {
    const steps = ((s.start.setup as { steps?: { token?: Address }[] } | undefined)?.steps ?? []).filter(
      (x) => x.token && lc(x.token) === lc(e.tin.address),
    );
    throw new Refusal(
      "SESSION_SETUP",
      `${e.tin.symbol || e.tin.address} needs the session's setup first: ` +
        "the wallet's Permit2 allowances are short or expired",
      { setup: steps, allowance: { to_permit2: toPermit2.toString(), router: amount.toString(), expiration } },
    );
  }
}

/**
 * The session wallet's swap: a router call (no permit inside: the executor cannot sign one;
 * deadline within the leaf), or for the launchpad curve its call and the fee transfer, built by
 * the same code as prepare's.
 */
function buildSwap(d: SessionDeps, s: StoredSession, e: Evaluation, r: TradeRequest) {
  const c = d.config.contracts;
  const route = e.best.quote.route;
  const deadline = Math.min(Math.max(e.snap.time, d.now()) + LIMITS.deadlineS, s.expires);
  const minOut = (() => {
    const bySlippage = bpsOf(e.expectedOut, 10_000 - e.slippage);
    const floor = r.min_amount_out !== undefined ? BigInt(r.min_amount_out) : 0n;
    return bySlippage > floor ? bySlippage : floor;
  })();
  if (route.venue === "curve") {
    const calls = d.trading.stages.buildCurveCalls(d.trading.context, e, r, route, s.wallet, minOut);
    const fee = {
      bps: e.fee.bps,
      side: e.feeSide,
      recipient: d.config.feeRecipient,
      token: zeroAddress,
      command: "FEE_TRANSFER",
      amount: calls.curveFee.toString(),
    };
    // A sale's proceeds are gross of the fee the wallet pays from them: the co-signer reads both net.
    const expectedOut = route.buy ? e.best.quote.amountOut : e.best.quote.amountOut - calls.curveFee;
    return { tx: calls.swap, feeTx: calls.feeTx, minOut: calls.curveMin, deadline, fee, expectedOut };
  }
  const tx = buildRouterSwap({
    chainId: d.config.chainId,
    router: c.universalRouter,
    route,
    tokenIn: e.tin.address,
    tokenOut: e.tout.address,
    weth: d.config.tokens.WETH!.address,
    amountIn: e.amountIn,
    amountOutMin: minOut,
    fee: { side: e.feeSide, bps: e.fee.bps, recipient: d.config.feeRecipient, amount: e.inputFee },
    deadline,
    permit: null,
  });
  const feeAmount =
    e.feeSide === "input"
      ? e.inputFee
      : bpsOf((BigInt(e.best.row.amount_out!) * 10_000n) / BigInt(10_000 - e.fee.bps), e.fee.bps);
  const fee = {
    bps: e.fee.bps,
    side: e.feeSide,
    recipient: d.config.feeRecipient,
    token: e.feeToken.address,
    command: e.feeSide === "input" ? "TRANSFER" : "PAY_PORTION",
    amount: feeAmount.toString(),
  };
  return { tx, feeTx: null, minOut, deadline, fee, expectedOut: e.expectedOut };
}

/**
 * A curve trade needs the session's curve root (SESSION_CURVE), a token it lists
 * (SESSION_ROOT_ALLOWS), and for a sale the launchpad's allowance from setup: the executor cannot
 * send an approve, so a plan that needs one is SESSION_CURVE_STEPS.
 */
function assertCurve(_d: SessionDeps, s: StoredSession, e: Evaluation, route: CurveRoute) {
  if (!s.curveRoots.length)
    throw new Refusal("SESSION_CURVE", "this session has no curve root: grant one that lists the curve token and ETH");
  if (!s.binding.curve_tokens?.includes(lc(route.token)))
    throw new Refusal("SESSION_ROOT_ALLOWS", `the session's curve root does not allow trading ${route.token}`);
  if (!route.buy && (e.snap.wallet?.allowanceToCurve ?? 0n) < e.amountIn) {
    const steps = ((s.start.setup as { steps?: { token?: Address }[] } | undefined)?.steps ?? []).filter(
      (x) => x.token && lc(x.token) === lc(e.tin.address),
    );
    throw new Refusal(
      "SESSION_CURVE_STEPS",
      `selling ${e.tin.symbol || e.tin.address} on the curve ` +
        "needs the launchpad's allowance from the session's setup first",
      { setup: steps, allowance: { to_launchpad: (e.snap.wallet?.allowanceToCurve ?? 0n).toString() } },
    );
  }
}
