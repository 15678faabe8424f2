import { Hono } from "hono";
import type { AppDeps, AppEnv } from "../deps.js";
import { checkHealth } from "../health.js";
import { publicConfig } from "../publicConfig.js";

export const SERVICE_NAME = "pit-trading-service";

/** SPEC.md "Server": config, health (stats and treasury come with their issues). */
export function serverRoutes(deps: AppDeps) {
  const config = publicConfig(deps.config);
  const app = new Hono<AppEnv>();
  app.get("/config", (c) => c.json(config));
  app.get("/health", async (c) => {
    const health = await checkHealth(deps);
    return c.json({ status: health.status, service: SERVICE_NAME, version: deps.config.version, checks: health.checks }, health.status === "down" ? 503 : 200);
  });
  return app;
}
