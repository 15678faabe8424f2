import { getAddress, keccak256, zeroAddress, type Address, type Hex, type LocalAccount, type PublicClient } from "viem";
import { relayedOutcome } from "../../lib/tradeOutcome.js";
import { readFeeBps, type RouterReading } from "../../lib/router/read.js";
import { MARK_MAX_AGE_S, ownMark } from "./marks.js";
import { PitError, verificationFailed } from "./errors.js";
import { hopFeesBps, ownImpactBps, ownQuote } from "./quote.js";
import type { Http } from "./http.js";
import { withPinnedSymbols, type Pins } from "./pins.js";
import {
  checkImpactRisks,
  verifyApprove,
  verifyPermit,
  verifyPlan,
  type PlanAnswer,
  type TradeIntent,
} from "./verifyPlan.js";
import { permitSingleTypes } from "../../abis/permit2.js";

type Step = { kind: string; tx?: { to: string; data: Hex; value: string; chain_id: number } };
type PrepareAnswer = PlanAnswer & {
  ready?: boolean;
  steps?: Step[];
  permit?: { typed_data: Parameters<typeof verifyPermit>[0] } | null;
  permit_now?: number;
};

/**
 * The Permit2 round trip of an ERC-20 input (SPEC prepare): at most one approve step, checked (the
 * input token's approve of exactly this amount to the pinned Permit2) then signed and sent on the
 * client's own RPC; the permit's typed data checked (pinned Permit2, the router as spender, this
 * amount, 30 minutes) then signed; prepare again with the signature.
 */
async function permitRoundTrip(
  d: { http: Http; chain: PublicClient; account: LocalAccount; pins: Pins },
  q: TradeRequest,
  intent: TradeIntent,
  body: Record<string, unknown>,
  first: PrepareAnswer,
  firstNonce?: number,
): Promise<PrepareAnswer> {
  const amountIn = BigInt(first.amount_in);
  const nowS = Number((await d.chain.getBlock()).timestamp);
  // The approve and the permit are for the amount the client asked, not one the server chose.
  await checkAskedAmount(d, q, amountIn, nowS);
  const steps = first.steps ?? [];
  const unknown = steps.find((s) => s.kind !== "approve" && s.kind !== "sign_permit");
  if (unknown)
    throw new PitError("VERIFICATION_FAILED", `the plan asks for a ${unknown.kind} step this SDK does not sign`, {
      rule: "RECIPIENT",
    });
  // One approve lets Permit2 take this trade's input; a second, however exact, is only gas and a wait.
  const approves = steps.filter((s) => s.kind === "approve").length;
  if (approves > 1)
    throw new PitError("VERIFICATION_FAILED", `the plan lists ${approves} approve steps; a trade needs one at most`, {
      rule: "RECIPIENT",
    });
  const permitStep = steps.find((s) => s.kind === "sign_permit");
  // Everything is checked before anything is signed.
  for (const s of steps) if (s.kind === "approve") verifyApprove(s.tx!, intent, d.pins, amountIn);
  if (permitStep) verifyPermit(first.permit!.typed_data, intent, d.pins, amountIn, nowS);
  for (const [i, s] of steps.filter((x) => x.kind === "approve").entries()) {
    const [pending, fees] = await Promise.all([
      d.chain.getTransactionCount({ address: d.account.address, blockTag: "pending" }),
      d.chain.estimateFeesPerGas(),
    ]);
    const nonce = i === 0 && firstNonce !== undefined ? firstNonce : pending;
    const raw = await d.account.signTransaction({
      chainId: d.pins.chainId,
      to: s.tx!.to as Address,
      data: s.tx!.data,
      value: 0n,
      nonce,
      gas: 120_000n,
      maxFeePerGas: fees.maxFeePerGas * 2n,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
      type: "eip1559",
    });
    const approveHash = keccak256(raw);
    await d.chain.sendRawTransaction({ serializedTransaction: raw });
    const receipt = await d.chain.waitForTransactionReceipt({
      hash: approveHash,
      timeout: 120_000,
      checkReplacement: false,
    });
    if (receipt.transactionHash.toLowerCase() !== approveHash || receipt.status !== "success")
      throw new PitError("TX_REVERTED", `the approve ${receipt.transactionHash} reverted; only gas was spent`);
  }
  if (!permitStep) return d.http.post<PrepareAnswer>("/live/prepare", body);
  const t = first.permit!.typed_data;
  const m = t.message;
  const signature = await d.account.signTypedData({
    domain: { name: "Permit2", chainId: d.pins.chainId, verifyingContract: d.pins.permit2 },
    types: permitSingleTypes,
    primaryType: "PermitSingle",
    message: {
      details: {
        token: getAddress(m.details.token),
        amount: BigInt(m.details.amount),
        expiration: Number(m.details.expiration),
        nonce: Number((m.details as { nonce?: number | string }).nonce ?? 0),
      },
      spender: d.pins.router,
      sigDeadline: BigInt(m.sigDeadline),
    },
  });
  return d.http.post<PrepareAnswer>("/live/prepare", {
    ...body,
    permit_signature: signature,
    permit_now: first.permit_now,
  });
}

