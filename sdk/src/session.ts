import {
  decodeAbiParameters,
  getAddress,
  parseUnits,
  serializeSignature,
  zeroAddress,
  type Address,
  type Hex,
  type LocalAccount,
  type PublicClient,
} from "viem";
import {
  delegationTypedData,
  nonceEnforcerAbi,
  ROOT_AUTHORITY,
  rootCaveats,
  type Caveat,
} from "../../lib/delegation.js";
import { BINDING_VERSION, bindingSalt, feeTermsOfSchedule2, type SessionBinding } from "../../lib/sessionBinding.js";
import { PitError, verificationFailed } from "./errors.js";
import type { Http } from "./http.js";
import { MARK_MAX_AGE_S, ownMark, verifySignedMarks, type OwnMark } from "./marks.js";
import { pinnedSymbol, type Pins } from "./pins.js";
import { sameAddress as same } from "../../lib/address.js";

export type GrantRequest = {
  executor: Address;
  tokens?: string[];
  maxTradeUsd?: number;
  maxDayUsd?: number;
  maxTrades?: number;
  expiresInS?: number;
  acceptRisks?: string[];
  shield?: boolean;
  policies?: string[];
  allow7702?: boolean;
};
/** What a session grant's checks need to know of the server beyond the pins. */
export type SessionPins = {
  delegationManager: Address;
  statelessDelegator: Address;
  enforcers: Record<string, Address>;
};

type TypedMessage = {
  delegate: string;
  delegator: string;
  authority: string;
  caveats: { enforcer: string; terms: Hex; args: Hex }[];
  salt: string;
};
type StartAnswer = {
  session_id: string;
  sign: {
    delegation: {
      typed_data: {
        domain: { name?: string; chainId?: number; verifyingContract?: string };
        types: Record<string, unknown>;
        primaryType: string;
        message: TypedMessage;
      };
      binding: SessionBinding;
    };
    authorization: { contract_address: string; chain_id: number; nonce: number } | null;
    curve_roots: unknown[];
  };
  on_chain_bounds: {
    eth_per_call_wei: string;
    eth_per_day_wei: string;
    expires: number;
    max_calls: number;
    redeemer: string;
    wallet_nonce: string;
  };
};

/**
 * The root's ETH caps (ValueLte per call, NativeTokenPeriodTransfer per day) are the only on-chain
 * bound on a session's ETH. The service sizes them at 1.5x the USD limits at its ETH mark (room for
 * ETH to fall during the session); the client accepts at most that at its own fresh ETH mark, plus
 * ETH_CAP_TOLERANCE_BPS for the two marks' difference (SPEC's 3 % at which marks differ).
 */
export const ETH_CAP_HEADROOM = 1.5;
export const ETH_CAP_TOLERANCE_BPS = 300;

/**
 * GRANT_CAPS unless the root's ETH caps fit the limits asked: none without ETH among the session's
 * tokens; with it, each cap at most its USD limit x ETH_CAP_HEADROOM (+ tolerance) at the client's own ETH mark.
 */
function checkEthCaps(
  ob: StartAnswer["on_chain_bounds"],
  limits: { max_trade_usd: number; max_day_usd: number },
  withEth: boolean,
  mark: OwnMark | null,
): void {
  const [perCall, perDay] = [BigInt(ob.eth_per_call_wei), BigInt(ob.eth_per_day_wei)];
  if (!withEth) {
    if (perCall !== 0n || perDay !== 0n)
      throw verificationFailed("GRANT_CAPS", "the root lets the session spend ETH, which it was not asked to trade");
    return;
  }
  if (!mark || mark.ageS > MARK_MAX_AGE_S)
    throw verificationFailed(
      "GRANT_CAPS",
      "the client has no fresh ETH mark of its own to check the root's ETH caps against",
    );
  const most = (usd: number) =>
    parseUnits(((usd * ETH_CAP_HEADROOM * (1 + ETH_CAP_TOLERANCE_BPS / 10_000)) / mark.usd).toFixed(18), 18);
  for (const [name, wei, usd] of [
    ["per call", perCall, limits.max_trade_usd],
    ["per day", perDay, limits.max_day_usd],
  ] as const) {
    if (wei > most(usd))
      throw verificationFailed(
        "GRANT_CAPS",
        `the root lets the session spend ${wei} wei of ETH ${name}: over $${usd} asked ` +
          `at the client's own ETH mark of $${mark.usd} (at most ${most(usd)} wei)`,
      );
  }
}
const sorted = (xs: string[]) => [...xs].sort();

