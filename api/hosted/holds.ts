/**
 * The hold code a running agent logs when an order of a live tick is refused (SPEC "Hold codes
 * logged inside a running agent"). A live order goes through session/trade, the co-signer and the
 * relay like any agent's, and those answer their own error codes; the owner reading the agent's
 * logs sees SPEC's hold vocabulary, with the refusal's own code kept beside it (`refusal`).
 *
 * Codes not listed keep their own name (MAX_DAY, SESSION_MAX_DAY, SIMULATION_FAILED...): they are
 * already the most precise word for why nothing traded.
 */
const HOLD_OF: Record<string, string> = {
  // Risk terms: the token carries a severe risk the agent did not accept, or Shield refuses it.
  RISK_NOT_ACCEPTED: "RISKS_MISSING",
  RISK_BLOCKED: "TOKEN_BLOCKED",
  TOKEN_NOT_ALLOWED: "TOKEN_BLOCKED",
  // The issuer paused the stock token or blocks the session wallet.
  STOCK_PAUSED: "TOKEN_BLOCKED",
  WALLET_BLOCKED: "TOKEN_BLOCKED",
  // No fresh independent mark to size or check the order.
  PRICE_STALE: "TOKEN_STALE",
  NO_MARK: "TOKEN_STALE",
  PRICE_UNAVAILABLE: "TOKEN_STALE",
  // The fee the service built is not the one the agent's terms or its session allow.
  FEE_MISMATCH: "FEE_MISMATCH",
  FEE_BPS: "FEE_MISMATCH",
  FEE_DECLARED: "FEE_MISMATCH",
  FEE_REQUIRED: "FEE_MISMATCH",
  SESSION_FEE: "FEE_MISMATCH",
  FEE_CLASS: "FEE_CLASS",
  // The minimum out cannot be protected: under the co-signer's floor, or under the quote.
  MAX_SLIPPAGE: "MIN_OUT_FLOOR",
  SLIPPAGE: "MIN_OUT_FLOOR",
  PRICE: "MIN_OUT_FLOOR",
  SIGNED_MARK_PRICE: "MIN_OUT_FLOOR",
  LIMIT_NOT_REACHABLE: "MIN_OUT_QUOTE",
  QUOTE_SIM_MISMATCH: "MIN_OUT_QUOTE",
  // Stock tokens: outside the US stock-token session, or without the owner's attestation.
  MARKET_CLOSED: "MARKET_CLOSED",
  GEOFENCE: "STOCK_ATTESTATION",
  // A session with a feedless token that lasts over 24 hours is not co-signed.
  NO_FEED_SESSION: "SESSION_TOO_LONG",
  // The order names a pair the session or its pools cannot trade.
  SESSION_TOKENS: "PAIR",
  SAME_TOKEN: "PAIR",
  NO_ROUTE: "PAIR",
  // The risk terms a trade asks are not the session's (the agent's Shield setting moved).
  SESSION_TERMS: "SHIELD_MISMATCH",
};

/** SPEC's hold code for a refusal of a live order (its own code when SPEC names none closer). */
export const holdCodeOf = (refusalCode: string): string =>
  Object.hasOwn(HOLD_OF, refusalCode) ? HOLD_OF[refusalCode]! : refusalCode;

/** One failed rule of the co-signer, as its refusal lists them (SPEC: signer_checks). */
export type SignerCheck = { rule: string; message: string };

/**
 * The co-signer's rules over a trade (cosigner/checks.ts, tradeRules.ts) and SPEC's hold for each;
 * null: SPEC names no hold closer than the co-signer's own answer. Its rule names are SPEC's codes,
 * so these agree with HOLD_OF; the list is whole so that a rule added there is decided here.
 */
const HOLD_OF_RULE: Record<string, string | null> = {
  PRICE: "MIN_OUT_FLOOR",
  SIGNED_MARK_PRICE: "MIN_OUT_FLOOR",
  SLIPPAGE: "MIN_OUT_FLOOR",
  PRICE_UNAVAILABLE: "TOKEN_STALE",
  FEE_CLASS: "FEE_CLASS",
  FEE_REQUIRED: "FEE_MISMATCH",
  SESSION_FEE: "FEE_MISMATCH",
  FEE_DECLARED: "FEE_MISMATCH",
  SESSION_TOKENS: "PAIR",
  NO_FEED_SESSION: "SESSION_TOO_LONG",
  // Limits, the execution's shape, its deadline, an unknown root: the co-signer's answer says it best.
  SESSION_EXPIRY: null,
  SESSION_TARGET: null,
  SESSION_EXECUTION: null,
  SESSION_RECIPIENTS: null,
  SESSION_ROOT_ALLOWS: null,
  SESSION_MAX_TRADE: null,
  SESSION_TRADES_LEFT: null,
  SESSION_MAX_DAY: null,
  DEADLINE: null,
  TRADE_REFUSED: null,
};

/** The failed rules a refusal carries (the co-signer's `signer_checks`), or null when it carries none. */
export function signerChecksOf(extra: Record<string, unknown>): SignerCheck[] | null {
  const raw = extra.signer_checks;
  if (!Array.isArray(raw)) return null;
  return raw
    .filter((c): c is { rule: string; message?: unknown } => typeof c?.rule === "string")
    .map((c) => ({ rule: c.rule, message: typeof c.message === "string" ? c.message : "" }));
}

/**
 * Why a live order holds when something on its way refused it: SPEC's hold code, the refusal's own
 * code (`refusal`) and, for the co-signer's, the rules that failed (`signer_checks`). The co-signer
 * answers REFUSED for every failure that is not a session limit alone (SPEC "Co-signer
 * refusals"), so its code says nothing of why: the hold is that of the first failed rule SPEC names
 * a hold for, in the co-signer's order of checks (fee before price), else the refusal's own code.
 */
export function refusalHold(r: { code: string; message: string; extra: Record<string, unknown> }): {
  code: string;
  message: string;
  refusal: string;
  signer_checks?: SignerCheck[];
} {
  const checks = signerChecksOf(r.extra);
  const byRule = checks?.map((c) => HOLD_OF_RULE[c.rule]).find((h) => typeof h === "string");
  return {
    code: byRule ?? holdCodeOf(r.code),
    message: r.message,
    refusal: r.code,
    ...(checks ? { signer_checks: checks } : {}),
  };
}

/**
 * Why an order touching a stock token cannot go now: MARKET_CLOSED outside the US stock-token
 * session; STOCK_UNREAD when the issuer's switches could not be read; TOKEN_BLOCKED when the issuer
 * paused the token or blocks the wallet. null: it may go (the attestation is checked apart).
 */
export function stockHold(s: {
  open: boolean;
  read: { paused: boolean; walletBlocked: boolean } | null;
}): { code: string; message: string } | null {
  if (!s.open)
    return { code: "MARKET_CLOSED", message: "stock tokens trade from Sunday 20:00 to Friday 20:00 New York time" };
  if (!s.read)
    return {
      code: "STOCK_UNREAD",
      message: "the stock token's issuer switches could not be read; nothing is sent unread",
    };
  if (s.read.paused) return { code: "TOKEN_BLOCKED", message: "the issuer has paused this stock token" };
  if (s.read.walletBlocked)
    return { code: "TOKEN_BLOCKED", message: "the stock token's registry blocks the session wallet" };
  return null;
}
