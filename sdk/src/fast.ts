import { erc20Abi, keccak256, zeroAddress, type Address, type Hex, type LocalAccount, type PublicClient } from "viem";
import { permit2Abi } from "../../abis/permit2.js";
import { bpsOf } from "../../lib/fees.js";
import { fastPairHops, fastPairOf, type FastPair } from "../../lib/fastRoutes.js";
import { readRouterCall, type RouterReading } from "../../lib/router/read.js";
import { buildRouterSwap, permitTypedData, type FeeSpec, type PermitSingle } from "../../lib/router/swap.js";
import { PitError, type ErrorCode } from "./errors.js";
import { checkTable } from "./fastTable.js";
import type { Http } from "./http.js";
import { MARK_MAX_AGE_S, ownMark, serverMarks, type OwnMark } from "./marks.js";
import { withPinnedSymbols, type Pins } from "./pins.js";
import { quoteHops } from "./quote.js";
import { minedOutcome, type TradeRequest, type TradeResult } from "./trade.js";

/**
 * Fast mode (SPEC "POST /api/v1/live/fast"): the client builds the swap itself from its pinned
 * route table, signs it, and the server relays only a byte-for-byte rebuild. Every reason the
 * client gives fast mode up is SPEC's (FAST_PAIR, STALE, APPROVAL, POOL_FAR, ROUTE_CAP,
 * MARKS_DIFFER, COOLDOWN, CONFIG_MISMATCH, or the server's refusal); with `fallback` (the default)
 * the trade then goes the prepared way, at the fast transaction's nonce so at most one of the two
 * is ever mined. Tolerances are SPEC's constants, never numbers the server sends.
 */
export type FastRequest = TradeRequest & { fallback?: boolean; maxNotionalUsd?: number };
export type FastResult = TradeResult & { path: "fast" | "fallback"; reason: string | null };

/** SPEC "Limits": marks more than this far from the server's are not the same market. */
export const MARKS_DIFFER_BPS = 300;
/** After the server refused a fast trade, the pair goes the prepared way this long. */
export const COOLDOWN_MS = 60_000;
/** SDKs sign a fast deadline this far ahead (SPEC: at most 60 s; SDKs use 30). */
const DEADLINE_S = 30;
/** The permit outlives the deadline by this much (the server wants its sig_deadline at or after the deadline). */
const PERMIT_SLACK_S = 60;
/** Gas above the pair's floor, for the chain's own variance. */
const GAS_MARGIN = 60_000;
/** SPEC "Limits", fast mode: gas limit, maxFeePerGas against the base fee, and the most a transaction may cost. */
const FAST_GAS = { max: 1_000_000n, feeMultiple: 10n, maxCostWei: 200_000_000_000_000n } as const;
/**
 * Codes a relay may have reached the sequencer under: the signed bytes may still land, so nothing else
 * is signed for the trade.
 */
const AFTER_RELAY = new Set(["NONCE", "SUBMIT_REJECTED", "SEQUENCER_UNREACHABLE", "IN_FLIGHT"]);

type Terms = { enabled: boolean; routes: { sha256: Hex }; fee: { bps: number; recipient: string } };

/** A reason to leave fast mode, SPEC's code first; nothing signed went anywhere. */
class FastReason extends PitError {}
const reason = (code: ErrorCode, message: string) => new FastReason(code, message);

/** What was signed: enough to find it on chain and check what it did. */
type Signed = {
  hash: Hex;
  raw: Hex;
  nonce: number;
  deadline: number;
  reading: RouterReading;
  tokenIn: string;
  tokenOut: string;
  value: bigint;
};

export type FastDeps = {
  http: Http;
  chain: PublicClient;
  account: LocalAccount;
  pins: Pins;
  cooldown: Map<string, number>;
  now: () => number;
  fallback: (q: TradeRequest, nonce: number | undefined) => Promise<TradeResult>;
};