/** What verifyGrant reads beyond the answer and the pins: the time, the wallet's nonces and marks. */
type GrantContext = {
  nowS: number;
  walletNonce: bigint;
  txNonce: number;
  ethMark: OwnMark | null;
  verifiedMarks?: SessionBinding["marks"];
};
type AskedLimits = { max_trade_usd: number; max_day_usd: number; max_trades: number };

/**
 * Checks a grant's start answer before the wallet signs anything (SPEC "Sessions"):
 * GRANT_CAPS: the binding's limits, tokens and expiry are the ones asked, and the root's ETH caps
 * fit those limits at the client's own ETH mark (checkEthCaps);
 * GRANT_BINDING: the binding names this wallet, executor, the pinned co-signer and chain and the
 * fee schedule, and the root to sign is exactly the one rebuilt locally from it (lib/delegation's
 * rootCaveats: targets, methods, Permit2 spender, value, expiry, calls, nonce, redeemer), on the
 * pinned DelegationManager, with the binding's salt; CONSENT_REQUIRED: an EIP-7702 code change
 * without `allow7702`, and only ever to the pinned delegator.
 */
export function verifyGrant(
  start: StartAnswer,
  q: GrantRequest & { wallet: Address },
  pins: Pins,
  sp: SessionPins,
  o: GrantContext,
): void {
  const b = start.sign.delegation.binding;
  const tokens = sorted(
    (q.tokens ?? ["ETH", "USDG"]).map(
      (s) => pins.tokens[pinnedSymbol(pins, s)]?.address.toLowerCase() ?? s.toLowerCase(),
    ),
  );
  const limits = { max_trade_usd: q.maxTradeUsd ?? 25, max_day_usd: q.maxDayUsd ?? 100, max_trades: q.maxTrades ?? 50 };
  checkBindingAsked(b, q, tokens, limits, o);
  checkOnChainBounds(b, start.on_chain_bounds, q, tokens, limits, o);
  checkBindingNames(b, q, pins);
  checkRoot(start, q, pins, sp, o);
  checkAuthorization(start, q, pins, sp, o);
}

/** The binding's limits, tokens, setup budget, risk terms, version and marks are the ones asked and checked. */
function checkBindingAsked(
  b: SessionBinding,
  q: GrantRequest,
  tokens: string[],
  limits: AskedLimits,
  o: GrantContext,
): void {
  if (JSON.stringify(b.limits) !== JSON.stringify(limits))
    throw verificationFailed(
      "GRANT_CAPS",
      `the session binds ${JSON.stringify(b.limits)}, not the limits asked ${JSON.stringify(limits)}`,
    );
  if (JSON.stringify(sorted(b.tokens)) !== JSON.stringify(tokens))
    throw verificationFailed("GRANT_CAPS", `the session binds tokens ${b.tokens.join(", ")}, not the ones asked`);
  if (b.setup_budget_usd !== limits.max_day_usd)
    throw verificationFailed(
      "GRANT_CAPS",
      `the session's setup budget is $${b.setup_budget_usd}, not the day cap asked`,
    );
  const terms = { accept_risks: sorted(q.acceptRisks ?? []), shield: false, policies: [] as string[] };
  if (JSON.stringify(b.risk_terms) !== JSON.stringify(terms))
    throw verificationFailed(
      "GRANT_BINDING",
      "the session binds risk terms (accepted risks, Shield, policies) other than the ones asked",
    );
  // Curve roots are for curve tokens, which this client never signs; marks only as verifySignedMarks
  // read them on chain.
  if (
    b.version !== BINDING_VERSION ||
    JSON.stringify(b.marks) !== JSON.stringify(o.verifiedMarks) ||
    (b as { curve_tokens?: unknown }).curve_tokens !== undefined
  )
    throw verificationFailed(
      "GRANT_BINDING",
      "the binding carries a version, marks or curve tokens this client did not ask for or check",
    );
}

