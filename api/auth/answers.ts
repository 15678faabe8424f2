import { z } from "zod";
import { address, named, unixS } from "../http/answers.js";

/**
 * The answers of SPEC "Sign-in and keys" as zod schemas, in SPEC's words: the OpenAPI document's (api/openapi), and
 * test/answers.test.ts checks the code's answer types fit them.
 */

/** The wallet's partner agent (SPEC "API key" partner_agent), or null. */
const partnerAgent = z
  .object({
    agent_id: z.number().int(),
    token: address,
    symbol: z.string(),
    role: z.enum(["agentWallet", "owner"]),
    name: z.string(),
  })
  .nullable();

const account = z.object({ id: z.number().int(), name: z.string() });

/** POST auth/challenge: the EIP-4361 message to sign (SPEC "Sign-in challenge"). */
export const challengeAnswer = named(
  "Challenge",
  z
    .object({
      address: address,
      message: z.string().describe("EIP-4361 text naming the domain, chain 4663, the address, nonce and times"),
      nonce: z.string(),
      domain: z.string(),
      chain_id: z.number().int().describe("4663"),
      issued_at: unixS,
      expires_at: unixS.describe("issued_at + 300 s"),
      then: z.string().describe("what to do next"),
      uri: z.string(),
      version: z.string(),
      statement: z.string(),
      purpose: z.enum(["sign-in", "revoke-all"]),
    })
    .describe("A sign-in challenge: sign message with personal_sign, then POST auth/verify."),
);

/** POST auth/verify: the API key, shown once (SPEC "API key"). */
export const verifyAnswer = named(
  "ApiKey",
  z
    .object({
      api_key: z.string().describe("pit_w_ followed by random characters; shown once, only its SHA-256 is stored"),
      key_id: z.number().int(),
      expires_at: unixS.describe("30 days after sign-in"),
      wallet: address.describe("the bound wallet, lower case"),
      account,
      partner_agent: partnerAgent,
      partner_check: z.string().describe("ok, or why the partner list could not be read"),
      note: z.string(),
    })
    .describe("An API key bound to one wallet."),
);

/** POST auth/revoke-all. */
export const revokeAllAnswer = named(
  "KeysRevoked",
  z.object({
    wallet: address,
    revoked: z.number().int().describe("how many live keys were revoked"),
    note: z.string(),
  }),
);

/** GET auth/me. */
export const meAnswer = named(
  "KeyInfo",
  z
    .object({
      wallet: address.nullable(),
      account,
      key_id: z.number().int(),
      expires_at: unixS,
      partner_agent: partnerAgent,
    })
    .describe("The key's wallet and account."),
);

/** POST auth/revoke. */
export const revokeAnswer = named(
  "KeyRevoked",
  z.object({ revoked: z.literal(true), key_id: z.number().int(), wallet: address.nullable() }),
);