/**
 * RECIPIENT unless `amountIn` is the amount asked, or worth the notional asked (within
 * NOTIONAL_TOLERANCE) at the client's own mark.
 */
async function checkAskedAmount(
  d: { chain: PublicClient; pins: Pins },
  q: TradeRequest,
  amountIn: bigint,
  nowS: number,
) {
  if (q.amountIn !== undefined) {
    if (amountIn !== q.amountIn)
      throw verificationFailed("RECIPIENT", `the plan spends ${amountIn}, not the ${q.amountIn} asked`);
    return;
  }
  const usd = q.notionalUsd ?? 0;
  const mark = await ownMark(d.chain, d.pins, q.tokenIn, nowS);
  if (!mark || mark.ageS > MARK_MAX_AGE_S)
    throw verificationFailed(
      "QUOTE_OWN",
      `the client has no mark of its own for ${q.tokenIn} to check the notional against; ask with amountIn`,
    );
  const worth = (Number(amountIn) / 10 ** d.pins.tokens[q.tokenIn]!.decimals) * mark.usd;
  if (Math.abs(worth - usd) > usd * NOTIONAL_TOLERANCE + 1)
    throw verificationFailed(
      "RECIPIENT",
      `the plan spends $${worth.toFixed(2)} by the client's own reckoning, not the $${usd} asked`,
    );
}

/**
 * A quote this far from the client's own is not the market's (the server's expected amount is what the
 * slippage is measured from).
 */
export const QUOTE_TOLERANCE_BPS = 100;
/** The signed minimum may sit this much under the slippage asked (the client quotes a block later). */
const FLOOR_TOLERANCE_BPS = 10;
/** Gas the SDK signs for at most (SPEC's fast-mode bound; a swap needs far less). */
const MAX_GAS = 1_000_000;
/** A notional's tolerance (SPEC fast mode: amount_usd 3 %). */
const NOTIONAL_TOLERANCE = 0.03;

/**
 * A trade asked by notional: the amount the plan spends must be worth it, by the client's own
 * reckoning. USDG in is its amount; USDG out is the client's own quote; other pairs need amountIn.
 */
function checkNotional(pins: Pins, q: TradeRequest, reading: RouterReading, ownOut: bigint) {
  const usd = q.notionalUsd ?? 0;
  const usdg = pins.tokens.USDG!;
  const worth =
    q.tokenIn === "USDG"
      ? Number(reading.amountIn) / 10 ** usdg.decimals
      : q.tokenOut === "USDG"
        ? Number(ownOut) / 10 ** usdg.decimals
        : null;
  if (worth === null)
    throw verificationFailed("QUOTE_OWN", "a notional can be checked only against USDG here; ask with amountIn");
  if (Math.abs(worth - usd) > usd * NOTIONAL_TOLERANCE + 1)
    throw verificationFailed(
      "RECIPIENT",
      `the plan spends $${worth.toFixed(2)} by the client's own reckoning, not the $${usd} asked`,
    );
}

