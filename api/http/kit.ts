import { every } from "hono/combine";
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../deps.js";
import type { Services } from "../services.js";
import { keyWalletNotSanctioned, requireKey } from "./auth.js";
import type { Limiter } from "./rateLimit.js";

/** The HTTP pieces every domain's routes share, built once per app. */
export type HttpKit = {
  limiter: Limiter;
  /** A live key whose wallet is not sanctioned. */
  keyed: MiddlewareHandler<AppEnv>;
  /** A live key, sanctioned or not: for routes that let a sanctioned key end what it started. */
  keyedEvenSanctioned: MiddlewareHandler<AppEnv>;
};

export function httpKit(s: Pick<Services, "signIn">, limiter: Limiter): HttpKit {
  const keyedEvenSanctioned = requireKey(s.signIn, limiter);
  return { limiter, keyedEvenSanctioned, keyed: every(keyedEvenSanctioned, keyWalletNotSanctioned(s.signIn)) };
}
