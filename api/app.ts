import { Hono } from "hono";
import type { AppDeps, AppEnv } from "./deps.js";
import { ApiError } from "./errors.js";
import { notFound, onError, respondError } from "./middleware/errors.js";
import { clientAddress, countryGuard, csrfGuard, hostGuard, jsonBody } from "./middleware/guards.js";
import { noStore } from "./middleware/noStore.js";
import { requestLog } from "./middleware/requestLog.js";
import { RateLimiter } from "./rateLimit.js";
import { authRoutes } from "./routes/auth.js";
import { serverRoutes } from "./routes/server.js";
import { tokenRoutes } from "./routes/tokens.js";
import { liveRoutes } from "./routes/live.js";
import { meRoutes } from "./routes/me.js";
import { createTokens } from "./tokens.js";

/**
 * The Hono service. Built from explicit dependencies so tests, Ponder's embedded server
 * (src/api/index.ts) and the standalone API process (scripts/api.ts) all run the same app.
 * Order matters: log and no-store wrap everything; then host, client address, country, browser
 * rules and the JSON body, so that routes only ever see a vetted request.
 */
export function createApp(deps: AppDeps) {
  const limiter = deps.limiter ?? new RateLimiter(deps.clock ?? Date.now, 100_000, deps.config.rateLimits);
  const v1 = new Hono<AppEnv>();
  v1.route("/", serverRoutes(deps, limiter));
  v1.route("/auth", authRoutes(deps, limiter));
  // One registry for tokens and trading: screens and their caches are shared.
  const tokens = createTokens({ db: deps.db, config: deps.config, chain: deps.chain, indexed: deps.indexed, shield: deps.shield ?? null, limiter, clock: deps.clock ?? Date.now });
  v1.route("/tokens", tokenRoutes(deps, limiter, tokens));
  const live = liveRoutes(deps, limiter, tokens);
  v1.route("/live", live.app);
  v1.route("/me", meRoutes(deps, limiter, live.trading.ledger));

  const app = new Hono<AppEnv>();
  app.use("*", requestLog(deps.logger));
  app.use("*", noStore);
  app.use("*", hostGuard(deps.config));
  app.use("*", clientAddress(deps.config));
  app.use("*", countryGuard(deps.config));
  app.use("*", csrfGuard(deps.config));
  app.use("*", jsonBody);
  app.route("/api/v1", v1);
  // A known path with the wrong method is 405, not 404.
  const known = new Set(v1.routes.filter((r) => r.method !== "ALL").map((r) => r.path));
  app.all("/api/v1/*", (c) =>
    known.has(c.req.path.slice("/api/v1".length))
      ? respondError(c, new ApiError(405, "METHOD_NOT_ALLOWED", `${c.req.method} is not allowed on ${c.req.path}`))
      : respondError(c, new ApiError(404, "NOT_FOUND", `no route ${c.req.method} ${c.req.path}`)),
  );
  // Mounted inside Ponder, the parent's notFound would answer plain text: catch the rest here.
  app.all("*", notFound);
  app.notFound(notFound);
  app.onError(onError);
  return app;
}