/**
 * QUOTE_OWN: the plan's expected output must be within QUOTE_TOLERANCE_BPS of the client's own
 * quote of the same hops; MIN_OUT: the signed minimum must be within the slippage of the client's
 * own quote, so a server lowering both the expected and the minimum together is still refused.
 */
async function checkOwnQuote(
  d: { chain: PublicClient; pins: Pins },
  plan: PlanAnswer,
  reading: RouterReading,
  slippageBps: number,
) {
  const gross = await ownQuote(d.chain, d.pins.v4Quoter, plan.tx!.data).catch(() => null);
  if (gross === null || gross === 0n)
    throw verificationFailed("QUOTE_OWN", "the client cannot quote the plan's route itself");
  if (plan.amount_out_expected === undefined)
    throw verificationFailed("QUOTE_OWN", "the plan gives no expected output to check");
  // An output-side fee (PAY_PORTION) leaves the wallet the rest of the pool's output.
  const portion = reading.fees.find((f) => f.command === "PAY_PORTION")?.bps ?? 0n;
  const own = (gross * (10_000n - portion)) / 10_000n;
  const minOut = reading.minOut;
  const expected = plan.amount_out_expected !== undefined ? BigInt(plan.amount_out_expected) : null;
  if (
    expected !== null &&
    (expected * 10_000n < own * BigInt(10_000 - QUOTE_TOLERANCE_BPS) ||
      expected * 10_000n > own * BigInt(10_000 + QUOTE_TOLERANCE_BPS))
  )
    throw verificationFailed(
      "QUOTE_OWN",
      `the plan expects ${expected}; the client's own quote of the same route is ${own}`,
    );
  if (minOut * 10_000n < own * BigInt(10_000 - slippageBps - FLOOR_TOLERANCE_BPS))
    throw verificationFailed(
      "MIN_OUT",
      `minimum out ${minOut} is more than ${slippageBps} bps under the client's own quote ${own}`,
    );
  return own;
}

/**
 * The client's own impact may exceed the server's by this much (a block apart, rounding) before the
 * server is said to understate it.
 */
export const IMPACT_TOLERANCE_BPS = 50;

/**
 * IMPACT_OWN: the price impact the client measures on its own RPC may not exceed what the plan's
 * quote declares (vs_mid_bps less the pools' fees) by more than IMPACT_TOLERANCE_BPS; RISK_CODES:
 * the plan lists the impact code the client's own measure calls for.
 */
async function checkImpact(d: { chain: PublicClient; pins: Pins }, plan: PlanAnswer, intent: TradeIntent) {
  const own = await ownImpactBps(d.chain, d.pins.v4Quoter, plan.tx!.data).catch(() => null);
  if (own === null) throw verificationFailed("IMPACT_OWN", "the client cannot measure the route's price impact itself");
  const vsMid = plan.quote?.vs_mid_bps;
  if (typeof vsMid !== "number")
    throw verificationFailed("IMPACT_OWN", "the plan declares no price against the mid (quote.vs_mid_bps) to check");
  const declared = Math.max(0, -vsMid - Math.round(hopFeesBps(plan.tx!.data)));
  if (own > declared + IMPACT_TOLERANCE_BPS)
    throw verificationFailed(
      "IMPACT_OWN",
      `the client measures a price impact of ${own} bps; the plan declares ${declared}`,
    );
  checkImpactRisks(plan, intent, d.pins, own);
}

/** A fill this far from the oracles' marks (beyond the fee) is not the market's (SDK rule PRICE). */
export const PRICE_TOLERANCE_BPS = 300;
/**
 * PRICE: with a mark on both sides, what the client's own quote says comes out must be worth the
 * input less the fee, within PRICE_TOLERANCE_BPS: a pinned pool pushed away from the market (the
 * own quote reads that same pool) is refused. A pair without two marks needs the caller's floor.
 */
