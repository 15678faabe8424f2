import { Hono, type Context } from "hono";
import { HTTPException } from "hono/http-exception";
import { StreamableHTTPTransport } from "@hono/mcp";
import type { AppEnv, InnerCall } from "../http/env.js";
import { Refusal } from "../errors/index.js";
import { respondError } from "../http/errors.js";
import { mcpLimit } from "../http/limits.js";
import type { Limiter } from "../http/rateLimit.js";
import type { RouteEntry } from "../http/route.js";
import { mcpServer, type RestCall } from "./server.js";

/** The whole app's fetch: tools call its REST routes in process. */
export type AppFetch = (request: Request, env: unknown) => Response | Promise<Response>;

/**
 * Headers of the /mcp request that the inner REST request does not take: body framing (the inner
 * body is the tool's, framed anew) and MCP's own. Everything else goes along, so the inner request
 * is judged as the caller (Authorization, Host, proxy and country headers, Origin, cookies).
 */
const NOT_FORWARDED = new Set([
  "content-length",
  "content-type",
  "transfer-encoding",
  "accept",
  "accept-encoding",
  "connection",
  "keep-alive",
  "mcp-session-id",
  "mcp-protocol-version",
  "last-event-id",
]);

/**
 * REST calls as the caller of this /mcp request; the node socket (c.env) goes along for the client address, marked
 * as an inner call (InnerCall: the /mcp request alone is counted in the request metrics).
 * A client that cannot set headers may put its key in the URL (`/mcp?key=pit_w_...`): it is sent on as the
 * Authorization header, which wins when both are there. The request log never records a query string,
 * but proxies and clients may: the header is the better place.
 */
function restAs(c: Context<AppEnv>, appFetch: AppFetch): RestCall {
  const urlKey = c.req.query("key");
  return async (method, path, body) => {
    const headers = new Headers({ accept: "application/json" });
    c.req.raw.headers.forEach((v, k) => void (NOT_FORWARDED.has(k) ? 0 : headers.set(k, v)));
    if (urlKey && !headers.has("authorization")) headers.set("authorization", `Bearer ${urlKey}`);
    const text = body === undefined ? undefined : JSON.stringify(body);
    if (text !== undefined) {
      // jsonBody reads an absent Content-Length as an empty body, and a Request carries none by itself.
      headers.set("content-type", "application/json");
      headers.set("content-length", String(Buffer.byteLength(text)));
    }
    const inner: InnerCall = { via: "mcp" };
    const res = await appFetch(new Request(new URL(path, c.req.url), { method, headers, body: text }), {
      ...(c.env as object | undefined),
      ...inner,
    });
    return { status: res.status, json: await res.json() };
  };
}

/**
 * MCP over Streamable HTTP at /mcp, stateless: a new server and transport per POST, bound to that
 * request's caller (a shared transport would mix callers' JSON-RPC ids and keys). JSON answers,
 * no SSE: every tool answers once. The app's jsonBody has already read the body (a JSON object:
 * batches, dropped from MCP in 2025-06-18, are 400), so the transport is handed the parsed one.
 * GET (a standalone SSE stream) and DELETE (a session) mean nothing without sessions: 405, which
 * MCP clients take as "no stream". Every POST spends its own bucket first (RATE_RULES.mcp).
 */
export function mcpRoutes(appFetch: AppFetch, version: string, limiter: Limiter, entries: readonly RouteEntry[]) {
  const app = new Hono<AppEnv>();
  app.post("/mcp", mcpLimit(limiter), async (c) => {
    const server = mcpServer(restAs(c, appFetch), version, entries);
    const transport = new StreamableHTTPTransport({ enableJsonResponse: true });
    try {
      await server.connect(transport);
      return (await transport.handleRequest(c, c.get("body"))) ?? c.body(null, 202);
    } catch (err) {
      // The transport's refusals are JSON-RPC errors for the MCP client: answer them as they are.
      if (err instanceof HTTPException) return err.getResponse();
      throw err;
    } finally {
      await server.close();
    }
  });
  app.all("/mcp", (c) => {
    c.header("Allow", "POST");
    return respondError(
      c,
      new Refusal(
        "METHOD_NOT_ALLOWED",
        `${c.req.method} is not allowed on /mcp (allowed: POST; this MCP server is stateless)`,
      ),
    );
  });
  return app;
}
