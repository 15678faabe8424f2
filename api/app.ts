import { Hono } from "hono";
import type { AppDeps, AppEnv } from "./deps.js";
import { ApiError } from "./errors.js";
import { notFound, onError, respondError } from "./middleware/errors.js";
import { noStore } from "./middleware/noStore.js";
import { requestLog } from "./middleware/requestLog.js";
import { serverRoutes } from "./routes/server.js";

/**
 * The Hono service. Built from explicit dependencies so tests, Ponder's embedded server
 * (src/api/index.ts) and the standalone API process all run the same app.
 */
export function createApp(deps: AppDeps) {
  const v1 = new Hono<AppEnv>();
  v1.route("/", serverRoutes(deps));

  const app = new Hono<AppEnv>();
  app.use("*", requestLog(deps.logger));
  app.use("*", noStore);
  app.route("/api/v1", v1);
  // A known path with the wrong method is 405, not 404.
  app.all("/api/v1/*", (c) => {
    const known = v1.routes.some((r) => r.path === c.req.path.slice("/api/v1".length) && r.method !== "ALL");
    return known
      ? respondError(c, new ApiError(405, "METHOD_NOT_ALLOWED", `${c.req.method} is not allowed on ${c.req.path}`))
      : respondError(c, new ApiError(404, "NOT_FOUND", `no route ${c.req.method} ${c.req.path}`));
  });
  // Mounted inside Ponder, the parent's notFound would answer plain text: catch the rest here.
  app.all("*", notFound);
  app.notFound(notFound);
  app.onError(onError);
  return app;
}
