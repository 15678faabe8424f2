import { getAddress, zeroAddress, type Address } from "viem";
import { recoverTypedDataAddress } from "../lib/secp.js";
import {
  decodeLimitedCallsTerms,
  decodeNativeBalanceChangeTerms,
  decodeRedeemerTerms,
  decodeTimestampTerms,
  decodeValueLteTerms,
} from "@metamask/delegation-core";
import { Refusal } from "../api/errors/index.js";
import { curveRootCaveats, delegationTypedData, rootCaveats, type Delegation } from "../lib/delegation.js";
import { markBandBps, markUnsettled, MIN_MARK_DEPTH_USD, offBps } from "../lib/markSource.js";
import { bindingHash, type SessionBinding, type SignedMark } from "../lib/sessionBinding.js";
import type { CosignerRoot } from "../api/ports/cosigner.js";
import type { Check } from "./checks.js";
import type { CosignerPins } from "./pins.js";
import { lc } from "../lib/address.js";

/**
 * Which roots the co-signer agrees to hold, as pure rules: each takes the root, the binding and the
 * co-signer's own pins and answers the rules it breaks (none: held). The closure in cosigner.ts
 * only reads the chain where a rule needs it (a feedless mark's source) and writes the store.
 */

/** A session holding a feedless token lasts at most this long: its signed mark ages (NO_FEED_SESSION). */
export const FEEDLESS_MAX_S = 86_400;

/** What a root is judged against: the co-signer's address and the pins it rebuilds caveats from. */
export type RootPins = {
  cosigner: Address;
  pins: Pick<
    CosignerPins,
    "chainId" | "delegationManager" | "enforcers" | "router" | "permit2" | "launchpad" | "feeRecipient"
  >;
};
/**
 * A feedless token's USD read at its mark's source: 30-minute median and its stability, spot, depth on
 * the priced side.
 */
export type OwnRead = { usd: number; stableShare: number; spotUsd: number; depthUsd: number };

/**
 * One signed root (the session's, or its curve root) against the binding: signed by the wallet, salted
 * with the binding, redeemable by the executor alone, ending by the binding's expiry.
 */
export async function signedRootProblems(
  x: RootPins,
  root: Delegation,
  binding: SessionBinding,
  kind: "session" | "curve",
): Promise<Check[]> {
  const out: Check[] = shapeProblems(x.pins, root, binding, kind);
  const bad = (rule: string, message: string) => out.push({ rule, ok: false, message });
  if (lc(root.delegate) !== lc(x.cosigner) || lc(binding.cosigner) !== lc(x.cosigner))
    bad("BINDING_TERMS", "the root is not delegated to this co-signer");
  if (lc(root.delegator) !== lc(binding.wallet))
    bad("BINDING_TERMS", "the root's delegator is not the binding's wallet");
  if (binding.chain_id !== x.pins.chainId) bad("BINDING_TERMS", "the binding names another chain");
  if (BigInt(bindingHash(binding)) !== root.salt)
    bad("ROOT_BINDS_LIMITS", "the root's salt is not the hash of the limits binding");
  const redeemer = root.caveats.filter((c) => lc(c.enforcer) === lc(x.pins.enforcers.RedeemerEnforcer!));
  const redeemers =
    redeemer.length === 1 ? decodeRedeemerTerms(redeemer[0]!.terms).redeemers.map((a) => lc(a as string)) : [];
  if (redeemers.length !== 1 || redeemers[0] !== lc(binding.executor))
    bad("BINDING_TERMS", "the root does not restrict redemption to the binding's executor");
  const stamps = root.caveats
    .filter((c) => lc(c.enforcer) === lc(x.pins.enforcers.TimestampEnforcer!))
    .map((c) => decodeTimestampTerms(c.terms).beforeThreshold);
  if (!stamps.length || Math.min(...stamps) > binding.expires)
    bad("BINDING_TERMS", "the root outlives the binding's expiry");
  try {
    const signer = await recoverTypedDataAddress({
      ...delegationTypedData(x.pins.chainId, x.pins.delegationManager, root),
      signature: root.signature,
    });
    if (lc(signer) !== lc(root.delegator)) bad("BINDING_TERMS", "the root's signature is not the wallet's");
  } catch {
    bad("BINDING_TERMS", "the root's signature does not decode");
  }
  return out;
}

