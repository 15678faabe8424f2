import { Hono } from "hono";
import type { AppEnv } from "../deps.js";
import { checkHealth } from "./health.js";
import { publicConfig } from "./config.js";
import { publicLimit } from "../http/limits.js";
import type { HttpKit } from "../http/kit.js";
import type { Services } from "../services.js";

export const SERVICE_NAME = "pit-trading-service";

/** SPEC.md "Server": config, health, stats (treasury: api/treasury/routes.ts). */
export function serverRoutes(s: Pick<Services, "deps" | "stats">, http: HttpKit) {
  const { deps, stats } = s;
  const { limiter } = http;
  const config = publicConfig(deps.config);
  const app = new Hono<AppEnv>();
  for (const path of ["/config", "/health", "/stats"]) {
    app.use(path, publicLimit(limiter));
  }
  // Immutable for the life of the process: serialised once, not per request.
  const configJson = JSON.stringify(config);
  app.get("/config", (c) => c.body(configJson, 200, { "Content-Type": "application/json" }));
  app.get("/stats", async (c) => c.json(await stats.get()));
  app.get("/health", async (c) => {
    const health = await checkHealth(deps);
    if (health.status === "down") c.header("Retry-After", "5");
    return c.json({ status: health.status, service: SERVICE_NAME, version: deps.config.version, checks: health.checks }, health.status === "down" ? 503 : 200);
  });
  return app;
}