async function checkPrice(
  d: { chain: PublicClient; pins: Pins },
  q: TradeRequest,
  reading: RouterReading,
  ownOut: bigint,
  nowS: number,
) {
  if (q.minOut !== undefined && reading.minOut < q.minOut)
    throw verificationFailed(
      "MIN_OUT",
      `the calldata's minimum out ${reading.minOut} is under the caller's own floor ${q.minOut}`,
    );
  const [mIn, mOut] = await Promise.all([
    ownMark(d.chain, d.pins, q.tokenIn, nowS),
    ownMark(d.chain, d.pins, q.tokenOut, nowS),
  ]);
  if (!mIn || !mOut || mIn.ageS > MARK_MAX_AGE_S || mOut.ageS > MARK_MAX_AGE_S) {
    // Without two marks of its own the client's quotes read the server's chosen pools: only the
    // caller's own floor, or its explicit acceptance, stands between the wallet and a skewed pool.
    if (q.minOut !== undefined || q.allowUnmarked) return;
    throw verificationFailed(
      "PRICE",
      `the client has no fresh mark of its own for ${!mIn || mIn.ageS > MARK_MAX_AGE_S ? q.tokenIn : q.tokenOut}: ` +
        "pass minOut (your own floor) or allowUnmarked",
    );
  }
  const inUsd = (Number(reading.amountIn) / 10 ** d.pins.tokens[q.tokenIn]!.decimals) * mIn.usd;
  const outUsd = (Number(ownOut) / 10 ** d.pins.tokens[q.tokenOut]!.decimals) * mOut.usd;
  const feeBps = readFeeBps(reading) ?? 0;
  if (inUsd > 0 && outUsd < inUsd * (1 - (feeBps + PRICE_TOLERANCE_BPS) / 10_000))
    throw verificationFailed(
      "PRICE",
      `$${inUsd.toFixed(2)} in would bring $${outUsd.toFixed(2)} out at the oracles' marks: ` +
        `more than ${PRICE_TOLERANCE_BPS} bps beyond the fee`,
    );
}

export type TradeRequest = {
  tokenIn: string;
  tokenOut: string;
  amountIn?: bigint;
  notionalUsd?: number;
  slippageBps?: number;
  acceptRisks?: string[];
  shield?: boolean;
  ownerAttestsNonUs?: boolean;
  /** The caller's own floor for the output: the signed minimum must be at least this. */
  minOut?: bigint;
  /** Trade a pair without two marks of the client's own on the server's pools' word (else PRICE asks for minOut). */
  allowUnmarked?: boolean;
};
export type TradeResult = { txHash: Hex; amountIn: bigint; amountOut: bigint; minOut: bigint; block: bigint };

/** The fee as the calldata pays it, in lib/tradeOutcome's terms. */
function feeOf(r: RouterReading, pins: Pins) {
  const f = r.fees[0]!;
  return f.command === "PAY_PORTION"
    ? { side: "output" as const, bps: Number(f.bps ?? 0n), token: f.token, recipient: pins.feeRecipient, amount: 0n }
    : { side: "input" as const, bps: 0, token: f.token, recipient: pins.feeRecipient, amount: f.amount ?? 0n };
}

/**
 * prepare, verify (lib/router/read: nothing the client did not ask for is signed), check the
 * wallet can pay, sign, submit, check the answered hash is the signed bytes', wait for the
 * receipt on the client's own RPC and check what came back (MINED_MISMATCH, TX_REVERTED).
 */
