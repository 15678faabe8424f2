import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";

/**
 * Secrets sealed at rest with AES-256-GCM under a key derived from an operator secret and a
 * purpose (so one secret never opens another purpose's rows), bound to associated data (the
 * row's owner or address: a sealed value copied to another row does not open). Output: base64 of
 * iv (12) | tag (16) | ciphertext.
 */
export function sealer(secret: string, purpose: string) {
  const master = createHash("sha256").update(`${purpose}:${secret}`).digest();
  return {
    seal(plain: Buffer, aad: string): string {
      const iv = randomBytes(12);
      const c = createCipheriv("aes-256-gcm", master, iv).setAAD(Buffer.from(aad));
      const body = Buffer.concat([c.update(plain), c.final()]);
      return Buffer.concat([iv, c.getAuthTag(), body]).toString("base64");
    },
    /** Throws when the secret, the purpose or the associated data differ. */
    open(sealed: string, aad: string): Buffer {
      const raw = Buffer.from(sealed, "base64");
      const c = createDecipheriv("aes-256-gcm", master, raw.subarray(0, 12)).setAAD(Buffer.from(aad));
      c.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([c.update(raw.subarray(28)), c.final()]);
    },
  };
}
