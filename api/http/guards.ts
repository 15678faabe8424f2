import type { MiddlewareHandler } from "hono";
import { getConnInfo } from "@hono/node-server/conninfo";
import type { Config } from "../../lib/config.js";
import type { AppEnv } from "./env.js";
import { blockListOf, isTrusted } from "./serve.js";
import { Refusal } from "../errors/index.js";
import { clientKeyOf } from "../../lib/netAddress.js";

/** 421 UNKNOWN_HOST for a Host this server does not answer for. */
export function hostGuard(config: Pick<Config, "allowedHosts">): MiddlewareHandler<AppEnv> {
  const allowed = new Set(config.allowedHosts);
  return async (c, next) => {
    const host = c.req.header("host")?.toLowerCase();
    if (!host || !allowed.has(host)) throw unknownHost(host);
    await next();
  };
}

/** The refusal of a Host this server does not answer for (also `npm run stack`'s balancer's, for none at all). */
export const unknownHost = (host: string | undefined) =>
  new Refusal("UNKNOWN_HOST", `this server does not answer for host ${JSON.stringify(host ?? "")}`);

/**
 * The client address: the socket's, or, when the socket's peer is one of TRUSTED_PROXIES, the
 * last entry of the configured proxy header (the address that proxy saw). A peer that is not a
 * configured proxy cannot choose its address by sending the header itself. Kept as the client's
 * key (lib/netAddress): an IPv6 client is its /64, so rotating addresses inside it finds the same
 * rate buckets, lockout and sign-up caps; ::ffff:a.b.c.d is a.b.c.d.
 */
export function clientAddress(
  config: Pick<Config, "trustedProxyHeader" | "trustedProxies">,
): MiddlewareHandler<AppEnv> {
  const proxies = blockListOf(config.trustedProxies);
  return async (c, next) => {
    let peer: string | undefined;
    try {
      peer = getConnInfo(c).remote.address;
    } catch {
      peer = undefined;
    }
    let addr = peer;
    if (config.trustedProxyHeader && peer && isTrusted(proxies, peer))
      addr = c.req.header(config.trustedProxyHeader)?.split(",").pop()?.trim() || peer;
    c.set("clientAddr", clientKeyOf(addr || "unknown"));
    await next();
  };
}

/** 451 COUNTRY_BLOCKED from a trusted edge's country header (only when one is configured). */
export function countryGuard(config: Pick<Config, "countryHeader" | "blockedCountries">): MiddlewareHandler<AppEnv> {
  const blocked = new Set(config.blockedCountries);
  return async (c, next) => {
    if (config.countryHeader) {
      const code = c.req.header(config.countryHeader)?.trim().toUpperCase();
      // "IR" and "IR-07" are blocked by IR; "UA-43" (Crimea) by itself, not all of UA.
      if (code && (blocked.has(code) || blocked.has(code.split("-")[0]!))) {
        throw new Refusal("COUNTRY_BLOCKED", "requests from this country or region are not served");
      }
    }
    await next();
  };
}

export const MAX_BODY_BYTES = 64 * 1024;
const BODY_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/**
 * What a request's body framing is refused for before any byte of it is read (null: nothing): a chunked
 * body (411 LENGTH_REQUIRED), a Content-Length that is not a number (400), one past the cap (413). The
 * API's jsonBody asks, and so does `npm run stack`'s balancer, the edge in front of it.
 */
export function framingRefusal(
  method: string,
  transferEncoding: string | undefined,
  contentLength: string | undefined,
): Refusal | null {
  if (!BODY_METHODS.has(method)) return null;
  if (transferEncoding && transferEncoding.toLowerCase() !== "identity")
    return new Refusal("LENGTH_REQUIRED", "send the body with a plain Content-Length (chunked bodies are refused)");
  if (contentLength !== undefined && !/^\d{1,10}$/.test(contentLength))
    return new Refusal("BAD_REQUEST", "Content-Length must be a number");
  if (contentLength !== undefined && Number(contentLength) > MAX_BODY_BYTES)
    return new Refusal("BAD_REQUEST", `body over ${MAX_BODY_BYTES} bytes`, {}, { context: "too_large" });
  return null;
}

/**
 * Request bodies: plain Content-Length only (411 LENGTH_REQUIRED for chunked), at most 64 KB
 * (413 BAD_REQUEST), a JSON object (400 BAD_REQUEST). An absent body is `{}`.
 */
export const jsonBody: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (!BODY_METHODS.has(c.req.method)) return next();
  const cl = c.req.header("content-length");
  const refused = framingRefusal(c.req.method, c.req.header("transfer-encoding"), cl);
  if (refused) throw refused;
  const raw = cl === undefined || cl === "0" ? "" : await c.req.text();
  if (Buffer.byteLength(raw) > MAX_BODY_BYTES)
    throw new Refusal("BAD_REQUEST", `body over ${MAX_BODY_BYTES} bytes`, {}, { context: "too_large" });
  let body: unknown = {};
  if (raw.trim() !== "") {
    try {
      body = JSON.parse(raw);
    } catch {
      throw new Refusal("BAD_REQUEST", "body is not valid JSON");
    }
  }
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw new Refusal("BAD_REQUEST", "body must be a JSON object");
  c.set("body", body as Record<string, unknown>);
  await next();
};

/**
 * Browser rules: a POST with an Origin must come from our own origin; a POST with cookies must
 * be JSON and carry X-Pit-Client. Agents send neither and are unaffected.
 */
export function csrfGuard(config: Pick<Config, "allowedHosts">): MiddlewareHandler<AppEnv> {
  const origins = new Set(config.allowedHosts.flatMap((h) => [`https://${h}`, `http://${h}`]));
  return async (c, next) => {
    if (BODY_METHODS.has(c.req.method)) {
      const origin = c.req.header("origin");
      if (origin !== undefined && !origins.has(origin.toLowerCase()))
        throw new Refusal("CSRF_REFUSED", "cross-origin request refused");
      if (c.req.header("cookie") !== undefined) {
        const json = /^application\/json\b/i.test(c.req.header("content-type") ?? "");
        if (!json || c.req.header("x-pit-client") === undefined)
          throw new Refusal("CSRF_REFUSED", "a request with cookies must be JSON and carry X-Pit-Client");
      }
    }
    await next();
  };
}
