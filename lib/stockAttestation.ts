/**
 * The text an owner signs (EIP-191 personal_sign) to let a live hosted agent trade stock tokens
 * through its session: exactly these lines, so the server and any SDK build the same bytes.
 */
export function stockAttestationText(a: {
  agent: string;
  executor: string;
  session_id: string;
  root_hash: string;
  issued: number;
  expires: number;
}): string {
  return [
    "I attest that I am not a US person and may trade tokenised stocks.",
    "I let this hosted agent trade stock tokens through this session only, until the expiry below.",
    `agent: ${a.agent}`,
    `executor: ${a.executor.toLowerCase()}`,
    `session: ${a.session_id}`,
    `session root: ${a.root_hash.toLowerCase()}`,
    `issued: ${a.issued}`,
    `expires: ${a.expires}`,
  ].join("\n");
}

/** SPEC "Limits": expires 5 minutes to 30 days ahead; issued within the last hour. */
export const STOCK_ATTESTATION_LIMITS = { minAheadS: 300, maxAheadS: 30 * 86_400, issuedWithinS: 3_600 } as const;
