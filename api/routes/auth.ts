import { Hono } from "hono";
import type { AppDeps, AppEnv } from "../deps.js";
import { ApiError } from "../errors.js";
import { keyWalletNotSanctioned, requireKey } from "../middleware/auth.js";
import { limit } from "../middleware/limits.js";
import { AUTH_OVERALL, RATE_RULES, type RateLimiter } from "../rateLimit.js";
import { createChallenge, partnerAgentOf, revokeAll, revokeKey, verifySignIn, type SignInDeps } from "../signin.js";

/** SPEC.md "Sign-in and keys". */
export function authRoutes(deps: AppDeps, limiter: RateLimiter) {
  const d: SignInDeps = { db: deps.db, config: deps.config, chain: deps.chain, clock: deps.clock ?? Date.now };
  const app = new Hono<AppEnv>();
  const signInLimits = [limit(limiter, "auth", RATE_RULES.auth, "client"), limit(limiter, "auth", AUTH_OVERALL, "overall")] as const;
  const failedAuth = (fn: () => Promise<unknown>, clientAddr: string) =>
    fn().catch((err) => {
      if (err instanceof ApiError && (err.code === "BAD_SIGNATURE" || err.code === "CHALLENGE_EXPIRED")) limiter.take(`failedAuth:client:${clientAddr}`, RATE_RULES.failedAuth);
      throw err;
    });
  const notLocked = (clientAddr: string) => {
    const wait = limiter.peek(`failedAuth:client:${clientAddr}`, RATE_RULES.failedAuth);
    if (wait > 0) throw new ApiError(429, "RATE_LIMITED", "too many failed authentications from this address", { retry_after_s: Math.ceil(wait) }, wait);
  };
  app.post("/challenge", ...signInLimits, async (c) => c.json(await createChallenge(d, c.get("body"))));

  app.post("/verify", ...signInLimits, async (c) => {
    notLocked(c.get("clientAddr"));
    return c.json(await failedAuth(() => verifySignIn(d, c.get("body"), c.get("clientAddr")), c.get("clientAddr")) as object);
  });

  app.post("/revoke-all", ...signInLimits, async (c) => {
    notLocked(c.get("clientAddr"));
    return c.json(await failedAuth(() => revokeAll(d, c.get("body")), c.get("clientAddr")) as object);
  });

  const keyed = requireKey(d, limiter);
  // A sanctioned wallet's key may still revoke itself; everything else it asks is refused.
  app.get("/me", keyed, keyWalletNotSanctioned(d), async (c) => {
    const key = c.get("key");
    const partner = await partnerAgentOf(d, key.wallet);
    return c.json({ wallet: key.wallet, account: key.account, key_id: key.keyId, expires_at: key.expiresAt, partner_agent: partner.agent });
  });

  app.post("/revoke", keyed, async (c) => {
    const key = c.get("key");
    await revokeKey(d, key.keyId);
    return c.json({ revoked: true, key_id: key.keyId, wallet: key.wallet });
  });
  return app;
}