/** A fast trade, or the prepared way with the reason fast mode was left (fallback off: that reason thrown). */
export async function fastTrade(d: FastDeps, q: FastRequest): Promise<FastResult> {
  q = withPinnedSymbols(d.pins, q);
  let signed: Signed | null = null;
  try {
    const r = await fastAttempt(d, q, (s) => (signed = s));
    return { ...r, path: "fast", reason: null };
  } catch (caught) {
    const s = signed as Signed | null;
    if (caught instanceof FastReason) return fallBack(d, q, caught, null);
    if (!s) throw caught;
    // Past this point the bytes are signed: nothing else is signed until the chain shows them or their nonce taken.
    const err =
      caught instanceof PitError
        ? caught
        : new PitError(
            "NO_ANSWER",
            `after signing: ${(caught as Error).message?.split("\n")[0]}`,
            {},
            { cause: caught },
          );
    if (beforeRelay(err)) {
      d.cooldown.set(`${s.tokenIn}>${s.tokenOut}`, d.now() + COOLDOWN_MS);
      return fallBack(d, q, err, s);
    }
    if (err.code === "TX_REVERTED" || err.code === "MINED_MISMATCH") throw withSigned(err, s, true);
    // The server answered another hash: its word is not trusted, and its bytes are not sent by the client.
    const seen = await awaitSigned(d, s, err.code !== "HASH_MISMATCH");
    if (seen.mined && err.code !== "HASH_MISMATCH")
      return { ...(await minedOutcome(d, s)), path: "fast", reason: err.code };
    throw withSigned(err, s, seen.mined ? true : seen.landed);
  }
}

/** A server refusal answered before anything was relayed (SPEC: every code but the four that may follow a relay). */
const beforeRelay = (err: PitError) =>
  err.detail.status !== undefined &&
  (err.detail.status < 500 || err.detail.status === 503) &&
  !AFTER_RELAY.has(err.code) &&
  err.code !== "HASH_MISMATCH";

/**
 * The prepared way at the fast transaction's nonce (at most one of the two is ever mined). When
 * it fails, or fallback is off, the refused fast bytes are waited for past their deadline: a
 * server may refuse them and relay them all the same, and then they are the trade.
 */
async function fallBack(d: FastDeps, q: FastRequest, why: PitError, s: Signed | null): Promise<FastResult> {
  let err: unknown = why;
  if (q.fallback !== false) {
    try {
      return { ...(await d.fallback(q, s?.nonce)), path: "fallback", reason: why.code };
    } catch (fallbackErr) {
      err = fallbackErr;
    }
  }
  if (!s) throw err;
  const seen = await awaitSigned(d, s, false);
  if (seen.mined) return { ...(await minedOutcome(d, s)), path: "fast", reason: why.code };
  throw err instanceof PitError ? withSigned(err, s, seen.landed) : err;
}

/**
 * Waits for the signed bytes (sent on the client's own RPC too when `broadcast`) until their
 * deadline has passed: after it, the router refuses them. Mined: true. Otherwise whether they can
 * never land (their nonce taken by another transaction) or it cannot yet be said (null).
 */
async function awaitSigned(
  d: FastDeps,
  s: Signed,
  broadcast: boolean,
): Promise<{ mined: boolean; landed: boolean | null }> {
  if (broadcast) await d.chain.sendRawTransaction({ serializedTransaction: s.raw }).catch(() => undefined);
  const head = Number((await d.chain.getBlock().catch(() => null))?.timestamp ?? Math.floor(d.now() / 1000));
  const waitMs = Math.min(Math.max(5, s.deadline - head + 15), 120) * 1000;
  const own = (r: { transactionHash: Hex } | null) => r !== null && r.transactionHash.toLowerCase() === s.hash;
  const receipt = await d.chain
    .waitForTransactionReceipt({ hash: s.hash, timeout: waitMs, checkReplacement: false })
    .catch(() => null);
  if (own(receipt) || own(await d.chain.getTransactionReceipt({ hash: s.hash }).catch(() => null)))
    return { mined: true, landed: true };
  const taken = (await d.chain.getTransactionCount({ address: d.account.address }).catch(() => 0)) > s.nonce;
  return { mined: false, landed: taken ? false : null };
}