/**
 * The root's caveats as the co-signer would have built them, not as the API says: the
 * LogicalOrWrapper groups byte for byte (targets, methods, pinned spender, token and recipient,
 * rebuilt from its own pins and the binding), then exactly the bounding enforcers, each once, a
 * call limit no larger than the session needs, and the ETH day cap when ETH is a session token.
 */
export function shapeProblems(
  pins: RootPins["pins"],
  root: Delegation,
  b: SessionBinding,
  kind: "session" | "curve",
): Check[] {
  const out: Check[] = [];
  const bad = (message: string) => out.push({ rule: "BINDING_TERMS", ok: false, message });
  const e = pins.enforcers;
  // Only the groups (the first caveat) are compared: the amounts here are placeholders (a balance
  // bound must be above 0).
  const dummy = {
    executor: getAddress(b.executor),
    expires: b.expires,
    maxValueWei: 1n,
    dayValueWei: null,
    dayStart: 0,
    maxCalls: 1,
    walletNonce: 0n,
  };
  const expected =
    kind === "session"
      ? rootCaveats({ ...dummy, router: pins.router, permit2: pins.permit2 }, e)[0]!
      : curveRootCaveats(
          {
            ...dummy,
            launchpad: pins.launchpad,
            feeRecipient: pins.feeRecipient,
            wallet: getAddress(b.wallet),
            tokens: (b.curve_tokens ?? []).map((t) => getAddress(t)),
          },
          e,
        )[0]!;
  const [first, ...rest] = root.caveats;
  if (!first || lc(first.enforcer) !== lc(expected.enforcer) || lc(first.terms) !== lc(expected.terms))
    bad(`the ${kind} root's targets and methods are not the ones the co-signer pins`);
  const nameOf = (a: Address) => Object.entries(e).find(([, x]) => lc(x) === lc(a))?.[0] ?? a;
  const names = rest.map((c) => nameOf(c.enforcer));
  const bounds = ["TimestampEnforcer", "LimitedCallsEnforcer", "NonceEnforcer", "RedeemerEnforcer"];
  const required =
    kind === "session"
      ? [
          "ValueLteEnforcer",
          ...bounds,
          ...(b.tokens.includes(zeroAddress) ? ["NativeTokenPeriodTransferEnforcer"] : []),
        ]
      : ["ValueLteEnforcer", "NativeBalanceChangeEnforcer", ...bounds];
  const once = (n: string) => names.filter((x) => x === n).length === 1;
  // SPEC's own names for the two bounds that have one: the wallet's nonce (one bump revokes every
  // root) and the ETH day cap.
  if (!once("NonceEnforcer"))
    out.push({
      rule: "BINDING_NONCE",
      ok: false,
      message: `the ${kind} root does not carry the wallet's nonce bound exactly once`,
    });
  if (required.includes("NativeTokenPeriodTransferEnforcer") && !once("NativeTokenPeriodTransferEnforcer"))
    out.push({
      rule: "ROOT_DAY_CAP",
      ok: false,
      message: `the ${kind} root spends ETH without exactly one on-chain ETH day cap`,
    });
  const others = required.filter((n) => n !== "NonceEnforcer" && n !== "NativeTokenPeriodTransferEnforcer");
  if (names.some((n) => !required.includes(n)) || !others.every(once))
    bad(`the ${kind} root's bounds are not exactly ${required.join(", ")}`);
  if (kind === "curve") out.push(...curveBoundProblems(e, rest, b));
  const calls = rest.find((c) => nameOf(c.enforcer) === "LimitedCallsEnforcer");
  const cap = kind === "session" ? b.limits.max_trades + b.tokens.length : b.limits.max_trades;
  if (calls && decodeLimitedCallsTerms(calls.terms).limit > cap) bad(`the ${kind} root allows more than ${cap} calls`);
  return out;
}

/** A curve root's outer call carries no ETH, and its ETH bound is the wallet's own balance decrease. */
export function curveBoundProblems(
  e: Record<string, Address>,
  rest: Delegation["caveats"],
  b: SessionBinding,
): Check[] {
  const of = (n: string) => rest.find((c) => lc(c.enforcer) === lc(e[n] ?? zeroAddress));
  const value = of("ValueLteEnforcer");
  const change = of("NativeBalanceChangeEnforcer");
  const ethBound = change ? decodeNativeBalanceChangeTerms(change.terms) : null;
  const ok =
    value &&
    decodeValueLteTerms(value.terms).maxValue === 0n &&
    ethBound &&
    ethBound.changeType === 1 &&
    lc(ethBound.recipient as string) === lc(b.wallet);
  return ok
    ? []
    : [
        {
          rule: "BINDING_TERMS",
          ok: false,
          message:
            "the curve root does not bound the wallet's ETH per trade " +
            "(no ETH on its call, a balance decrease of the wallet)",
        },
      ];
}

