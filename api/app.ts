import { Hono } from "hono";
import type { AppDeps, AppEnv } from "./deps.js";
import { notFound, onError, wrongMethodOrNotFound } from "./http/errors.js";
import { clientAddress, countryGuard, csrfGuard, hostGuard, jsonBody } from "./http/guards.js";
import { noStore } from "./http/noStore.js";
import { requestLog } from "./http/requestLog.js";
import { RateLimiter } from "./http/rateLimit.js";
import { RedisLimiter } from "./http/redisLimiter.js";
import { treasuryPageRoutes } from "./treasury/routes.js";
import { leaguePageRoutes } from "./league/routes.js";
import { openApiRoutes } from "./openapi/routes.js";
import { mcpRoutes } from "./mcp/routes.js";
import { docsRoutes } from "./docs/routes.js";
import { httpKit } from "./http/kit.js";
import { buildServices } from "./services.js";
import { mountRoutes } from "./http/route.js";
import { API_ROUTES, MOUNTS } from "./routes.js";
import type { Mount } from "./http/route.js";
import type { Services } from "./services.js";
import { viewsLagBlocks } from "./server/index.js";
import { probeViewsLag } from "../lib/metrics.js";

/**
 * The Hono service. Built from explicit dependencies so tests, Ponder's embedded server
 * (src/api/index.ts) and the standalone API process (scripts/api.ts) all run the same app.
 * Order matters: log and no-store wrap everything; then host, client address, country, browser
 * rules and the JSON body, so that routes only ever see a vetted request.
 * The workers (relay watcher, stats loop, treasury week closer and preview, hosted scheduler, league settler and
 * standings) start with the app; `stop()` ends them (the
 * server's close should call it).
 */
export function createApp(deps: AppDeps, mounts: readonly Mount<Services>[] = MOUNTS) {
  // The routes, each declared once (api/routes.ts): mounted here, and the OpenAPI document and MCP's tools built from
  // the same list.
  // The service's own list is one array (API_ROUTES), so the OpenAPI document built from it is kept across apps.
  const entries = mounts === MOUNTS ? API_ROUTES : mounts.flatMap((m) => m.entries);
  // With REDIS_URL the buckets are shared by every instance; otherwise this instance's memory.
  const ownLimiter = deps.limiter
    ? null
    : deps.config.redisUrl
      ? new RedisLimiter(deps.config.redisUrl, "pit:rl:", deps.config.rateLimits)
      : null;
  const limiter =
    deps.limiter ?? ownLimiter ?? new RateLimiter(deps.clock ?? Date.now, 100_000, deps.config.rateLimits);
  const services = buildServices(deps);
  const http = httpKit(services.keyChecks, limiter);
  const v1 = new Hono<AppEnv>();
  for (const m of mounts) mountRoutes(v1, m.entries, m.service(services), http);
  v1.route("/", openApiRoutes({ version: deps.config.version, routes: entries }, http));

  const app = new Hono<AppEnv>();
  app.use("*", requestLog(deps.logger));
  app.use("*", noStore);
  app.use("*", hostGuard(deps.config));
  app.use("*", clientAddress(deps.config));
  app.use("*", countryGuard(deps.config));
  app.use("*", csrfGuard(deps.config));
  app.use("*", jsonBody);
  app.route("/api/v1", v1);
  app.route("/", treasuryPageRoutes(services, http));
  app.route(
    "/",
    mcpRoutes((req, env) => app.fetch(req, env), deps.config.version, limiter, entries),
  );
  app.route("/", leaguePageRoutes(services.league, http));
  const { version, chainId, publicOrigin } = deps.config;
  app.route("/", docsRoutes({ version, chainId, publicOrigin }, http));
  // A known route (parameterised ones too) with the wrong method is 405 with Allow; other paths 404.
  app.all("/api/v1/*", wrongMethodOrNotFound(app.routes));
  // Mounted inside Ponder, the parent's notFound would answer plain text: catch the rest here.
  app.all("*", notFound);
  app.notFound(notFound);
  app.onError(onError);
  services.watcher.start();
  services.stats.start();
  services.treasury.closer.start();
  services.treasury.reader.start();
  if (deps.hostedScheduler?.intervalMs !== 0) services.hosted.scheduler.start();
  if (deps.league?.settleIntervalMs !== 0) services.league.settler.start();
  services.league.boards.start();
  const unprobe = probeViewsLag(() => viewsLagBlocks(deps));
  const stop = async () => {
    unprobe();
    await services.hosted.scheduler.stop();
    await services.league.boards.stop();
    await services.league.settler.stop();
    await services.watcher.stop();
    await services.stats.stop();
    await services.treasury.closer.stop();
    await services.treasury.reader.stop();
    await services.signIn.revocations?.close();
    await ownLimiter?.close();
    await services.ownScreenBudget?.close();
  };
  return Object.assign(app, { services, stop });
}
