import { Hono, type Context, type MiddlewareHandler } from "hono";
import type { AppEnv } from "../deps.js";
import { Refusal } from "../errors/index.js";
import type { HttpKit } from "../http/kit.js";
import type { Services } from "../services.js";
import { countFailedAuth, notLockedOut } from "../http/auth.js";
import { limit } from "../http/limits.js";
import { AUTH_OVERALL, RATE_RULES } from "../http/rateLimit.js";
import { createChallenge, partnerAgentOf, revokeAll, revokeKey, verifySignIn} from "./signin.js";

/** SPEC.md "Sign-in and keys". */
export function authRoutes(s: Pick<Services, "signIn">, http: HttpKit) {
  const d = s.signIn;
  const { limiter } = http;
  const app = new Hono<AppEnv>();
  const signInLimits = [limit(limiter, ["auth", RATE_RULES.auth, "client"], ["auth", AUTH_OVERALL, "overall"])] as const;
  const failedAuth = (fn: () => Promise<unknown>, clientAddr: string) =>
    fn().catch(async (err) => {
      if (err instanceof Refusal && (err.code === "BAD_SIGNATURE" || err.code === "CHALLENGE_EXPIRED")) await countFailedAuth(limiter, clientAddr);
      throw err;
    });
  // Checked before the sign-in buckets: a locked-out client's attempts spend nothing, the
  // instance-wide bucket included.
  const notLocked: MiddlewareHandler<AppEnv> = async (c, next) => {
    await notLockedOut(limiter, c.get("clientAddr"));
    await next();
  };
  // The host guard has vetted Host: it is one this server answers for.
  const hostOf = (c: Context<AppEnv>) => c.req.header("host") ?? "";
  app.post("/challenge", ...signInLimits, async (c) => c.json(await createChallenge(d, c.get("body"), hostOf(c), c.get("clientAddr"))));

  app.post("/verify", notLocked, ...signInLimits, async (c) =>
    c.json(await failedAuth(() => verifySignIn(d, c.get("body"), c.get("clientAddr"), hostOf(c)), c.get("clientAddr")) as object),
  );

  app.post("/revoke-all", notLocked, ...signInLimits, async (c) =>
    c.json(await failedAuth(() => revokeAll(d, c.get("body"), hostOf(c), c.get("clientAddr")), c.get("clientAddr")) as object),
  );

  // A sanctioned wallet's key may still revoke itself; everything else it asks is refused.
  app.get("/me", http.keyed, async (c) => {
    const key = c.get("key");
    const partner = await partnerAgentOf(d, key.wallet);
    return c.json({ wallet: key.wallet, account: key.account, key_id: key.keyId, expires_at: key.expiresAt, partner_agent: partner.agent });
  });

  app.post("/revoke", http.keyedEvenSanctioned, async (c) => {
    const key = c.get("key");
    await revokeKey(d, key.keyId);
    return c.json({ revoked: true, key_id: key.keyId, wallet: key.wallet });
  });
  return app;
}
