import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { Hono } from "hono";
import type { AppEnv } from "../http/env.js";
import type { HttpKit } from "../http/kit.js";
import { publicLimit } from "../http/limits.js";
import { docsPage, homePage, llmsTxt } from "./page.js";

let redoc: Buffer | null = null;
/** Redoc's standalone script, read once from the installed package (served from our origin, never a CDN). */
function redocScript(): Buffer {
  redoc ??= readFileSync(createRequire(import.meta.url).resolve("redoc/bundles/redoc.standalone.js"));
  return redoc;
}

/**
 * /docs loads nothing from another origin, whatever the script would fetch (Redoc's credit line asks a CDN
 * for its logo: blocked, it shows the text alone). Redoc styles inline and searches in a blob worker.
 */
const DOCS_CSP =
  "default-src 'self'; script-src 'self'; worker-src 'self' blob:; style-src 'self' 'unsafe-inline'; " +
  "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'";

/**
 * The front door outside /api/v1: `/` (what this is, where to go), `/docs` (the OpenAPI document through
 * Redoc), `/llms.txt` (the same for a model). Public, behind the public reads' buckets like the other pages.
 * `/llms.txt` links absolutely: from the configured public origin (config publicOrigin, https://AUTH_DOMAIN), never
 * the request's where one is set (behind a TLS proxy the request arrives as http).
 */
export function docsRoutes(
  o: { version: string; chainId: number; publicOrigin?: string | null },
  http: Pick<HttpKit, "limiter">,
) {
  const app = new Hono<AppEnv>();
  const limited = publicLimit(http.limiter);
  app.get("/", limited, (c) => c.html(homePage(o)));
  app.get("/docs", limited, (c) => c.html(docsPage(), 200, { "Content-Security-Policy": DOCS_CSP }));
  app.get("/docs/redoc.standalone.js", limited, (c) =>
    // The one answer a browser may keep: it changes only with the pinned package.
    c.body(new Uint8Array(redocScript()), 200, {
      "Content-Type": "text/javascript; charset=utf-8",
      "Cache-Control": "public, max-age=3600",
    }),
  );
  app.get("/llms.txt", limited, (c) =>
    c.text(llmsTxt({ chainId: o.chainId, origin: o.publicOrigin ?? new URL(c.req.url).origin }), 200, {
      "Content-Type": "text/plain; charset=utf-8",
    }),
  );
  return app;
}