export async function trade(
  d: { http: Http; chain: PublicClient; account: LocalAccount; pins: Pins },
  q: TradeRequest,
  o: { nonce?: number } = {},
): Promise<TradeResult> {
  q = withPinnedSymbols(d.pins, q);
  const intent: TradeIntent = {
    wallet: d.account.address,
    tokenIn: q.tokenIn,
    tokenOut: q.tokenOut,
    slippageBps: q.slippageBps ?? 50,
    acceptRisks: q.acceptRisks ?? [],
    shield: q.shield ?? false,
    ...(q.amountIn !== undefined ? { amountIn: q.amountIn } : {}),
  };
  const body = {
    wallet: d.account.address,
    token_in: q.tokenIn,
    token_out: q.tokenOut,
    ...(q.amountIn !== undefined ? { amount_in: q.amountIn.toString() } : { notional_usd: q.notionalUsd }),
    slippage_bps: intent.slippageBps,
    // The wallet approves exactly this trade's input, and permits it for this trade only.
    approval_mode: "exact",
    permit_scope: "trade",
    ...(intent.acceptRisks.length ? { accept_risks: intent.acceptRisks } : {}),
    ...(intent.shield ? { shield: true } : {}),
    ...(q.ownerAttestsNonUs ? { owner_attests_non_us: true } : {}),
  };
  const checked = await verifiedPlan(d, q, intent, body, o.nonce).catch((err) => {
    if (err instanceof PitError) throw err;
    // A malformed answer fails a check, never the caller's process.
    throw new PitError(
      "VERIFICATION_FAILED",
      `RECIPIENT: the plan could not be read: ${(err as Error).message?.split("\n")[0]}`,
      { rule: "RECIPIENT" },
      { cause: err },
    );
  });
  return signAndSubmit(d, q, checked);
}

type Checked = {
  tx: NonNullable<PlanAnswer["tx"]>;
  reading: RouterReading;
  own: bigint;
  nonceOverride: number | undefined;
};

/**
 * The plan prepared (with its Permit2 round trip) and every check passed, nothing signed but the
 * checked approve and permit.
 */
async function verifiedPlan(
  d: { http: Http; chain: PublicClient; account: LocalAccount; pins: Pins },
  q: TradeRequest,
  intent: TradeIntent,
  body: Record<string, unknown>,
  nonce: number | undefined,
): Promise<Checked> {
  let plan = await d.http.post<PrepareAnswer>("/live/prepare", body);
  if (!plan || typeof plan !== "object") throw new Error("the prepare answer is not an object");
  let nonceOverride = nonce;
  if (!plan.tx) {
    const steps = plan.steps?.filter((x) => x.kind === "approve").length ?? 0;
    plan = await permitRoundTrip(d, q, intent, body, plan, nonceOverride);
    if (steps) nonceOverride = undefined;
  }
  if (!plan.tx)
    throw new PitError("VERIFICATION_FAILED", "the plan has no swap to sign after its approval steps", {
      rule: "RECIPIENT",
    });
  const reading = verifyPlan(plan, intent, d.pins);
  const own = await checkOwnQuote(d, plan, reading, intent.slippageBps);
  await checkImpact(d, plan, intent);
  const block = await d.chain.getBlock();
  // A far deadline would let whoever holds the signed bytes send them when the price moved away.
  if (reading.deadline === null || reading.deadline > block.timestamp + BigInt(d.pins.deadlineS) + 60n)
    throw verificationFailed(
      "MIN_OUT",
      `the call's deadline ${reading.deadline} is further than ${d.pins.deadlineS} s ahead`,
    );
  if (q.amountIn === undefined) checkNotional(d.pins, q, reading, own);
  await checkPrice(d, q, reading, own, Number(block.timestamp));
  return { tx: plan.tx, reading, own, nonceOverride };
}

