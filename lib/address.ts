/**
 * Addresses (and hashes) as Ethereum compares them: without regard to case (EIP-55 mixed case is
 * a checksum, not part of the address). The one helper for it, instead of a copy per file.
 */

/** The lower-case form: a map key, or one side of a comparison. */
export const lc = (a: string): string => a.toLowerCase();

/** Whether two addresses are the same (an absent one is never the same as anything). */
export const sameAddress = (a: string | null | undefined, b: string | null | undefined): boolean =>
  !!a && !!b && a.toLowerCase() === b.toLowerCase();
