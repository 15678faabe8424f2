import type { MiddlewareHandler } from "hono";
import type { AppEnv, KeyRecord } from "./env.js";
import { Refusal } from "../errors/index.js";
import { RATE_RULES, type Limiter } from "./rateLimit.js";
import { clientBuckets, rateLimited, showQuota } from "./limits.js";
import { LRUCache } from "lru-cache";
import type { Address } from "viem";

/**
 * What the edge asks of sign-in, handed in by the composition root (the edge imports no domain):
 * the live key an API key names, and a wallet's sanctions check (SANCTIONED, or ENGINE_UNAVAILABLE
 * when the list cannot be read).
 */
export type KeyChecks = {
  authenticate(apiKey: string): Promise<KeyRecord | null>;
  assertNotSanctioned(wallet: Address): Promise<void>;
};

/**
 * `Authorization: Bearer <api_key>`: 401 UNAUTHORIZED for no, unknown, expired or revoked keys.
 * Failed attempts drain the client address's failed-authentication bucket; once it is empty the
 * address's failed attempts are 429. The lockout is for authentication attempts only: a live key
 * passes even from a locked address (its users may share the address with whoever failed), and
 * spends from its own bucket (30, then 10 per second).
 */
export function requireKey(checks: Pick<KeyChecks, "authenticate">, limiter: Limiter): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const header = c.req.header("authorization") ?? "";
    // Auth schemes are case-insensitive (RFC 9110 11.1): bearer, Bearer, BEARER.
    const m = /^bearer +([A-Za-z0-9_-]{1,200})$/i.exec(header);
    const key = m ? await checks.authenticate(m[1]!) : null;
    if (!key) {
      await failedAuthentication(limiter, c.get("clientAddr"));
      throw new Refusal("UNAUTHORIZED", unauthorizedMessage(header, m !== null));
    }
    c.set("key", key);
    const { wait, quota } = await limiter.charge([{ key: `key:key:${key.keyId}`, rule: RATE_RULES.key }]);
    if (wait > 0) throw rateLimited(wait, "requests for this key", quota);
    showQuota(c, quota);
    await next();
  };
}

/**
 * What a 401 tells the caller to do: a key sent without `Bearer `, or under another scheme, is told
 * the header's form (it was never looked up, so "unknown key" would send its owner to sign in again).
 */
export function unauthorizedMessage(header: string, wellFormed: boolean): string {
  if (!header) return "send the API key as Authorization: Bearer <api_key>";
  if (wellFormed) return "unknown, expired or revoked API key: sign in again (POST /api/v1/auth/challenge)";
  if (/^[A-Za-z0-9_-]{1,200}$/.test(header.trim()))
    return "the Authorization header has no Bearer prefix: send it as Authorization: Bearer <api_key>";
  return "the Authorization header must be Bearer <api_key> (one space, the key as sign-in issued it)";
}

/** The address's failed-authentication buckets: its own and, for an IPv6 /64, its /56 and /48. */
const failBuckets = (clientAddr: string) => clientBuckets("failedAuth", RATE_RULES.failedAuth, clientAddr);

/** 429 while any of the address's failed-authentication buckets is empty (checked before any work). */
export async function notLockedOut(limiter: Limiter, clientAddr: string): Promise<void> {
  const buckets = failBuckets(clientAddr);
  const waits = await Promise.all(buckets.map((b) => limiter.wait(b.key, b.rule)));
  const wait = Math.max(0, ...waits);
  // The quota shown is the bucket that locks the address out (its burst; nothing left; Reset the wait).
  const limit = buckets[waits.indexOf(wait)]?.rule.burst ?? RATE_RULES.failedAuth.burst;
  if (wait > 0)
    throw rateLimited(wait, "failed authentications from this address", { limit, remaining: 0, resetS: wait });
}

/** Counts one failed authentication against the address and its prefixes. */
export async function countFailedAuth(limiter: Limiter, clientAddr: string): Promise<void> {
  await limiter.spend(failBuckets(clientAddr));
}

/** Refusals of a wallet's signed request that count as a failed authentication: a wrong or stale signature. */
const FAILED_SIGNATURE = new Set<string>(["BAD_SIGNATURE", "CHALLENGE_EXPIRED"]);

/** Runs a signed request's work; a wrong or stale signature it is refused for counts one failed authentication. */
export function countingFailedSignatures<T>(limiter: Limiter, clientAddr: string, work: () => Promise<T>): Promise<T> {
  return work().catch(async (err) => {
    if (err instanceof Refusal && FAILED_SIGNATURE.has(err.code)) await countFailedAuth(limiter, clientAddr);
    throw err;
  });
}

/** One failed key authentication: 429 once the address's bucket is empty, else counted. */
async function failedAuthentication(limiter: Limiter, clientAddr: string): Promise<void> {
  await notLockedOut(limiter, clientAddr);
  await countFailedAuth(limiter, clientAddr);
}

/**
 * 451 SANCTIONED when the key's wallet is on the sanctions list (a clean answer is trusted 60 s;
 * an unreadable list fails closed). Routes that let a sanctioned key end what it started (revoke)
 * leave it out.
 */
export function keyWalletNotSanctioned(checks: Pick<KeyChecks, "assertNotSanctioned">): MiddlewareHandler<AppEnv> {
  const clean = new LRUCache<string, true>({ max: 10_000, ttl: 60_000 });
  return async (c, next) => {
    const wallet = c.get("key").wallet;
    if (!clean.get(wallet)) {
      await checks.assertNotSanctioned(wallet);
      clean.set(wallet, true);
    }
    await next();
  };
}
