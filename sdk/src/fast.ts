import { erc20Abi, keccak256, zeroAddress, type Address, type Hex, type LocalAccount, type PublicClient } from "viem";
import { permit2Abi } from "../../abis/permit2.js";
import { bpsOf } from "../../lib/fees.js";
import { fastPairHops, fastPairOf, fastRoutesSha256, type FastPair, type FastRouteTable } from "../../lib/fastRoutes.js";
import { readRouterCall } from "../../lib/routerRead.js";
import { buildRouterSwap, permitTypedData, type PermitSingle } from "../../lib/routerSwap.js";
import { quoteExactInputSingle } from "../../lib/quoter.js";
import { PitError } from "./errors.js";
import type { Http } from "./http.js";
import { ownMark, serverMarks, type OwnMark } from "./marks.js";
import type { Pins } from "./pins.js";
import { minedOutcome, type TradeRequest, type TradeResult } from "./trade.js";

/**
 * Fast mode (SPEC "POST /api/v1/live/fast"): the client builds the swap itself from its pinned
 * route table, signs it, and the server relays only a byte-for-byte rebuild. Every reason the
 * client gives fast mode up is SPEC's (FAST_PAIR, STALE, APPROVAL, POOL_FAR, ROUTE_CAP,
 * MARKS_DIFFER, COOLDOWN, CONFIG_MISMATCH, or the server's refusal); with `fallback` (the default)
 * the trade then goes the prepared way, re-using the fast transaction's nonce so at most one of the
 * two can ever be mined.
 */
export type FastRequest = TradeRequest & { fallback?: boolean; ownerAttestsNonUs?: boolean; maxNotionalUsd?: number };
export type FastResult = TradeResult & { path: "fast" | "fallback"; reason: string | null };

/** SPEC "Limits": marks more than this far from the server's are not the same market. */
export const MARKS_DIFFER_BPS = 300;
/** After the server refused a fast trade, the pair goes the prepared way this long. */
export const COOLDOWN_MS = 60_000;
/** SDKs sign a fast deadline this far ahead (SPEC: at most 60 s; SDKs use 30). */
const DEADLINE_S = 30;
/** Gas above the pair's floor, for the chain's own variance. */
const GAS_MARGIN = 60_000;
/** Codes a relay may have reached the sequencer under: the signed bytes may still land, so nothing else is signed for the trade. */
const AFTER_RELAY = new Set(["NONCE", "SUBMIT_REJECTED", "SEQUENCER_UNREACHABLE", "IN_FLIGHT"]);

type Terms = {
  enabled: boolean;
  routes: { version: number; sha256: Hex; pairs: FastPair[]; max_usd: number };
  limits: { max_gas: number; max_fee_multiple: number; max_cost_wei: string; permit_expiry_s: number; min_notional_usd: number };
  fee: { bps: number; recipient: string };
  base_fee_wei: string;
  max_notional_usd: number;
  mark_max_age_s: number;
  server_time: number;
};

/** A reason to leave fast mode, SPEC's code first. */
class FastReason extends PitError {}
const reason = (code: string, message: string) => new FastReason(code, message);

export type FastDeps = { http: Http; chain: PublicClient; account: LocalAccount; pins: Pins; cooldown: Map<string, number>; now: () => number; fallback: (q: TradeRequest, nonce: number | undefined) => Promise<TradeResult> };

/**
 * The route table read from live/fast/terms when the agent is set up, kept with the pins: its
 * SHA-256 is recomputed here (the table is the one the server names) and every hop is a hookless
 * pool of pinned tokens; later terms naming another SHA-256 are CONFIG_MISMATCH.
 */