/** The error with what the caller needs to follow the signed bytes (landed: false when they never can). */
const withSigned = (err: PitError, s: Signed, landed: boolean | null) =>
  new PitError(
    err.code,
    err.message,
    { ...err.detail, signed: { hash: s.hash, nonce: s.nonce, landed } },
    { cause: err },
  );

async function fastAttempt(d: FastDeps, q: FastRequest, signedWith: (s: Signed) => void): Promise<TradeResult> {
  return sendFast(d, q, await fastPlan(d, q), signedWith);
}

type FastPlan = {
  pair: FastPair;
  terms: Terms;
  baseFee: bigint;
  sizing: { amountIn: bigint; usd: number };
  minOut: bigint;
  deadline: number;
  permit: { permit: PermitSingle; signature: Hex } | null;
  built: ReturnType<typeof buildRouterSwap>;
  reading: RouterReading;
};

/**
 * Every reason to leave fast mode checked, then the swap built from the pinned pair and read back;
 * only the permit signed.
 */
async function fastPlan(d: FastDeps, q: FastRequest): Promise<FastPlan> {
  const { pinned, pair } = pinnedPair(d, q);
  // The pending block's time is the next block's (a quiet chain's latest block can be long past); its base fee too.
  const nextBlock = () => d.chain.getBlock({ blockTag: "pending" }).catch(() => d.chain.getBlock());
  const [terms, block, server] = await Promise.all([
    d.http.get<Terms>(`/live/fast/terms${q.shield ? "?shield=1" : ""}`),
    nextBlock(),
    serverMarks(d.http).catch(() => null),
  ]);
  checkTerms(terms, d.pins, pinned.sha256, q.shield ?? false);
  const nowS = Number(block.timestamp);
  const marks = await ownMarks(d, pair, nowS, server);
  const sizing = sizeOf(d.pins, q, marks, pair);
  const ethIn = pair.address_in === zeroAddress;
  if (!ethIn) await checkApproval(d, pair, sizing.amountIn);
  const fee = {
    side: pair.fee_side,
    bps: terms.fee.bps,
    recipient: d.pins.feeRecipient,
    amount: pair.fee_side === "input" ? bpsOf(sizing.amountIn, terms.fee.bps) : 0n,
  };
  const out = await pinnedQuote(d, pair, sizing.amountIn, fee).catch((err) => {
    throw reason("POOL_FAR", `the pinned pools cannot be quoted: ${(err as Error).message.split("\n")[0]}`);
  });
  checkPoolFar(d.pins, pair, sizing, out, marks, terms.fee.bps);
  const minOut = (out * BigInt(10_000 - (q.slippageBps ?? 50))) / 10_000n;
  const deadline = nowS + DEADLINE_S;
  const permit = ethIn ? null : await signPermit(d, pair, sizing.amountIn, deadline + PERMIT_SLACK_S);
  const { built, reading } = buildAndRead(d, pair, { amountIn: sizing.amountIn, minOut, fee, deadline, permit });
  return { pair, terms, baseFee: block.baseFeePerGas ?? 0n, sizing, minOut, deadline, permit, built, reading };
}