/** INSUFFICIENT_FUNDS before signing; then sign, submit, the answered hash checked, the receipt checked. */
async function signAndSubmit(
  d: { http: Http; chain: PublicClient; account: LocalAccount; pins: Pins },
  q: TradeRequest,
  c: Checked,
): Promise<TradeResult> {
  const { tx, reading } = c;
  const [pending, fees, balance] = await Promise.all([
    d.chain.getTransactionCount({ address: d.account.address, blockTag: "pending" }),
    d.chain.estimateFeesPerGas(),
    d.chain.getBalance({ address: d.account.address }),
  ]);
  // A fallback from fast mode signs at the fast transaction's nonce: at most one of the two is mined.
  const nonce = c.nonceOverride ?? pending;
  const gas = BigInt(Math.min(Math.max(tx.gas ?? 0, 400_000), MAX_GAS));
  const maxFeePerGas = fees.maxFeePerGas * 2n;
  if (balance < BigInt(tx.value) + gas * maxFeePerGas)
    throw new PitError(
      "INSUFFICIENT_FUNDS",
      `the wallet holds ${balance} wei; the trade needs ${BigInt(tx.value)} plus up to ${gas * maxFeePerGas} for gas`,
    );
  const raw = await d.account.signTransaction({
    chainId: d.pins.chainId,
    to: tx.to as Address,
    data: tx.data,
    value: BigInt(tx.value),
    nonce,
    gas,
    maxFeePerGas,
    maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    type: "eip1559",
  });
  const hash = keccak256(raw);
  const sent = await d.http.post<{ tx_hash?: unknown } | null>("/live/submit", { raw_tx: raw });
  if (typeof sent?.tx_hash !== "string" || sent.tx_hash.toLowerCase() !== hash)
    throw new PitError(
      "HASH_MISMATCH",
      `the server answered ${String(sent?.tx_hash)}; the signed transaction is ${hash}`,
      { signed: { hash, nonce, landed: null } },
    );
  return minedOutcome(d, { hash, raw, reading, tokenIn: q.tokenIn, tokenOut: q.tokenOut, value: BigInt(tx.value) });
}

/**
 * After the server answered the signed bytes' hash: the bytes sent on the client's own RPC too (a
 * server holding them back cannot time them; "already known" is fine), the receipt waited for
 * there, and what came back checked against the calldata (TX_REVERTED, MINED_MISMATCH).
 */
export async function minedOutcome(
  d: { chain: PublicClient; account: LocalAccount; pins: Pins },
  t: { hash: Hex; raw: Hex; reading: RouterReading; tokenIn: string; tokenOut: string; value: bigint },
): Promise<TradeResult> {
  await d.chain.sendRawTransaction({ serializedTransaction: t.raw }).catch(() => undefined);
  // viem would follow a replacement at the same nonce to its receipt: only these bytes' own counts.
  const receipt = await d.chain.waitForTransactionReceipt({ hash: t.hash, timeout: 120_000, checkReplacement: false });
  if (receipt.transactionHash.toLowerCase() !== t.hash.toLowerCase())
    throw new PitError("MINED_MISMATCH", `another transaction than ${t.hash} was mined at its nonce`);
  if (receipt.status !== "success")
    throw new PitError("TX_REVERTED", `${t.hash} was mined and reverted; only gas was spent`);
  const tokenIn = d.pins.tokens[t.tokenIn]!.address;
  const tokenOut = d.pins.tokens[t.tokenOut]!.address;
  const o = relayedOutcome(
    receipt as never,
    {
      wallet: d.account.address,
      execution: "router",
      tokenIn,
      tokenOut,
      txValue: t.value,
      fee: feeOf(t.reading, d.pins),
    },
    { poolManager: d.pins.poolManager, router: d.pins.router, launchpad: zeroAddress },
  );
  if (o.amountOut === null || o.amountOut < t.reading.minOut)
    throw new PitError(
      "MINED_MISMATCH",
      `${t.hash} paid ${o.amountOut} of ${t.tokenOut}, under the signed minimum ${t.reading.minOut}`,
    );
  return {
    txHash: t.hash,
    amountIn: t.reading.amountIn,
    amountOut: o.amountOut,
    minOut: t.reading.minOut,
    block: receipt.blockNumber,
  };
}