export async function pinFastRoutes(http: Http, pins: Pins): Promise<{ sha256: Hex; table: FastRouteTable }> {
  const t = await http.get<Terms>("/live/fast/terms");
  const table: FastRouteTable = { version: t.routes.version, chain_id: pins.chainId, router: pins.router, pairs: t.routes.pairs, max_usd: t.routes.max_usd };
  const sha = fastRoutesSha256(table);
  if (sha !== t.routes.sha256) throw new PitError("CONFIG_MISMATCH", `the route table's SHA-256 is ${sha}, not the ${t.routes.sha256} the server names`);
  const pinned = new Set([zeroAddress, ...Object.values(pins.tokens).map((x) => x.address.toLowerCase())]);
  for (const p of table.pairs) {
    const inOk = p.address_in === zeroAddress ? p.token_in === "ETH" : pins.tokens[p.token_in]?.address.toLowerCase() === p.address_in.toLowerCase();
    const outOk = p.address_out === zeroAddress ? p.token_out === "ETH" : pins.tokens[p.token_out]?.address.toLowerCase() === p.address_out.toLowerCase();
    if (!inOk || !outOk) throw new PitError("CONFIG_MISMATCH", `the table's pair ${p.token_in} -> ${p.token_out} names tokens that are not the pinned ones`);
    for (const h of p.hops) if (h.hooks !== zeroAddress || !pinned.has(h.currency0.toLowerCase()) || !pinned.has(h.currency1.toLowerCase())) throw new PitError("CONFIG_MISMATCH", `the table routes ${p.token_in} -> ${p.token_out} through a pool that is hooked or not of pinned tokens`);
  }
  return { sha256: sha, table };
}

/** A fast trade, or the prepared way with the reason fast mode was left (fallback off: that reason thrown). */
export async function fastTrade(d: FastDeps, q: FastRequest): Promise<FastResult> {
  const pairKey = `${q.tokenIn}>${q.tokenOut}`;
  let signedNonce: number | undefined;
  try {
    const r = await fastAttempt(d, q, (n) => (signedNonce = n));
    return { ...r, path: "fast", reason: null };
  } catch (err) {
    if (!(err instanceof PitError)) throw err;
    const serverRefusal = !(err instanceof FastReason) && err.detail.status !== undefined && err.detail.status >= 400 && err.detail.status < 500 && err.code !== "HASH_MISMATCH";
    // A fast reason (nothing signed went anywhere) or a refusal the server answered before relaying.
    if (!(err instanceof FastReason) && !(serverRefusal && !AFTER_RELAY.has(err.code))) throw err;
    if (serverRefusal) d.cooldown.set(pairKey, d.now() + COOLDOWN_MS);
    if (q.fallback === false) throw err;
    const r = await d.fallback(q, signedNonce);
    return { ...r, path: "fallback", reason: err.code };
  }
}

