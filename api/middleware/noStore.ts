import type { MiddlewareHandler } from "hono";

/** Every answer is per-request truth: never cached by a browser or proxy. */
export const noStore: MiddlewareHandler = async (c, next) => {
  await next();
  c.header("Cache-Control", "no-store");
};
