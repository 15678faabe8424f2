import type { Code } from "../../api/errors/catalogue.js";

/**
 * Every failure the SDK raises is a PitError with SPEC's `code` ("Client-side errors"): a server
 * refusal keeps the server's code (HTTP_<status> when it gave none), a local check is
 * VERIFICATION_FAILED with the `rule` it broke. Nothing is signed once one is raised.
 * V4_HOOKS covers a hop's whole pool key: a hooked pool, or any pool that is not one of the
 * pinned canonical pools (config's universe.pools). GRANT_CAPS covers the root's ETH caps too
 * (at most the USD limits asked x 1.5, +3 %, at the client's own ETH mark).
 */
export type VerificationRule =
  | "RECIPIENT"
  | "FEE_CLASS"
  | "FEE_BPS"
  | "MIN_OUT"
  | "PRICE"
  | "QUOTE_OWN"
  | "IMPACT_OWN"
  | "RISK_CODES"
  | "RISK_NOT_ACCEPTED"
  | "V4_HOOKS"
  | "GRANT_BINDING"
  | "GRANT_CAPS"
  | "GRANT_MARK"
  | "EXECUTOR_ATTESTATION";

/**
 * SPEC "Client-side errors": the codes the SDK raises itself, before or without the server's word
 * (fast mode's reasons the server's catalogue lacks included), and NO_ANSWER, its own: a request
 * whose answer never came. Values, so a test holds them to SPEC's table.
 */
export const CLIENT_CODES = [
  "VERIFICATION_FAILED",
  "HASH_MISMATCH",
  "CONFIG_MISMATCH",
  "MINED_MISMATCH",
  "TX_REVERTED",
  "CONSENT_REQUIRED",
  "INSUFFICIENT_FUNDS",
  "ACCOUNT_SHAPE",
  "ACCOUNT_WALLET",
  "LEAGUE_STATEMENT",
  "SIGNING_MISMATCH",
  "STALE",
  "APPROVAL",
  "MARKS_DIFFER",
  "COOLDOWN",
  "NO_ANSWER",
] as const;
export type ClientCode = (typeof CLIENT_CODES)[number];
/**
 * A refusal's code as the server's catalogue names it: the type is read from the catalogue itself
 * (a data file with no imports), so the SDK's codes cannot drift from the server's.
 */
export type ServerCode = Code;
/** Every `code` a PitError carries; HTTP_<status> for a server answer that named none. */
export type ErrorCode = ServerCode | ClientCode | `HTTP_${number}`;

export class PitError extends Error {
  override name = "PitError";
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly detail: {
      rule?: VerificationRule;
      status?: number;
      retryAfterS?: number;
      body?: unknown;
      signed?: { hash: string; nonce: number; landed: boolean | null };
    } = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
  get rule(): VerificationRule | undefined {
    return this.detail.rule;
  }
}

/** A server answer failed a local check: VERIFICATION_FAILED naming the rule. */
export const verificationFailed = (rule: VerificationRule, message: string) =>
  new PitError("VERIFICATION_FAILED", `${rule}: ${message}`, { rule });