/** The pinned route table (checked as when it was read) and its pair for the trade, unless the pair rests. */
function pinnedPair(d: FastDeps, q: FastRequest) {
  const pinned = d.pins.fastRoutes;
  if (!pinned) throw reason("CONFIG_MISMATCH", "no fast route table is pinned (pinFastRoutes)");
  // A table kept with the pins is checked as when it was read: an edit under the old SHA-256 shows here.
  try {
    checkTable(pinned.table, pinned.sha256, d.pins);
  } catch (err) {
    throw reason("CONFIG_MISMATCH", (err as Error).message);
  }
  const pair = fastPairOf(pinned.table, q.tokenIn, q.tokenOut);
  if (!pair) throw reason("FAST_PAIR", `no pinned route for ${q.tokenIn} -> ${q.tokenOut}`);
  const until = d.cooldown.get(`${pair.token_in}>${pair.token_out}`);
  if (until !== undefined && d.now() < until)
    throw reason(
      "COOLDOWN",
      `the server refused a fast ${pair.token_in} -> ${pair.token_out} trade; ` +
        `fast mode rests until ${new Date(until).toISOString()}`,
    );
  return { pinned, pair };
}

/** APPROVAL unless the wallet's input token is approved to Permit2 for the amount in (fast mode signs no approve). */
async function checkApproval(d: FastDeps, pair: FastPair, amountIn: bigint) {
  const allowance = await d.chain.readContract({
    address: pair.address_in,
    abi: erc20Abi,
    functionName: "allowance",
    args: [d.account.address, d.pins.permit2],
  });
  if (allowance < amountIn)
    throw reason(
      "APPROVAL",
      `the wallet's ${pair.token_in} is not approved to Permit2 for ${amountIn}; ` +
        "fast mode carries a permit, never an approve",
    );
}

/**
 * The swap built from the pinned pair, and read back as the co-signer's reader reads it
 * (VERIFICATION_FAILED if wrong).
 */
function buildAndRead(
  d: FastDeps,
  pair: FastPair,
  s: {
    amountIn: bigint;
    minOut: bigint;
    fee: FeeSpec;
    deadline: number;
    permit: { permit: PermitSingle; signature: Hex } | null;
  },
) {
  const weth = d.pins.tokens.WETH?.address ?? zeroAddress;
  const built = buildRouterSwap({
    chainId: d.pins.chainId,
    router: d.pins.router,
    route: { hops: fastPairHops(pair) },
    tokenIn: pair.address_in,
    tokenOut: pair.address_out,
    weth,
    amountIn: s.amountIn,
    amountOutMin: s.minOut,
    fee: s.fee,
    deadline: s.deadline,
    permit: s.permit,
  });
  const reading = readRouterCall(built.to, BigInt(built.value), built.data, {
    router: d.pins.router,
    wallet: d.account.address,
    feeRecipient: d.pins.feeRecipient,
    weth,
    permit: true,
  });
  if (reading.failures.length)
    throw new PitError(
      "VERIFICATION_FAILED",
      `the client's own fast call reads wrong: ${reading.failures[0]!.message}`,
      { rule: "RECIPIENT" },
    );
  return { built, reading };
}

/**
 * Gas within SPEC's bounds, INSUFFICIENT_FUNDS, the signature, live/fast, the answered hash and the
 * receipt checked.
 */
