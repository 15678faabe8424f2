import { randomUUID } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import type { Logger } from "pino";
import { httpRequestDuration, methodLabel } from "../../lib/metrics.js";
import { innerCallOf } from "./env.js";

/**
 * Request id (kept from a sane X-Request-Id, else new) and one structured line per request:
 * id, method, route, status, code, ms. Never headers or bodies: they may hold keys or signatures.
 * Headers are set before the handler and no child logger is made: both cost on the hot path.
 * The same timing goes to pit_http_request_duration_seconds (lib/metrics.ts), labelled by the
 * route's declared pattern (`/api/v1/tokens/:address`; `/*` or `/api/v1/*` where no route
 * answered), never the raw path; a call made in process (innerCallOf: MCP's tools) only in its line, marked `via`.
 */
export function requestLog(logger: Logger): MiddlewareHandler {
  return async (c, next) => {
    const given = c.req.header("x-request-id");
    const id = given && /^[A-Za-z0-9._-]{1,64}$/.test(given) ? given : randomUUID();
    c.set("log", logger);
    c.set("requestId", id);
    c.header("X-Request-Id", id);
    const t0 = performance.now();
    await next();
    const s = (performance.now() - t0) / 1000;
    const route = c.req.routePath;
    const via = innerCallOf(c.env);
    if (!via)
      httpRequestDuration.observe({ method: methodLabel(c.req.method), route, status: String(c.res.status) }, s);
    logger.info(
      {
        req_id: id,
        ...(via ? { via } : {}),
        method: c.req.method,
        route,
        status: c.res.status,
        code: c.get("errorCode"),
        ms: Math.round(s * 10_000) / 10,
      },
      "request",
    );
  };
}