/** The root's on-chain bounds: the expiry asked, calls for the trades, ETH caps that fit, the wallet's nonce. */
function checkOnChainBounds(
  b: SessionBinding,
  ob: StartAnswer["on_chain_bounds"],
  q: GrantRequest,
  tokens: string[],
  limits: AskedLimits,
  o: GrantContext,
): void {
  const expiresIn = q.expiresInS ?? 86_400;
  if (b.expires !== ob.expires || b.expires > o.nowS + expiresIn + 600)
    throw verificationFailed(
      "GRANT_CAPS",
      `the session lasts until ${b.expires}, longer than the ${expiresIn} s asked`,
    );
  if (ob.max_calls !== limits.max_trades + tokens.filter((t) => t !== zeroAddress).length)
    throw verificationFailed("GRANT_CAPS", `the root allows ${ob.max_calls} calls for ${limits.max_trades} trades`);
  if (tokens.includes(zeroAddress) && BigInt(ob.eth_per_day_wei) <= 0n)
    throw verificationFailed("GRANT_CAPS", "the session trades ETH but its root has no ETH day cap");
  checkEthCaps(ob, limits, tokens.includes(zeroAddress), o.ethMark);
  if (BigInt(ob.eth_per_call_wei) > BigInt(ob.eth_per_day_wei) && BigInt(ob.eth_per_day_wei) > 0n)
    throw verificationFailed("GRANT_CAPS", "the root lets one call spend more ETH than a day");
  if (BigInt(ob.wallet_nonce) !== o.walletNonce)
    throw verificationFailed(
      "GRANT_BINDING",
      `the root binds the wallet's nonce ${ob.wallet_nonce}; the delegation manager says ${o.walletNonce}`,
    );
}

/** The binding names this wallet, executor, the pinned co-signer, chain and fee schedule. */
function checkBindingNames(b: SessionBinding, q: GrantRequest & { wallet: Address }, pins: Pins): void {
  const bindingOk =
    b.chain_id === pins.chainId &&
    same(b.wallet, q.wallet) &&
    same(b.executor, q.executor) &&
    pins.cosigner !== null &&
    same(b.cosigner, pins.cosigner) &&
    JSON.stringify(b.fee) === JSON.stringify(feeTermsOfSchedule2());
  if (!bindingOk)
    throw verificationFailed(
      "GRANT_BINDING",
      "the session's binding does not name this wallet, executor, the pinned co-signer, chain or fee schedule",
    );
}

/** The root to sign is on the pinned DelegationManager and exactly the one rebuilt from its binding. */
function checkRoot(
  start: StartAnswer,
  q: GrantRequest & { wallet: Address },
  pins: Pins,
  sp: SessionPins,
  o: GrantContext,
): void {
  const b = start.sign.delegation.binding;
  const ob = start.on_chain_bounds;
  const t = start.sign.delegation.typed_data;
  if (
    t.domain.name !== "DelegationManager" ||
    Number(t.domain.chainId) !== pins.chainId ||
    !t.domain.verifyingContract ||
    !same(t.domain.verifyingContract, sp.delegationManager)
  )
    throw verificationFailed("GRANT_BINDING", "the root is not for the pinned DelegationManager on this chain");
  const m = t.message;
  const dayStart = ethDayStart(m, sp, o.nowS);
  const expected: Caveat[] = rootCaveats(
    {
      router: pins.router,
      permit2: pins.permit2,
      executor: getAddress(q.executor),
      expires: b.expires,
      maxValueWei: BigInt(ob.eth_per_call_wei),
      dayValueWei: BigInt(ob.eth_per_day_wei) > 0n ? BigInt(ob.eth_per_day_wei) : null,
      dayStart,
      maxCalls: ob.max_calls,
      walletNonce: o.walletNonce,
    },
    sp.enforcers as never,
  );
  const rootOk =
    pins.cosigner !== null &&
    same(m.delegate, pins.cosigner) &&
    same(m.delegator, q.wallet) &&
    m.authority.toLowerCase() === ROOT_AUTHORITY.toLowerCase() &&
    BigInt(m.salt) === bindingSalt(b) &&
    m.caveats.length === expected.length &&
    m.caveats.every(
      (c, i) => same(c.enforcer, expected[i]!.enforcer) && c.terms.toLowerCase() === expected[i]!.terms.toLowerCase(),
    );
  if (!rootOk)
    throw verificationFailed(
      "GRANT_BINDING",
      "the root to sign is not the one rebuilt from its binding (delegate, delegator, salt or a caveat differs)",
    );
}

/** The ETH day period starts when the server granted it: read from the terms, near now (0 without the caveat). */
function ethDayStart(m: TypedMessage, sp: SessionPins, nowS: number): number {
  const dayCaveat = m.caveats.find((c) =>
    same(c.enforcer, sp.enforcers.NativeTokenPeriodTransferEnforcer ?? zeroAddress),
  );
  const dayStart = dayCaveat
    ? Number(decodeAbiParameters([{ type: "uint256" }, { type: "uint256" }, { type: "uint256" }], dayCaveat.terms)[2])
    : 0;
  if (dayCaveat && Math.abs(dayStart - nowS) > 600)
    throw verificationFailed("GRANT_CAPS", "the root's ETH day period does not start now");
  return dayStart;
}

