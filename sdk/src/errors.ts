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

export class PitError extends Error {
  override name = "PitError";
  constructor(
    readonly code: string,
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
