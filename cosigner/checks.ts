import type { Address } from "viem";
import { bpsOf, type FeeClass } from "../lib/fees.js";
import { readFeeBps, type RouterReading } from "../lib/router/read.js";
import { allowedFeeBps, EXPIRY_MARGIN_S, type SessionBinding } from "../lib/sessionBinding.js";

/**
 * The co-signer's rules over one execution, pure: given its own reading of the router call, the
 * binding the wallet signed (through the root's salt), its own marks and the wallet's counters,
 * every rule that fails. Names are SPEC's ("Co-signer refusals" and "Errors: Sessions").
 */
export type Check = { rule: string; ok: boolean; message: string };

/** Worst slippage a session trade may accept (the trade table's widest band, up to $1,000). */
export const MAX_SLIPPAGE_BPS = 500;
/** How far a pool may sit from the co-signer's oracle marks on top of slippage and fee. */
export const PRICE_TOLERANCE_BPS = 300;

/**
 * USD per whole token of each side; `signed*` when the side is priced at the binding's owner-signed
 * mark (a feedless token).
 */
export type Marks = {
  usdIn: number | null;
  usdOut: number | null;
  decimalsIn: number;
  decimalsOut: number;
  signedIn?: boolean;
  signedOut?: boolean;
};
export type Counters = { tradesUsed: number; last24hUsd: number };

export type CheckInput = {
  binding: SessionBinding;
  reading: RouterReading;
  marks: Marks;
  counters: Counters;
  now: number;
  /** The chain's time when it runs ahead of ours (router deadlines are the chain's); default `now`. */
  chainNow?: number;
  feeClassOf(token: Address): FeeClass | null;
  declaredFeeBps: number;
  /** The output the API quoted: the minimum may sit at most MAX_SLIPPAGE_BPS under it (SLIPPAGE). */
  declaredExpectedOut?: bigint;
};

export type CheckResult = { checks: Check[]; notionalUsd: number | null };

type Add = (rule: string, ok: boolean, message: string) => void;

export function checkExecution(x: CheckInput): CheckResult {
  const checks: Check[] = [];
  const add: Add = (rule, ok, message) => checks.push({ rule, ok, message });
  const { binding: b, reading: r } = x;

  add("SESSION_EXPIRY", b.expires - x.now > EXPIRY_MARGIN_S, `the session ends at ${b.expires}`);
  for (const f of r.failures) add(f.rule, false, f.message);
  if (!r.failures.some((f) => f.rule === "SESSION_TARGET")) add("SESSION_TARGET", true, "the router's execute");
  const chainNow = x.chainNow ?? x.now;
  if (r.deadline !== null)
    add("DEADLINE", Number(r.deadline) <= chainNow + 600 && Number(r.deadline) > chainNow, `deadline ${r.deadline}`);
  if (r.tokenIn === null || r.tokenOut === null) return { checks, notionalUsd: null };

  const inSession = (t: Address) => b.tokens.includes(t.toLowerCase());
  add("SESSION_TOKENS", inSession(r.tokenIn) && inSession(r.tokenOut), `${r.tokenIn} -> ${r.tokenOut}`);
  const paid = checkFee(x, add, r.tokenIn, r.tokenOut);
  const notional = checkPrice(x, add, paid);
  if (notional === null) return { checks, notionalUsd: null };
  checkLimits(x, add, notional);
  return { checks, notionalUsd: notional };
}

/** Fee: read from the calldata, classed from the two tokens by the co-signer itself; answers the bps paid. */
function checkFee(x: CheckInput, add: Add, tokenIn: Address, tokenOut: Address): number | null {
  const classIn = x.feeClassOf(tokenIn);
  const classOut = x.feeClassOf(tokenOut);
  const feeClass: FeeClass | null =
    classIn === null || classOut === null ? null : classIn === "major" && classOut === "major" ? "major" : "other";
  add(
    "FEE_CLASS",
    feeClass !== null,
    feeClass ? `class ${feeClass}` : "a token's fee class is unknown to the co-signer",
  );
  const paid = readFeeBps(x.reading);
  add(
    "FEE_REQUIRED",
    paid !== null,
    paid !== null ? `pays ${paid} bps` : "the call pays no single fee to the fee recipient",
  );
  if (feeClass !== null && paid !== null) {
    const allowed = allowedFeeBps(x.binding, feeClass);
    add(
      "SESSION_FEE",
      allowed.includes(paid),
      `${paid} bps; the binding allows ${allowed.join(" or ")} for ${feeClass}`,
    );
    add("FEE_DECLARED", paid === x.declaredFeeBps, `declared ${x.declaredFeeBps} bps, the calldata pays ${paid}`);
  }
  return paid;
}

/**
 * Price at the co-signer's own marks: what the minimum is worth against what goes in (and against
 * the API's quote). Answers the trade's notional in USD, or null without a mark for a side.
 */
function checkPrice(x: CheckInput, add: Add, paid: number | null): number | null {
  const r = x.reading;
  const { usdIn, usdOut } = x.marks;
  if (usdIn === null || usdOut === null) {
    add("PRICE_UNAVAILABLE", false, "no fresh oracle mark for a side of the trade");
    return null;
  }
  const notional = (Number(r.amountIn) / 10 ** x.marks.decimalsIn) * usdIn;
  const floorUsd = (Number(r.minOut) / 10 ** x.marks.decimalsOut) * usdOut;
  const allowedLossBps = (paid ?? 0) + MAX_SLIPPAGE_BPS + PRICE_TOLERANCE_BPS;
  // A feedless side is judged at the mark its owner signed, not at a pool that can be moved now.
  const priceRule = x.marks.signedIn || x.marks.signedOut ? "SIGNED_MARK_PRICE" : "PRICE";
  add(
    priceRule,
    floorUsd >= (notional * (10_000 - allowedLossBps)) / 10_000,
    `minimum worth $${floorUsd.toFixed(2)} for $${notional.toFixed(2)} in (at most ${allowedLossBps} bps under)`,
  );
  if (x.declaredExpectedOut !== undefined) {
    const floor = bpsOf(x.declaredExpectedOut, 10_000 - MAX_SLIPPAGE_BPS);
    add(
      "SLIPPAGE",
      r.minOut >= floor && x.declaredExpectedOut > 0n,
      `minimum ${r.minOut} against ${x.declaredExpectedOut} quoted (at most ${MAX_SLIPPAGE_BPS} bps under)`,
    );
  }
  return notional;
}

/** Limits: per trade, trades left, and 24 h across the wallet's sessions (counted sent or not). */
function checkLimits(x: CheckInput, add: Add, notional: number): void {
  const b = x.binding;
  add(
    "SESSION_MAX_TRADE",
    notional <= b.limits.max_trade_usd,
    `$${notional.toFixed(2)} against $${b.limits.max_trade_usd} per trade`,
  );
  add(
    "SESSION_TRADES_LEFT",
    x.counters.tradesUsed < b.limits.max_trades,
    `${x.counters.tradesUsed} of ${b.limits.max_trades} trades used`,
  );
  add(
    "SESSION_MAX_DAY",
    x.counters.last24hUsd + notional <= b.limits.max_day_usd,
    `$${x.counters.last24hUsd.toFixed(2)} in 24 h plus $${notional.toFixed(2)} against $${b.limits.max_day_usd}`,
  );
}