async function fastAttempt(d: FastDeps, q: FastRequest, signedWith: (nonce: number) => void): Promise<TradeResult> {
  const until = d.cooldown.get(`${q.tokenIn}>${q.tokenOut}`);
  if (until !== undefined && d.now() < until) throw reason("COOLDOWN", `the server refused a fast ${q.tokenIn} -> ${q.tokenOut} trade; fast mode rests until ${new Date(until).toISOString()}`);
  const pinned = d.pins.fastRoutes;
  if (!pinned) throw reason("CONFIG_MISMATCH", "no fast route table is pinned (pinFastRoutes)");
  const pair = fastPairOf(pinned.table, q.tokenIn, q.tokenOut);
  if (!pair) throw reason("FAST_PAIR", `no pinned route for ${q.tokenIn} -> ${q.tokenOut}`);
  const [terms, block, server] = await Promise.all([d.http.get<Terms>(`/live/fast/terms${q.shield ? "?shield=1" : ""}`), d.chain.getBlock(), serverMarks(d.http)]);
  checkTerms(terms, d.pins, pinned.sha256, q.shield ?? false);
  const nowS = Number(block.timestamp);
  const marks = await ownMarks(d, q, terms, nowS, server);
  const sizing = sizeOf(d.pins, q, marks, pair, terms);
  const ethIn = pair.address_in === zeroAddress;
  const wallet = d.account.address;
  if (!ethIn) {
    const allowance = await d.chain.readContract({ address: pair.address_in, abi: erc20Abi, functionName: "allowance", args: [wallet, d.pins.permit2] });
    if (allowance < sizing.amountIn) throw reason("APPROVAL", `the wallet's ${q.tokenIn} is not approved to Permit2 for ${sizing.amountIn}; fast mode carries a permit, never an approve`);
  }
  const fee = { side: pair.fee_side, bps: terms.fee.bps, recipient: d.pins.feeRecipient, amount: pair.fee_side === "input" ? bpsOf(sizing.amountIn, terms.fee.bps) : 0n };
  const out = await pinnedQuote(d, pair, sizing.amountIn, fee);
  checkPoolFar(d.pins, q, pair, sizing, out, marks, terms.fee.bps);
  const minOut = (out * BigInt(10_000 - (q.slippageBps ?? 50))) / 10_000n;
  const deadline = nowS + DEADLINE_S;
  const permit = ethIn ? null : await signPermit(d, pair, sizing.amountIn, nowS, terms);
  const built = buildRouterSwap({ chainId: d.pins.chainId, router: d.pins.router, route: { hops: fastPairHops(pair) }, tokenIn: pair.address_in, tokenOut: pair.address_out, weth: d.pins.tokens.WETH?.address ?? zeroAddress, amountIn: sizing.amountIn, amountOutMin: minOut, fee, deadline, permit });
  const reading = readRouterCall(built.to, BigInt(built.value), built.data, { router: d.pins.router, wallet, feeRecipient: d.pins.feeRecipient, weth: d.pins.tokens.WETH?.address ?? zeroAddress, permit: true });
  if (reading.failures.length) throw new PitError("VERIFICATION_FAILED", `the client's own fast call reads wrong: ${reading.failures[0]!.message}`, { rule: "RECIPIENT" });

  const gas = BigInt(Math.min((permit ? pair.gas_floor_permit : pair.gas_floor) + GAS_MARGIN, terms.limits.max_gas));
  const baseFee = BigInt(terms.base_fee_wei);
  const maxFeePerGas = [baseFee * 2n + 1n, BigInt(terms.limits.max_cost_wei) / gas].reduce((a, b) => (a < b ? a : b));
  const maxPriorityFeePerGas = maxFeePerGas - baseFee > 1n ? 1n : 0n;
  const [nonce, balance] = await Promise.all([d.chain.getTransactionCount({ address: wallet, blockTag: "pending" }), d.chain.getBalance({ address: wallet })]);
  if (balance < BigInt(built.value) + gas * maxFeePerGas) throw new PitError("INSUFFICIENT_FUNDS", `the wallet holds ${balance} wei; the trade needs ${built.value} plus up to ${gas * maxFeePerGas} for gas`);
  const raw = await d.account.signTransaction({ chainId: d.pins.chainId, to: d.pins.router, data: built.data, value: BigInt(built.value), nonce, gas, maxFeePerGas, maxPriorityFeePerGas, type: "eip1559" });
  signedWith(nonce);
  const hash = keccak256(raw);
  const body = {
    raw_tx: raw,
    token_in: pair.token_in,
    token_out: pair.token_out,
    amount_in: sizing.amountIn.toString(),
    min_out: minOut.toString(),
    deadline,
    fee_bps: terms.fee.bps,
    shield: q.shield ?? false,
    amount_usd: Math.round(sizing.usd * 100) / 100,
    ...(q.maxNotionalUsd !== undefined ? { max_notional_usd: q.maxNotionalUsd } : {}),
    ...(permit ? { permit: { amount: permit.permit.details.amount.toString(), expiration: permit.permit.details.expiration, nonce: permit.permit.details.nonce, sig_deadline: Number(permit.permit.sigDeadline), signature: permit.signature } } : {}),
    ...(q.ownerAttestsNonUs ? { owner_attests_non_us: true } : {}),
  };
  const sent = await d.http.post<{ tx_hash: string }>("/live/fast", body);
  if (sent.tx_hash?.toLowerCase() !== hash) throw new PitError("HASH_MISMATCH", `the server answered ${sent.tx_hash}; the signed transaction is ${hash}`);
  return minedOutcome(d, { hash, raw, reading, tokenIn: q.tokenIn, tokenOut: q.tokenOut, value: BigInt(built.value) });
}

/** CONFIG_MISMATCH unless the terms are the pinned table's, fee recipient's and schedule's. */
function checkTerms(t: Terms, pins: Pins, sha256: Hex, shield: boolean) {
  if (!t.enabled) throw new PitError("FAST_DISABLED", "fast mode is off on this server", { status: 403 });
  if (t.routes.sha256 !== sha256) throw reason("CONFIG_MISMATCH", `the server's route table is ${t.routes.sha256}, not the pinned ${sha256}`);
  if (t.fee.recipient.toLowerCase() !== pins.feeRecipient.toLowerCase()) throw reason("CONFIG_MISMATCH", `the terms pay fees to ${t.fee.recipient}, not the pinned ${pins.feeRecipient}`);
  const add = shield ? pins.fee.shieldAddBps : 0;
  if (t.fee.bps < pins.fee.majorMinBps + add || t.fee.bps > Math.min(pins.fee.majorMaxBps + add, pins.fee.maxBps)) throw reason("CONFIG_MISMATCH", `the terms charge ${t.fee.bps} bps; the pinned major schedule is ${pins.fee.majorMinBps + add}-${pins.fee.majorMaxBps + add}`);
}

