import { getAddress, type Address } from "viem";
import { Refusal } from "../api/errors/index.js";
import { markStale } from "../lib/markStale.js";
import { bindingHash, type SessionBinding, type SignedMark } from "../lib/sessionBinding.js";
import type { Check, CheckResult, Marks } from "./checks.js";
import type { CosignerPins } from "./pins.js";

/**
 * The gates of one co-signing around checkExecution, as pure rules: each takes what the closure
 * read (the stored root, the sanctions list, the checks) and answers null (go on) or the Refusal
 * to answer. The closure in cosigner.ts holds the state, does the reads and writes, and throws.
 */

/** Rules that are session limits with their own SPEC code; any other failure answers REFUSED. */
export const SESSION_CODES = new Set([
  "SESSION_ROOT_ALLOWS",
  "SESSION_EXPIRY",
  "SESSION_TOKENS",
  "SESSION_MAX_TRADE",
  "SESSION_MAX_DAY",
  "SESSION_TRADES_LEFT",
  "SESSION_TARGET",
  "SESSION_RECIPIENTS",
  "SESSION_EXECUTION",
]);

/** A revoked session signs nothing more (read before the trade and again under the wallet's lock). */
export function revokedRefusal(revokedAt: string | null): Refusal | null {
  return revokedAt !== null
    ? new Refusal("SESSION_REVOKED", "the session was revoked; the co-signer signs nothing more for it")
    : null;
}

/** Only a root the co-signer holds, and has not revoked, is co-signed under. */
export function heldRefusal(held: { revoked_at: string | null } | undefined): Refusal | null {
  if (!held)
    return new Refusal("REFUSED", "the co-signer holds no such root", {
      signer_checks: [{ rule: "TRADE_REFUSED", ok: false, message: "unknown root" }],
    });
  return revokedRefusal(held.revoked_at);
}

/**
 * The stored binding must still hash to the signed root's salt (else its limits are not the wallet's),
 * and the session must not have ended.
 */
export function boundRefusal(binding: SessionBinding, rootSalt: string, now: number): Refusal | null {
  if (BigInt(bindingHash(binding)) !== BigInt(rootSalt))
    return new Refusal("SESSION_BOUND", "the stored binding does not hash to the root's salt; grant again");
  if (now >= binding.expires) return new Refusal("SESSION_EXPIRED", `the session ended at ${binding.expires}`);
  return null;
}

/** A launchpad curve trade (one with a fee call) needs the session's curve root. */
export function curveRefusal(hasFee: boolean, hasCurveRoot: boolean): Refusal | null {
  return hasFee && !hasCurveRoot
    ? new Refusal("SESSION_CURVE", "this session has no curve root: launchpad curve trades are not co-signed for it")
    : null;
}

/** The session's wallet and executor as the co-signer screens them; `listed[i]` is the list's answer for the i-th. */
export const screenedOf = (b: SessionBinding) =>
  [
    ["wallet", b.wallet],
    ["executor", b.executor],
  ] as const;

/** The first of the session's wallet and executor on the sanctions list refuses the trade. */
export function sanctionedRefusal(b: SessionBinding, listed: readonly unknown[]): Refusal | null {
  const hit = screenedOf(b).find((_, i) => listed[i] === true);
  return hit
    ? new Refusal(
        "SANCTIONED",
        `the session's ${hit[0]} ${getAddress(hit[1])} is on the sanctions list; nothing co-signed`,
        { address: getAddress(hit[1]), field: hit[0] },
      )
    : null;
}

/**
 * Failed limit rules answer their own SESSION_* code; any other failure answers REFUSED. Both list
 * every failed rule.
 */
export function failedRefusal(failed: Check[]): Refusal {
  const signer_checks = failed.map(({ rule, message }) => ({ rule, message }));
  const first = failed[0];
  if (first && failed.every((c) => SESSION_CODES.has(c.rule)))
    return new Refusal(first.rule as "SESSION_MAX_DAY", `the co-signer refused: ${first.message}`, { signer_checks });
  return new Refusal(
    "REFUSED",
    `the co-signer refused: ${failed.map((c) => `${c.rule} (${c.message})`).join("; ") || "no price"}`,
    { signer_checks },
  );
}

/** The execution is co-signed only when no check failed and it could be priced. */
export function executionRefusal(r: CheckResult): Refusal | null {
  const failed = r.checks.filter((c) => !c.ok);
  return failed.length || r.notionalUsd === null ? failedRefusal(failed) : null;
}

/** A leaf lives LEAF_TTL_S by the later of our clock and the chain's, never past the session. */
export const leafExpiry = (now: number, chainTime: number, ttlS: number, sessionExpires: number): number =>
  Math.min(Math.max(now, chainTime) + ttlS, sessionExpires);

export const roundUsd = (n: number) => Math.round(n * 100) / 100;

/** What the session has spent once this trade is counted: the answer's `spend`. */
export function spendAfter(b: SessionBinding, tradesUsed: number, last24hUsd: number, notionalUsd: number) {
  const used = tradesUsed + 1;
  const last24 = last24hUsd + notionalUsd;
  return {
    notional_usd: roundUsd(notionalUsd),
    trades_used: used,
    trades_left: Math.max(0, b.limits.max_trades - used),
    last_24h_usd: roundUsd(last24),
    remaining_24h_usd: roundUsd(Math.max(0, b.limits.max_day_usd - last24)),
  };
}

/** An oracle round's USD price, null when not positive or stale (stocks by market hours). */
export function roundUsdPrice(
  t: Pick<CosignerPins["tokens"][number], "stock">,
  answer: bigint,
  updatedAt: bigint,
  now: number,
): number | null {
  return answer > 0n && !markStale({ updatedAt: Number(updatedAt), now, stock: t.stock }) ? Number(answer) / 1e8 : null;
}

/**
 * A side the co-signer cannot price by an oracle is priced from the binding's owner-signed mark
 * and the co-signer's own 30-minute median of its source, whichever protects the wallet: the
 * higher for what goes in (caps count it fully), the lower for what comes out (the minimum must
 * cover it). A pool pushed now moves neither; an unreadable source (live null) prices nothing.
 */
export function signedSide<M extends Marks>(m: M, side: "in" | "out", signed: SignedMark, live: number | null): M {
  if (side === "in")
    return {
      ...m,
      usdIn: live === null ? null : Math.max(signed.usd, live),
      decimalsIn: signed.decimals,
      signedIn: true,
    };
  return {
    ...m,
    usdOut: live === null ? null : Math.min(signed.usd, live),
    decimalsOut: signed.decimals,
    signedOut: true,
  };
}

/** The binding's signed mark for a token the co-signer cannot price by an oracle, else null (priced by its oracle). */
export function signedMarkOf(
  b: SessionBinding,
  t: Address | null,
  oraclePriced: (t: string) => boolean,
): SignedMark | null {
  return t && !oraclePriced(t) ? (b.marks?.[t.toLowerCase()] ?? null) : null;
}
