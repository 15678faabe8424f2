/**
 * The catalogue of refusal codes and their HTTP statuses, as SPEC.md's error tables give them
 * (`catalogue.test.ts` checks it against SPEC.md). Domain code throws status-free Refusals; the
 * HTTP edge asks `statusOf`. Where SPEC gives one code several statuses, `when` names the context
 * that picks each. Shared with the SDK, whose ErrorCode union is read from it: this file imports
 * nothing (test/layering.test.ts), so the SDK's package can ship its declarations.
 */
export type Status = 400 | 401 | 403 | 404 | 405 | 409 | 411 | 413 | 421 | 422 | 429 | 451 | 500 | 502 | 503;
/**
 * `refusesTrade`: the code refuses the trade itself (its terms, the market, the policy), so a
 * trade route keeps the refusal as a refused trade (me/trades?refused=1); `refusesTradeWhen`: only
 * in those contexts. Request, key and service failures are not refused trades.
 */
type Entry = {
  readonly status: Status;
  readonly when?: Readonly<Record<string, Status>>;
  readonly refusesTrade?: true;
  readonly refusesTradeWhen?: readonly string[];
};

export const CATALOGUE = {
  BAD_REQUEST: { status: 400, when: { too_large: 413 } },
  UNKNOWN_FIELD: { status: 400 },
  ADDRESS_REQUIRED: { status: 400 },
  LENGTH_REQUIRED: { status: 411 },
  METHOD_NOT_ALLOWED: { status: 405 },
  NOT_FOUND: { status: 404 },
  UNAUTHORIZED: { status: 401 },
  CHALLENGE_EXPIRED: { status: 401 },
  BAD_SIGNATURE: { status: 401, when: { malformed: 400, typed_data: 422 }, refusesTradeWhen: ["typed_data"] },
  NOT_PARTNER_AGENT: { status: 403 },
  WALLET_MISMATCH: { status: 403 },
  WALLET_NOT_BOUND: { status: 403 },
  FORBIDDEN: { status: 403 },
  CSRF_REFUSED: { status: 403 },
  DEV_DISABLED: { status: 403 },
  RATE_LIMITED: { status: 429 },
  SIGNUP_CAPPED: { status: 429 },
  KEYS_CAPPED: { status: 429 },
  UNKNOWN_HOST: { status: 421 },
  SANCTIONED: { status: 451 },
  COUNTRY_BLOCKED: { status: 451 },
  ENGINE_UNAVAILABLE: { status: 503 },
  AUTH_DOMAIN_UNSET: { status: 503 },
  PARTNER_UNAVAILABLE: { status: 503 },
  NO_ROUTE: { status: 422, refusesTrade: true },
  TOKEN_NOT_ALLOWED: { status: 422, refusesTrade: true },
  TOKEN_UNKNOWN: { status: 422, refusesTrade: true },
  UNKNOWN_TOKEN: { status: 404 },
  NOT_A_TOKEN: { status: 404 },
  SAME_TOKEN: { status: 422, refusesTrade: true },
  TOKEN_CHANGED: { status: 409 },
  SCREEN_UNAVAILABLE: { status: 503 },
  REGISTRY_UNAVAILABLE: { status: 503 },
  STATS_PENDING: { status: 503 },
  REPORT_UNAVAILABLE: { status: 503 },
  RISK_NOT_ACCEPTED: { status: 422, refusesTrade: true },
  RISK_BLOCKED: { status: 422, refusesTrade: true },
  MAX_NOTIONAL: { status: 422, refusesTrade: true },
  MIN_NOTIONAL: { status: 422, refusesTrade: true },
  MAX_SLIPPAGE: { status: 422, refusesTrade: true },
  MAX_FEE: { status: 422, refusesTrade: true },
  FEE_FIXED: { status: 422, refusesTrade: true },
  FEE_BPS: { status: 422, refusesTrade: true },
  FEE_RECIPIENT_NOT_ALLOWED: { status: 422, refusesTrade: true },
  FEE_MISMATCH: { status: 422, refusesTrade: true },
  ROUTE_VS_MID: { status: 422, refusesTrade: true },
  ROUTE_VS_REF: { status: 422, refusesTrade: true },
  NO_REFERENCE_MID: { status: 422, refusesTrade: true },
  LIMIT_NOT_REACHABLE: { status: 422, refusesTrade: true },
  QUOTE_ONLY: { status: 422, refusesTrade: true },
  QUOTE_SIM_MISMATCH: { status: 422, refusesTrade: true },
  SIMULATION_FAILED: { status: 422, refusesTrade: true },
  DRY_RUN_UNFUNDABLE: { status: 422, refusesTrade: true },
  ROUTER_NOT_ALLOWED: { status: 422, refusesTrade: true },
  PARTICIPANT_TOKEN: { status: 422, refusesTrade: true },
  APPROVAL_MODE: { status: 422, refusesTrade: true },
  APPROVAL_BUDGET: { status: 422, refusesTrade: true },
  UNLIMITED_APPROVAL: { status: 422, refusesTrade: true },
  GEOFENCE: { status: 422, refusesTrade: true },
  STOCK_PAUSED: { status: 422, refusesTrade: true },
  WALLET_BLOCKED: { status: 422, refusesTrade: true },
  NO_MARK: { status: 503 },
  CURVE_PAIR: { status: 422, refusesTrade: true },
  CURVE_GRADUATED: { status: 422, refusesTrade: true },
  SNIPE_TAX: { status: 422, refusesTrade: true },
  FEE_MODE: { status: 422, refusesTrade: true },
  FEE_TOO_SMALL: { status: 422, refusesTrade: true },
  FEE_FIRST: { status: 422, refusesTrade: true },
  SUBMIT_DISABLED: { status: 403 },
  NOT_AS_BUILT: { status: 422, refusesTrade: true },
  SUBMIT_REJECTED: { status: 422, refusesTrade: true },
  SEQUENCER_UNREACHABLE: { status: 502 },
  RPC_UNAVAILABLE: { status: 502 },
  VENUE_FAILED: { status: 502 },
  LIVE_UNAVAILABLE: { status: 503 },
  FAST_DISABLED: { status: 403 },
  TX_ENCODING: { status: 422, refusesTrade: true },
  FAST_PAIR: { status: 422, refusesTrade: true },
  MARKET_CLOSED: { status: 422, refusesTrade: true },
  PRICE_STALE: { status: 503 },
  TX_TYPE: { status: 422, refusesTrade: true },
  CHAIN_ID: { status: 422, refusesTrade: true },
  ROUTER: { status: 422, refusesTrade: true },
  VALUE: { status: 422, refusesTrade: true },
  NOTIONAL: { status: 422, refusesTrade: true },
  ROUTE_CAP: { status: 422, refusesTrade: true },
  DEADLINE: { status: 422, refusesTrade: true },
  GAS: { status: 422, refusesTrade: true },
  MIN_OUT: { status: 422, refusesTrade: true },
  AMOUNT_USD: { status: 422, refusesTrade: true },
  CLIENT_CAP: { status: 422, refusesTrade: true },
  PERMIT: { status: 422, refusesTrade: true },
  POOL_FAR: { status: 422, refusesTrade: true },
  FAST_FUNDS: { status: 422, refusesTrade: true },
  NONCE: { status: 422, refusesTrade: true },
  IN_FLIGHT: { status: 409 },
  NO_SESSION: { status: 404, when: { hosted_agent: 409 } },
  SESSION_LIMIT: { status: 422, refusesTrade: true },
  BAD_EXECUTOR: { status: 422, refusesTrade: true },
  EXECUTOR_OWNER: { status: 403 },
  WALLET_CODE: { status: 422, refusesTrade: true },
  SESSION_PENDING: { status: 409 },
  SESSION_REVOKED: { status: 409 },
  SESSION_EXPIRED: { status: 409 },
  SESSION_EXPIRY: { status: 409 },
  SESSION_BOUND: { status: 409 },
  SESSION_TERMS: { status: 400 },
  SESSION_TOKENS: { status: 422, refusesTrade: true },
  SESSION_TRADES_LEFT: { status: 422, refusesTrade: true },
  SESSION_MAX_TRADE: { status: 422, refusesTrade: true },
  SESSION_MAX_DAY: { status: 422, refusesTrade: true },
  SESSION_TARGET: { status: 422, refusesTrade: true },
  SESSION_RECIPIENTS: { status: 422, refusesTrade: true },
  SESSION_EXECUTION: { status: 422, refusesTrade: true },
  SESSION_SETUP: { status: 422, refusesTrade: true },
  SESSION_CURVE: { status: 422, refusesTrade: true },
  SESSION_CURVE_ROOTS: { status: 422, refusesTrade: true },
  SESSION_CURVE_STEPS: { status: 422, refusesTrade: true },
  SESSION_ROOT_ALLOWS: { status: 422, refusesTrade: true },
  TOKEN_UNVERIFIED: { status: 422, refusesTrade: true },
  SESSIONS_UNAVAILABLE: { status: 503 },
  SIGNER_REQUIRED: { status: 503 },
  SIGNER_UNAVAILABLE: { status: 503 },
  SIGNER_MISMATCH: { status: 502 },
  /**
   * SPEC "Co-signer refusals" names these codes without statuses; ours: a refusal of the trade is 422, the signer out
   * of service 503, too busy 429.
   */
  REFUSED: { status: 422, refusesTrade: true },
  /** refund-gas answers these 409 (SPEC "Hosted agents" route table). */
  REFUND_REFUSED: { status: 409 },
  REFUND_OWNER: { status: 409 },
  REFUND_IN_FLIGHT: { status: 409 },
  REFUND_GAS: { status: 409 },
  EXECUTOR_CLOSED: { status: 409 },
  TX_REFUSED: { status: 422, refusesTrade: true },
  SIGNER_FROZEN: { status: 503 },
  CHAIN_UNAVAILABLE: { status: 503 },
  BUSY: { status: 429 },
  TOO_MANY_AGENTS: { status: 429 },
  BAD_TERMS: { status: 422, refusesTrade: true },
  BAD_SESSION: { status: 422, refusesTrade: true },
  OUTSIDE_SESSION: { status: 422, refusesTrade: true },
  PAPER_AGENT: { status: 409 },
  STOPPED: { status: 409 },
  STOP_FIRST: { status: 409 },
  KILLED: { status: 409 },
  LIVE_DISABLED: { status: 409 },
  SESSION_NOT_ACTIVE: { status: 409 },
  NO_EXECUTOR: { status: 409 },
  SESSION_ACTIVE: { status: 409 },
  STOCK_ATTESTATION: { status: 422, refusesTrade: true },
  STOCK_ATTESTATION_OLD: { status: 409 },
  BAD_EXPIRY: { status: 422, refusesTrade: true },
  SESSION_MISMATCH: { status: 409 },
  TOKEN_STOCK: { status: 422, refusesTrade: true },
  SIGNED_MISMATCH: { status: 502 },
  NOT_A_REFUND: { status: 422, refusesTrade: true },
  NOT_WEBHOOK: { status: 409 },
  EXECUTOR_ATTESTATION: { status: 503 },
  HOSTED_UNAVAILABLE: { status: 503 },
  NOT_AI: { status: 409 },
  NOT_AN_AGENT: { status: 404 },
  NOT_OWNER: { status: 403 },
  STATEMENT_EXPIRED: { status: 400 },
  STATEMENT_MISMATCH: { status: 400 },
  AGENT_ENTERED: { status: 409 },
  ALREADY_ENTERED: { status: 409 },
  PRIZE_IS_LIVE: { status: 409 },
  LEAGUE_DIVISION: { status: 409 },
  LEAGUE_PAPER_ONLY: { status: 409 },
  LEAGUE_PAIRS: { status: 409 },
  LEAGUE_INTERVAL: { status: 409 },
  NOT_ENTERED: { status: 404 },
  NO_SEASON: { status: 404 },
  /**
   * SPEC names it without a status ("A practice paper order between seasons is refused as SEASON_CLOSED with why"):
   * 409, as the league's other refusals of what the board's state does not allow.
   */
  SEASON_CLOSED: { status: 409 },
  LEAGUE_UNAVAILABLE: { status: 503 },
  /** Ours, not SPEC's: an unexpected failure (logged; never a stack trace in the body). */
  INTERNAL: { status: 500 },
} as const satisfies Record<string, Entry>;

export type Code = keyof typeof CATALOGUE;
/** The contexts a code knows (only codes with several statuses have any). */
export type ContextOf<C extends Code> = (typeof CATALOGUE)[C] extends { when: infer W } ? keyof W : never;

/** Whether a refusal with this code (and context) is kept as a refused trade by the trade routes. */
export function refusesTrade(code: Code, context?: string): boolean {
  const entry: Entry = CATALOGUE[code];
  return entry.refusesTrade === true || (context !== undefined && (entry.refusesTradeWhen?.includes(context) ?? false));
}

export function statusOf(code: Code, context?: string): Status {
  const entry: Entry = CATALOGUE[code];
  return (context !== undefined ? entry.when?.[context] : undefined) ?? entry.status;
}
