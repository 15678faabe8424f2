import type { Context, ErrorHandler, NotFoundHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import { ApiError } from "../errors.js";

export function respondError(c: Context, err: ApiError): Response {
  c.header("Cache-Control", "no-store");
  if (err.retryAfterS !== undefined) c.header("Retry-After", String(Math.max(1, Math.ceil(err.retryAfterS))));
  c.set("errorCode", err.code);
  return c.json(err.body(), err.status);
}

/** Every failure answers JSON; anything unexpected is a logged 500 without its stack in the body. */
export const onError: ErrorHandler = (err, c) => {
  if (err instanceof ApiError) return respondError(c, err);
  if (err instanceof HTTPException && err.status < 500) {
    return respondError(c, new ApiError(err.status as 400, "BAD_REQUEST", err.message || "bad request"));
  }
  c.get("log")?.error({ req_id: c.get("requestId"), err }, "unhandled error");
  return respondError(c, new ApiError(500, "INTERNAL", "internal error"));
};

export const notFound: NotFoundHandler = (c) => respondError(c, new ApiError(404, "NOT_FOUND", `no route ${c.req.method} ${c.req.path}`));
