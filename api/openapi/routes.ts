import { createHash } from "node:crypto";
import { gzipSync } from "node:zlib";
import { Hono, type Context } from "hono";
import type { AppEnv } from "../http/env.js";
import type { RouteEntry } from "../http/route.js";
import { publicLimit } from "../http/limits.js";
import type { HttpKit } from "../http/kit.js";
import { openApiDocument } from "./document.js";

/**
 * A fixed answer's bytes, plain and gzip-compressed, each with its strong ETag (a content coding is its own
 * representation).
 */
type Encoded = { plain: Uint8Array; gzip: Uint8Array; etag: string; gzipEtag: string };

/** Serialised, compressed and hashed once: a flood of reads costs a bucket lookup and a write of bytes already made. */
export function encodeOnce(body: unknown): Encoded {
  const plain = new TextEncoder().encode(JSON.stringify(body));
  const hash = createHash("sha256").update(plain).digest("base64url").slice(0, 32);
  return { plain, gzip: gzipSync(plain, { level: 9 }), etag: `"${hash}"`, gzipEtag: `"${hash}-gz"` };
}

/** Whether Accept-Encoding takes gzip (RFC 9110 12.5.3: gzip or *, at a q above 0). */
export function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  return header.split(",").some((part) => {
    const [coding, ...params] = part.trim().toLowerCase().split(";");
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    return (coding === "gzip" || coding === "x-gzip" || coding === "*") && (q === undefined || Number(q.slice(2)) > 0);
  });
}

/** If-None-Match naming either representation's tag (or *): the client holds this document. */
const held = (header: string | undefined, e: Encoded) =>
  !!header && header.split(",").some((t) => [e.etag, e.gzipEtag, "*"].includes(t.trim().replace(/^W\//, "")));

function answer(c: Context<AppEnv>, e: Encoded): Response {
  const gzip = acceptsGzip(c.req.header("accept-encoding"));
  // Cache-Control stays SPEC's no-store (set for every answer): a client keeping the ETag itself asks with
  // If-None-Match.
  const headers: Record<string, string> = { ETag: gzip ? e.gzipEtag : e.etag, Vary: "Accept-Encoding" };
  if (held(c.req.header("if-none-match"), e)) return c.body(null, 304, headers);
  const bytes = gzip ? e.gzip : e.plain;
  return c.body(bytes as Uint8Array<ArrayBuffer>, 200, {
    ...headers,
    "Content-Type": "application/json",
    ...(gzip ? { "Content-Encoding": "gzip" } : {}),
  });
}

/**
 * The encoded document per route list and version, shared by every app a process builds over them: building and
 * compressing it is 70-100 ms of CPU, and a test run builds a few hundred apps over the same list.
 */
const documents = new WeakMap<readonly RouteEntry[], Map<string, Encoded>>();
function encodedDocument(s: { version: string; routes: readonly RouteEntry[] }): Encoded {
  let byVersion = documents.get(s.routes);
  if (!byVersion) documents.set(s.routes, (byVersion = new Map()));
  let doc = byVersion.get(s.version);
  if (!doc) byVersion.set(s.version, (doc = encodeOnce(openApiDocument(s))));
  return doc;
}

/** GET /api/v1/openapi.json: the document, built once, behind the public reads' buckets (per client and overall). */
export function openApiRoutes(s: { version: string; routes: readonly RouteEntry[] }, http: Pick<HttpKit, "limiter">) {
  const app = new Hono<AppEnv>();
  const doc = encodedDocument(s);
  app.get("/openapi.json", publicLimit(http.limiter), (c) => answer(c, doc));
  return app;
}
