import type { MiddlewareHandler } from "hono";

/**
 * Every answer is per-request truth: never cached by a browser or proxy. Set before the handler
 * runs so Hono builds the response with it (setting headers afterwards copies the response).
 */
export const noStore: MiddlewareHandler = async (c, next) => {
  c.header("Cache-Control", "no-store");
  await next();
};
