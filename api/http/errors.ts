import type { Context, ErrorHandler, Handler, NotFoundHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import { METHOD_NAME_ALL } from "hono/router";
import { TrieRouter } from "hono/router/trie-router";
import { Refusal } from "../errors/index.js";
import { chainUnreachable } from "../../lib/chain.js";
import { refusals } from "../../lib/metrics.js";
import { showRefusedQuota, wholeSeconds } from "./limits.js";

/**
 * A refusal as SPEC's `{error: {code, message, ...}}`, plus `request_id` (beyond SPEC): the id the
 * request's log line and X-Request-Id header carry, so a report of a refusal finds its log line.
 * Every refusal the API answers passes here: pit_refusals_total counts it by code.
 */
export function respondError(c: Context, err: Refusal): Response {
  refusals.inc({ code: err.code });
  c.header("Cache-Control", "no-store");
  if (err.retryAfterS !== undefined) c.header("Retry-After", wholeSeconds(err.retryAfterS));
  c.set("errorCode", err.code);
  if (err.status === 429) showRefusedQuota(c, err);
  const body = err.body();
  const requestId: string | undefined = c.get("requestId");
  return c.json(requestId === undefined ? body : { error: { ...body.error, request_id: requestId } }, err.status);
}

/** Every failure answers JSON; anything unexpected is a logged 500 without its stack in the body. */
export const onError: ErrorHandler = (err, c) => {
  if (err instanceof Refusal) return respondError(c, err);
  // A node that did not answer is 502 RPC_UNAVAILABLE on every route, whichever read met it.
  if (chainUnreachable(err))
    return respondError(
      c,
      new Refusal("RPC_UNAVAILABLE", "the chain RPC did not answer; retry shortly", {}, { cause: err, retryAfterS: 2 }),
    );
  if (err instanceof HTTPException && err.status < 500) {
    return respondError(
      c,
      new Refusal(
        "BAD_REQUEST",
        err.message || "bad request",
        {},
        { cause: err, context: err.status === 413 ? "too_large" : undefined },
      ),
    );
  }
  c.get("log")?.error({ req_id: c.get("requestId"), err }, "unhandled error");
  return respondError(c, new Refusal("INTERNAL", "internal error", {}, { cause: err }));
};

export const notFound: NotFoundHandler = (c) =>
  respondError(c, new Refusal("NOT_FOUND", `no route ${c.req.method} ${c.req.path}`));

/**
 * The methods a path's routes take, matched by Hono's own router (so parameterised routes such as
 * /tokens/:address count) over an app's routes; middleware (method ALL) is not a route. HEAD comes
 * with GET, as Hono serves it. [] for a path no route matches.
 */
export function allowedMethods(routes: readonly { method: string; path: string }[]): (path: string) => string[] {
  const router = new TrieRouter<string>();
  for (const r of routes) if (r.method !== METHOD_NAME_ALL) router.add(METHOD_NAME_ALL, r.path, r.method);
  return (path) => {
    const methods = new Set(router.match("GET", path)[0].map(([method]) => method));
    if (methods.has("GET")) methods.add("HEAD");
    return [...methods].sort();
  };
}

/** The fallback after every route: a known path with the wrong method is 405 with Allow (SPEC), any other 404. */
export function wrongMethodOrNotFound(routes: readonly { method: string; path: string }[]): Handler {
  const allowed = allowedMethods(routes);
  return (c) => {
    const allow = allowed(c.req.path);
    if (allow.length === 0) return respondError(c, new Refusal("NOT_FOUND", `no route ${c.req.method} ${c.req.path}`));
    c.header("Allow", allow.join(", "));
    return respondError(
      c,
      new Refusal(
        "METHOD_NOT_ALLOWED",
        `${c.req.method} is not allowed on ${c.req.path} (allowed: ${allow.join(", ")})`,
      ),
    );
  };
}
