import { KEYED } from "../errors/groups.js";
import { routesFor, type RawCall } from "../http/route.js";
import { challengeAnswer, meAnswer, revokeAllAnswer, revokeAnswer, verifyAnswer } from "./answers.js";
import { AUTH_OVERALL, RATE_RULES } from "../http/rateLimit.js";
import type { Take } from "../http/limits.js";
import {
  challengeRequest,
  createChallenge,
  partnerAgentOf,
  revokeAll,
  revokeAllRequest,
  revokeKey,
  signInDomain,
  verifyRequest,
  verifySignIn,
  type SignInDeps,
  type SignInOrigin,
} from "./signin.js";

/** What SPEC "Sign-in and keys" works with: the sign-in's own dependencies (keys, challenges, chain). */
export type AuthService = SignInDeps;

/** The sign-in buckets: per client, and for the whole service. */
const SIGN_IN: Take[] = [
  ["auth", RATE_RULES.auth, "client"],
  ["auth", AUTH_OVERALL, "overall"],
];

// The host guard has vetted Host: it is one this server answers for.
const origin = ({ c }: RawCall): SignInOrigin => ({
  host: c.req.header("host") ?? "",
  clientAddr: c.get("clientAddr"),
});

const route = routesFor<AuthService>({
  name: "Sign-in and keys",
  description:
    "Wallet sign-in (EIP-4361 message, EIP-191 signature) that issues an API key bound to one wallet, " +
    "and its revocation.",
});

/** SPEC.md "Sign-in and keys". */
export const authRoutes = [
  route({
    method: "post",
    path: "/auth/challenge",
    auth: "none",
    limits: SIGN_IN,
    summary: "A sign-in (or revoke-all) challenge",
    description:
      "A sign-in challenge for a wallet: an EIP-4361 message naming the server's configured domain " +
      "(never the Host header), chain 4663, the address, a random nonce and an expiry 5 minutes away. " +
      "Verify those before signing it with personal_sign. Single use; up to five open per wallet. With " +
      "purpose `revoke-all` the challenge can only revoke every key, never sign in.",
    // No sign-in domain: 503 before the body is read.
    first: (_, s) => signInDomain(s),
    body: challengeRequest,
    answer: challengeAnswer,
    errors: ["BAD_REQUEST", "AUTH_DOMAIN_UNSET", "RATE_LIMITED", "SANCTIONED"],
    handle: (call, s) => createChallenge(s, call.body, origin(call)),
  }),
  route({
    method: "post",
    path: "/auth/verify",
    auth: "none",
    lockout: true,
    limits: SIGN_IN,
    summary: "A signed challenge for an API key",
    description:
      "Exchanges the signed challenge for an API key bound to the wallet: the server recovers the " +
      "signer of the message and, if it is the address, issues `pit_w_\u2026` valid 30 days. The key is " +
      "shown once; only its SHA-256 is stored. Send the nonce to name one open challenge (else the " +
      "newest is tried first).",
    body: verifyRequest,
    answer: verifyAnswer,
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
    handle: (call, s) => verifySignIn(s, call.body, origin(call)),
  }),
  route({
    method: "post",
    path: "/auth/revoke-all",
    auth: "signature",
    lockout: true,
    limits: SIGN_IN,
    summary: "Revokes every key of a wallet with its signature",
    description:
      "Revokes every live key of a wallet, proven by the wallet's signature of a `revoke-all` challenge" +
      " (no key needed): answers the wallet and how many keys were live.",
    body: revokeAllRequest,
    answer: revokeAllAnswer,
    errors: ["BAD_REQUEST", "BAD_SIGNATURE", "CHALLENGE_EXPIRED", "RATE_LIMITED"],
    handle: (call, s) => revokeAll(s, call.body, origin(call)),
  }),
  route({
    method: "get",
    path: "/auth/me",
    auth: "key",
    limits: [],
    summary: "The key's wallet and account",
    description: "The calling key's wallet, account, key id, expiry and partner-agent record.",
    answer: meAnswer,
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
  route({
    method: "post",
    path: "/auth/revoke",
    auth: "key",
    // A sanctioned wallet's key may still revoke itself; everything else it asks is refused.
    evenSanctioned: true,
    limits: [],
    summary: "Revokes the calling key",
    description: "Revokes the calling key; any later use of it is 401 UNAUTHORIZED.",
    answer: revokeAnswer,
    errors: KEYED,
    handle: async ({ c }, s) => {
      const key = c.get("key");
      await revokeKey(s, key.keyId);
      return { revoked: true, key_id: key.keyId, wallet: key.wallet };
    },
  }),
];