/** An EIP-7702 authorization only to the pinned delegator, on this chain, at the next nonce, and with consent. */
function checkAuthorization(start: StartAnswer, q: GrantRequest, pins: Pins, sp: SessionPins, o: GrantContext): void {
  const auth = start.sign.authorization;
  if (
    auth &&
    (!same(auth.contract_address, sp.statelessDelegator) ||
      auth.chain_id !== pins.chainId ||
      auth.nonce !== o.txNonce + 1)
  )
    throw verificationFailed(
      "GRANT_BINDING",
      "the EIP-7702 authorization is not to the pinned delegator, on this chain, at the wallet's next nonce",
    );
  if (auth && !q.allow7702)
    throw new PitError(
      "CONSENT_REQUIRED",
      "this session changes the wallet's code (EIP-7702 to the pinned delegator); pass allow7702 to consent",
    );
}

/** Starts a grant, checks it, signs the root (and the 7702 authorization with consent), switches it on. */
export async function grantSession(
  d: { http: Http; chain: PublicClient; account: LocalAccount; pins: Pins },
  q: GrantRequest,
) {
  // The session contracts come from the pins, never from a live answer.
  if (!d.pins.session)
    throw new PitError("CONFIG_MISMATCH", "the pins hold no session contracts; pin a config that has them");
  const sp: SessionPins = d.pins.session;
  const start = await d.http.post<StartAnswer>("/live/session/grant", {
    wallet: d.account.address,
    executor: q.executor,
    ...(q.tokens ? { tokens: q.tokens } : {}),
    ...(q.maxTradeUsd !== undefined ? { max_trade_usd: q.maxTradeUsd } : {}),
    ...(q.maxDayUsd !== undefined ? { max_day_usd: q.maxDayUsd } : {}),
    ...(q.maxTrades !== undefined ? { max_trades: q.maxTrades } : {}),
    ...(q.expiresInS !== undefined ? { expires_in_s: q.expiresInS } : {}),
    ...(q.acceptRisks ? { accept_risks: q.acceptRisks } : {}),
  });
  const [block, txNonce, walletNonce] = await Promise.all([
    d.chain.getBlock(),
    d.chain.getTransactionCount({ address: d.account.address, blockTag: "pending" }),
    d.chain.readContract({
      address: sp.enforcers.NonceEnforcer!,
      abi: nonceEnforcerAbi,
      functionName: "currentNonce",
      args: [sp.delegationManager, d.account.address],
    }),
  ]);
  const nowS = Number(block.timestamp);
  const [ethMark, verifiedMarks] = await Promise.all([
    ownMark(d.chain, d.pins, "ETH", nowS),
    verifySignedMarks(d.chain, d.pins, start.sign.delegation.binding, nowS),
  ]);
  verifyGrant(start, { ...q, wallet: d.account.address }, d.pins, sp, {
    nowS,
    walletNonce,
    txNonce,
    ethMark,
    verifiedMarks,
  });
  if (start.sign.curve_roots.length)
    throw new PitError("VERIFICATION_FAILED", "curve-token sessions are not signed by this SDK version", {
      rule: "GRANT_BINDING",
    });
  const t = start.sign.delegation.typed_data;
  // Signed as rebuilt here (types, domain and message from lib/delegation), not as the answer spells them.
  const m = t.message;
  const typed = delegationTypedData(d.pins.chainId, sp.delegationManager, {
    delegate: getAddress(m.delegate),
    delegator: d.account.address,
    authority: m.authority as Hex,
    caveats: m.caveats.map((c) => ({ enforcer: getAddress(c.enforcer), terms: c.terms, args: "0x" as Hex })),
    salt: BigInt(m.salt),
  });
  const delegation_signature = await d.account.signTypedData(typed as never);
  const a = start.sign.authorization;
  const auth = a
    ? await d.account.signAuthorization!({
        contractAddress: getAddress(a.contract_address),
        chainId: a.chain_id,
        nonce: a.nonce,
      })
    : null;
  const on = await d.http.post<{ session_id: string; status: string }>("/live/session/grant", {
    session_id: start.session_id,
    delegation_signature,
    ...(auth ? { authorization_signature: serializeSignature(auth) } : {}),
  });
  return { ...on, start, authorization: auth };
}