async function sendFast(
  d: FastDeps,
  q: FastRequest,
  f: FastPlan,
  signedWith: (s: Signed) => void,
): Promise<TradeResult> {
  const { pair, terms, baseFee, sizing, minOut, deadline, permit, built, reading } = f;
  const wallet = d.account.address;
  const gas = BigInt((permit ? pair.gas_floor_permit : pair.gas_floor) + GAS_MARGIN);
  const maxFeePerGas = [baseFee * 2n + 1n, baseFee * FAST_GAS.feeMultiple, FAST_GAS.maxCostWei / gas].reduce((a, b) =>
    a < b ? a : b,
  );
  if (gas > FAST_GAS.max || maxFeePerGas < baseFee)
    throw reason("ROUTE_CAP", `the pinned route needs ${gas} gas at ${baseFee} wei: over fast mode's gas bounds`);
  const maxPriorityFeePerGas = maxFeePerGas - baseFee > 1n ? 1n : 0n;
  const [nonce, balance] = await Promise.all([
    d.chain.getTransactionCount({ address: wallet, blockTag: "pending" }),
    d.chain.getBalance({ address: wallet }),
  ]);
  if (balance < BigInt(built.value) + gas * maxFeePerGas)
    throw new PitError(
      "INSUFFICIENT_FUNDS",
      `the wallet holds ${balance} wei; the trade needs ${built.value} plus up to ${gas * maxFeePerGas} for gas`,
    );
  const raw = await d.account.signTransaction({
    chainId: d.pins.chainId,
    to: d.pins.router,
    data: built.data,
    value: BigInt(built.value),
    nonce,
    gas,
    maxFeePerGas,
    maxPriorityFeePerGas,
    type: "eip1559",
  });
  const signed: Signed = {
    hash: keccak256(raw),
    raw,
    nonce,
    deadline,
    reading,
    tokenIn: pair.token_in,
    tokenOut: pair.token_out,
    value: BigInt(built.value),
  };
  signedWith(signed);
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
    ...(permit
      ? {
          permit: {
            amount: permit.permit.details.amount.toString(),
            expiration: permit.permit.details.expiration,
            nonce: permit.permit.details.nonce,
            sig_deadline: Number(permit.permit.sigDeadline),
            signature: permit.signature,
          },
        }
      : {}),
    ...(q.ownerAttestsNonUs ? { owner_attests_non_us: true } : {}),
  };
  const sent = await d.http.post<{ tx_hash?: unknown } | null>("/live/fast", body);
  if (typeof sent?.tx_hash !== "string" || sent.tx_hash.toLowerCase() !== signed.hash)
    throw new PitError(
      "HASH_MISMATCH",
      `the server answered ${String(sent?.tx_hash)}; the signed transaction is ${signed.hash}`,
    );
  return minedOutcome(d, signed);
}

/**
 * CONFIG_MISMATCH unless the terms name the pinned table, fee recipient and schedule (the server's
 * refusal when fast mode is off).
 */
function checkTerms(t: Terms | null, pins: Pins, sha256: Hex, shield: boolean) {
  if (
    !t ||
    typeof t !== "object" ||
    typeof t.routes?.sha256 !== "string" ||
    typeof t.fee?.recipient !== "string" ||
    !Number.isInteger(t.fee?.bps)
  )
    throw reason("CONFIG_MISMATCH", "the fast terms are not in the disclosed shape");
  if (t.enabled !== true) throw reason("FAST_DISABLED", "fast mode is off on this server");
  if (t.routes.sha256 !== sha256)
    throw reason("CONFIG_MISMATCH", `the server's route table is ${t.routes.sha256}, not the pinned ${sha256}`);
  if (t.fee.recipient.toLowerCase() !== pins.feeRecipient.toLowerCase())
    throw reason("CONFIG_MISMATCH", `the terms pay fees to ${t.fee.recipient}, not the pinned ${pins.feeRecipient}`);
  const add = shield ? pins.fee.shieldAddBps : 0;
  if (t.fee.bps < pins.fee.majorMinBps + add || t.fee.bps > Math.min(pins.fee.majorMaxBps + add, pins.fee.maxBps))
    throw reason(
      "CONFIG_MISMATCH",
      `the terms charge ${t.fee.bps} bps; ` +
        `the pinned major schedule is ${pins.fee.majorMinBps + add}-${pins.fee.majorMaxBps + add}`,
    );
}

/** STALE: both sides need a fresh own mark; MARKS_DIFFER: each within MARKS_DIFFER_BPS of the server's. */
async function ownMarks(d: FastDeps, pair: FastPair, nowS: number, server: Record<string, number> | null) {
  const [mIn, mOut] = await Promise.all([
    ownMark(d.chain, d.pins, pair.token_in, nowS),
    ownMark(d.chain, d.pins, pair.token_out, nowS),
  ]);
  for (const [sym, m] of [
    [pair.token_in, mIn],
    [pair.token_out, mOut],
  ] as const) {
    if (!m || m.ageS > MARK_MAX_AGE_S)
      throw reason("STALE", `${sym} has no fresh mark of the client's own (${m ? `${m.ageS} s old` : "none"})`);
    const theirs = server?.[sym];
    if (theirs === undefined || Math.abs(theirs - m.usd) > (m.usd * MARKS_DIFFER_BPS) / 10_000)
      throw reason(
        "MARKS_DIFFER",
        `${sym} is $${m.usd} by the client's marks and ` +
          `${theirs === undefined ? "unmarked" : `$${theirs}`} by the server's`,
      );
  }
  return { in: mIn!, out: mOut! };
}

