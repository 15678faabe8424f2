import type { Context } from "hono";
import { z } from "zod";
import type { AppEnv } from "../http/env.js";
import { KEYED } from "../errors/groups.js";
import { route } from "../http/route.js";
import { AUTH_OVERALL, RATE_RULES } from "../http/rateLimit.js";
import type { Take } from "../http/limits.js";
import { createChallenge, partnerAgentOf, revokeAll, revokeKey, verifySignIn, type SignInDeps } from "./signin.js";

/** What SPEC "Sign-in and keys" works with: the sign-in's own dependencies (keys, challenges, chain). */
export type AuthService = SignInDeps;

/** The sign-in buckets: per client, and for the whole service. */
const SIGN_IN: Take[] = [
  ["auth", RATE_RULES.auth, "client"],
  ["auth", AUTH_OVERALL, "overall"],
];

const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/);
const signature = z.string().regex(/^0x[0-9a-fA-F]{130}$/);
/**
 * The requests' shapes as signin.ts checks them by hand (documented only: its own checks answer
 * each field's refusal in its own words, and verify looks at the sanctions list before the nonce).
 */
const challengeRequest = z.object({ address, purpose: z.enum(["revoke-all"]).optional() }).strict();
const verifyRequest = z.object({ address, signature, nonce: z.string().optional() }).strict();

// The host guard has vetted Host: it is one this server answers for.
const hostOf = (c: Context<AppEnv>) => c.req.header("host") ?? "";

/** SPEC.md "Sign-in and keys". */
export const authRoutes = [
  route<AuthService>({
    method: "post",
    path: "/auth/challenge",
    auth: "none",
    limits: SIGN_IN,
    summary: "A sign-in (or revoke-all) challenge",
    documents: { body: challengeRequest },
    answer: ["message", "nonce"],
    errors: ["BAD_REQUEST", "AUTH_DOMAIN_UNSET", "RATE_LIMITED", "SANCTIONED"],
    handle: ({ body, c }, s) => createChallenge(s, body, hostOf(c), c.get("clientAddr")),
  }),
  route<AuthService>({
    method: "post",
    path: "/auth/verify",
    auth: "none",
    lockout: true,
    limits: SIGN_IN,
    summary: "A signed challenge for an API key",
    documents: { body: verifyRequest },
    answer: ["api_key", "key_id", "expires_at", "wallet"],
    errors: [
      "BAD_REQUEST",
      "CHALLENGE_EXPIRED",
      "BAD_SIGNATURE",
      "NOT_PARTNER_AGENT",
      "PARTNER_UNAVAILABLE",
      "RATE_LIMITED",
      "SANCTIONED",
      "SIGNUP_CAPPED",
      "KEYS_CAPPED",
      "AUTH_DOMAIN_UNSET",
    ],
    handle: ({ body, c }, s) => verifySignIn(s, body, c.get("clientAddr"), hostOf(c)),
  }),
  route<AuthService>({
    method: "post",
    path: "/auth/revoke-all",
    auth: "signature",
    lockout: true,
    limits: SIGN_IN,
    summary: "Revokes every key of a wallet with its signature",
    documents: { body: verifyRequest },
    answer: ["wallet", "revoked"],
    errors: ["BAD_REQUEST", "BAD_SIGNATURE", "CHALLENGE_EXPIRED", "RATE_LIMITED"],
    handle: ({ body, c }, s) => revokeAll(s, body, hostOf(c), c.get("clientAddr")),
  }),
  route<AuthService>({
    method: "get",
    path: "/auth/me",
    auth: "key",
    limits: [],
    summary: "The key's wallet and account",
    answer: ["wallet", "key_id", "expires_at"],
    errors: KEYED,
    handle: async ({ c }, s) => {
      const key = c.get("key");
      const partner = await partnerAgentOf(s, key.wallet);
      return {
        wallet: key.wallet,
        account: key.account,
        key_id: key.keyId,
        expires_at: key.expiresAt,
        partner_agent: partner.agent,
      };
    },
  }),
  route<AuthService>({
    method: "post",
    path: "/auth/revoke",
    auth: "key",
    // A sanctioned wallet's key may still revoke itself; everything else it asks is refused.
    evenSanctioned: true,
    limits: [],
    summary: "Revokes the calling key",
    answer: ["revoked", "key_id"],
    errors: KEYED,
    handle: async ({ c }, s) => {
      const key = c.get("key");
      await revokeKey(s, key.keyId);
      return { revoked: true, key_id: key.keyId, wallet: key.wallet };
    },
  }),
];
