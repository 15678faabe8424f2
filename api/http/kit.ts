import { every } from "hono/combine";
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./env.js";
import { keyWalletNotSanctioned, requireKey, type KeyChecks } from "./auth.js";
import type { Limiter } from "./rateLimit.js";

/** The HTTP pieces every domain's routes share, built once per app. */
export type HttpKit = {
  limiter: Limiter;
  /** A live key whose wallet is not sanctioned. */
  keyed: MiddlewareHandler<AppEnv>;
  /** A live key, sanctioned or not: for routes that let a sanctioned key end what it started. */
  keyedEvenSanctioned: MiddlewareHandler<AppEnv>;
};

/** `checks`: sign-in's key lookup and sanctions check, as the composition root hands them in. */
export function httpKit(checks: KeyChecks, limiter: Limiter): HttpKit {
  const keyedEvenSanctioned = requireKey(checks, limiter);
  return { limiter, keyedEvenSanctioned, keyed: every(keyedEvenSanctioned, keyWalletNotSanctioned(checks)) };
}