/**
 * The amount in (asked, or the notional at the client's own mark) and its worth; ROUTE_CAP over the
 * pinned cap, CLIENT_CAP over the caller's.
 */
function sizeOf(pins: Pins, q: FastRequest, marks: { in: OwnMark }, pair: FastPair) {
  const decimals = pins.tokens[pair.token_in]!.decimals;
  const amountIn = q.amountIn ?? BigInt(Math.floor(((q.notionalUsd ?? 0) / marks.in.usd) * 10 ** decimals));
  const usd = (Number(amountIn) / 10 ** decimals) * marks.in.usd;
  if (amountIn <= 0n) throw reason("ROUTE_CAP", "nothing to trade");
  if (usd > pair.max_usd)
    throw reason("ROUTE_CAP", `$${usd.toFixed(2)} is over the pinned route's cap of $${pair.max_usd}`);
  if (q.maxNotionalUsd !== undefined && usd > q.maxNotionalUsd)
    throw new PitError("CLIENT_CAP", `$${usd.toFixed(2)} is over the caller's cap of $${q.maxNotionalUsd}`);
  return { amountIn, usd };
}

/** What the pinned pools give the wallet now, by the client's own quotes, after the fee. */
async function pinnedQuote(
  d: FastDeps,
  pair: FastPair,
  amountIn: bigint,
  fee: { side: "input" | "output"; amount: bigint; bps: number },
): Promise<bigint> {
  const hops = fastPairHops(pair).map((h) => ({ poolKey: h.key, zeroForOne: h.zeroForOne }));
  const amount = await quoteHops(d.chain, d.pins.v4Quoter, hops, amountIn - fee.amount);
  return fee.side === "output" ? amount - bpsOf(amount, fee.bps) : amount;
}

/**
 * POOL_FAR: the pinned pools deliver further under the client's marks than their fees, ours and SPEC's
 * band (checked when pinned).
 */
function checkPoolFar(
  pins: Pins,
  pair: FastPair,
  sizing: { usd: number },
  out: bigint,
  marks: { out: OwnMark },
  feeBps: number,
) {
  const outUsd = (Number(out) / 10 ** pins.tokens[pair.token_out]!.decimals) * marks.out.usd;
  const allowed = pair.hops.reduce((s, h) => s + h.fee / 100, 0) + feeBps + pair.band_bps;
  if (outUsd < sizing.usd * (1 - allowed / 10_000))
    throw reason(
      "POOL_FAR",
      `$${sizing.usd.toFixed(2)} in brings $${outUsd.toFixed(2)} out of the pinned pools: ` +
        `further under the marks than ${allowed} bps`,
    );
}

/** The permit for exactly this trade's input, to the pinned router, until just after the deadline. */
async function signPermit(
  d: FastDeps,
  pair: FastPair,
  amountIn: bigint,
  until: number,
): Promise<{ permit: PermitSingle; signature: Hex }> {
  const [, , nonce] = await d.chain.readContract({
    address: d.pins.permit2,
    abi: permit2Abi,
    functionName: "allowance",
    args: [d.account.address, pair.address_in as Address, d.pins.router],
  });
  const permit: PermitSingle = {
    details: { token: pair.address_in, amount: amountIn, expiration: until, nonce: Number(nonce) },
    spender: d.pins.router,
    sigDeadline: BigInt(until),
  };
  return { permit, signature: await d.account.signTypedData(permitTypedData(d.pins.chainId, d.pins.permit2, permit)) };
}
