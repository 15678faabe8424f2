import { Hono } from "hono";
import type { AppDeps, AppEnv } from "../deps.js";
import { checkHealth } from "../health.js";
import { publicConfig } from "../publicConfig.js";
import { createStats } from "../stats.js";
import { limit } from "../middleware/limits.js";
import { PUBLIC_OVERALL, RATE_RULES, type RateLimiter } from "../rateLimit.js";

export const SERVICE_NAME = "pit-trading-service";

/** SPEC.md "Server": config, health, stats (treasury comes with its issue). */
export function serverRoutes(deps: AppDeps, limiter: RateLimiter) {
  const config = publicConfig(deps.config);
  const app = new Hono<AppEnv>();
  for (const path of ["/config", "/health", "/stats", "/treasury"]) {
    app.use(path, limit(limiter, "public", RATE_RULES.public, "client"), limit(limiter, "public", PUBLIC_OVERALL, "overall"));
  }
  const stats = createStats({ config: deps.config, chain: deps.chain, indexed: deps.indexed, clock: deps.clock ?? Date.now });
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