/** STALE: both sides need a fresh own mark; MARKS_DIFFER: each within MARKS_DIFFER_BPS of the server's. */
async function ownMarks(d: FastDeps, q: TradeRequest, t: Terms, nowS: number, server: Record<string, number>) {
  const [mIn, mOut] = await Promise.all([ownMark(d.chain, d.pins, q.tokenIn, nowS), ownMark(d.chain, d.pins, q.tokenOut, nowS)]);
  for (const [sym, m] of [[q.tokenIn, mIn], [q.tokenOut, mOut]] as const) {
    if (!m || m.ageS > t.mark_max_age_s) throw reason("STALE", `${sym} has no fresh mark of the client's own (${m ? `${m.ageS} s old` : "none"})`);
    const theirs = server[sym];
    if (theirs === undefined || Math.abs(theirs - m.usd) > (m.usd * MARKS_DIFFER_BPS) / 10_000) throw reason("MARKS_DIFFER", `${sym} is $${m.usd} by the client's marks and ${theirs === undefined ? "unmarked" : `$${theirs}`} by the server's`);
  }
  return { in: mIn!, out: mOut! };
}

/** The amount in (asked, or the notional at the client's own mark) and its worth; ROUTE_CAP over the pair's or the server's cap. */
function sizeOf(pins: Pins, q: TradeRequest, marks: { in: OwnMark }, pair: FastPair, t: Terms) {
  const decimals = pins.tokens[q.tokenIn]!.decimals;
  const amountIn = q.amountIn ?? BigInt(Math.floor(((q.notionalUsd ?? 0) / marks.in.usd) * 10 ** decimals));
  const usd = (Number(amountIn) / 10 ** decimals) * marks.in.usd;
  const cap = Math.min(pair.max_usd, t.max_notional_usd);
  if (usd > cap) throw reason("ROUTE_CAP", `$${usd.toFixed(2)} is over the pinned route's cap of $${cap}`);
  return { amountIn, usd };
}

/** What the pinned pools give the wallet now, by the client's own quotes, after the fee. */
async function pinnedQuote(d: FastDeps, pair: FastPair, amountIn: bigint, fee: { side: "input" | "output"; amount: bigint; bps: number }): Promise<bigint> {
  let amount = amountIn - fee.amount;
  for (const h of fastPairHops(pair)) amount = await quoteExactInputSingle(d.chain, d.pins.v4Quoter, h.key, h.zeroForOne, amount);
  return fee.side === "output" ? amount - bpsOf(amount, fee.bps) : amount;
}

/** POOL_FAR: the pinned pools deliver further under the client's marks than their fees, ours and the pair's band. */
function checkPoolFar(pins: Pins, q: TradeRequest, pair: FastPair, sizing: { usd: number }, out: bigint, marks: { out: OwnMark }, feeBps: number) {
  const outUsd = (Number(out) / 10 ** pins.tokens[q.tokenOut]!.decimals) * marks.out.usd;
  const allowed = pair.hops.reduce((s, h) => s + h.fee / 100, 0) + feeBps + pair.band_bps;
  if (outUsd < sizing.usd * (1 - allowed / 10_000)) throw reason("POOL_FAR", `$${sizing.usd.toFixed(2)} in brings $${outUsd.toFixed(2)} out of the pinned pools: further under the marks than ${allowed} bps`);
}

/** The permit for exactly this trade's input, to the pinned router, for as long as the terms allow. */
async function signPermit(d: FastDeps, pair: FastPair, amountIn: bigint, nowS: number, t: Terms): Promise<{ permit: PermitSingle; signature: Hex }> {
  const [, , nonce] = await d.chain.readContract({ address: d.pins.permit2, abi: permit2Abi, functionName: "allowance", args: [d.account.address, pair.address_in as Address, d.pins.router] });
  const until = nowS + Math.min(600, t.limits.permit_expiry_s);
  const permit: PermitSingle = { details: { token: pair.address_in, amount: amountIn, expiration: until, nonce: Number(nonce) }, spender: d.pins.router, sigDeadline: BigInt(until) };
  return { permit, signature: await d.account.signTypedData(permitTypedData(d.pins.chainId, d.pins.permit2, permit)) };
}