/** A session has one curve root exactly when its binding lists curve tokens. */
export function curveRootCountProblems(r: CosignerRoot): Check[] {
  if ((r.curveRoots?.length ?? 0) !== (r.binding.curve_tokens?.length ? 1 : 0))
    return [
      {
        rule: "BINDING_TERMS",
        ok: false,
        message: "a session has one curve root exactly when its binding lists curve tokens",
      },
    ];
  return [];
}

/** A curve root's problems, named as the curve root's. */
export const asCurveRootProblems = (problems: Check[]): Check[] =>
  problems.map((p) => ({ ...p, message: `curve root: ${p.message}` }));

/** The binding's tokens the co-signer cannot price by an oracle (each needs an owner-signed mark). */
export const feedlessTokens = (b: SessionBinding, oraclePriced: (t: string) => boolean): string[] =>
  b.tokens.filter((t) => !oraclePriced(t));

/** A session holding a feedless token lasts at most FEEDLESS_MAX_S from now. */
export function feedlessLifeProblems(b: SessionBinding, now: number): Check[] {
  return b.expires - now > FEEDLESS_MAX_S
    ? [
        {
          rule: "NO_FEED_SESSION",
          ok: false,
          message: `a session with a feedless token lasts at most ${FEEDLESS_MAX_S} s`,
        },
      ]
    : [];
}

/**
 * The binding's owner-signed mark of a feedless token when it is one the co-signer can judge (a
 * positive price, sane decimals), else null.
 */
export function usableMark(b: SessionBinding, t: string): SignedMark | null {
  const m = b.marks?.[t];
  if (!m || !(m.usd > 0) || !Number.isInteger(m.decimals) || m.decimals < 0 || m.decimals > 36) return null;
  return m;
}

/** A feedless token with no usable mark is not held. */
export const unmarkedProblems = (t: string): Check[] => [
  { rule: "BINDING_TERMS", ok: false, message: `${t} has no oracle feed and no owner-signed mark` },
];

/**
 * A signed mark the co-signer holds a root to (CAP_PRICE): its own 30-minute time-weighted median
 * of the mark's source (never one block's price, nor a mean a short spike lifts) within the pair's
 * band of the mark, the price held within the band of that median for 90 % of the window and the
 * spot within it now (lib/markSource markUnsettled), and the source deep enough.
 */
export function markProblems(t: string, m: SignedMark, own: OwnRead | null, usdg: Address): Check[] {
  const bad = (message: string): Check[] => [{ rule: "CAP_PRICE", ok: false, message }];
  if (!own) return bad(`the co-signer cannot read ${t}'s 30-minute median at its source`);
  const band = markBandBps(m.source, usdg);
  if (!(offBps(m.usd, own.usd) <= band))
    return bad(
      `the signed mark $${m.usd} of ${t} is ${Math.round(offBps(m.usd, own.usd))} bps from the co-signer's ` +
        `30-minute median $${own.usd.toPrecision(6)} (band ${band} bps)`,
    );
  const unsettled = markUnsettled({ median: own.usd, stableShare: own.stableShare }, own.spotUsd, band);
  if (unsettled) return bad(`no mark for ${t}: ${unsettled}; grant again once it settles`);
  if (own.depthUsd < MIN_MARK_DEPTH_USD)
    return bad(
      `the source behind ${t}'s mark holds about $${Math.round(own.depthUsd)} on its priced side, ` +
        `under $${MIN_MARK_DEPTH_USD}: its price is too cheap to move`,
    );
  return [];
}

/** Any problem and the co-signer will not hold the root: REFUSED listing them all. */
export function rootRefusal(problems: Check[]): Refusal | null {
  if (!problems.length) return null;
  return new Refusal("REFUSED", `the co-signer will not hold this root: ${problems.map((p) => p.message).join("; ")}`, {
    signer_checks: problems,
  });
}

/** The same signed root twice is not held twice (the store says it was). */
export const reusedRootRefusal = (): Refusal =>
  new Refusal("REFUSED", "this signed root is registered already", {
    signer_checks: [{ rule: "ROOT_REUSED", ok: false, message: "same signed root registered twice" }],
  });
