import { z } from "zod";
import { PUBLIC } from "../http/limits.js";
import { routesFor } from "../http/route.js";
import type { Stats } from "./stats.js";
import { configAnswer, healthAnswer, statsAnswer } from "./answers.js";

export const SERVICE_NAME = "pit-trading-service";

/** What SPEC "Server" reads: the public config (serialised once), the stats loop's answer, a health probe. */
export type ServerService = {
  configJson: string;
  version: string;
  stats: Pick<Stats, "get">;
  health: () => Promise<{ status: "ok" | "degraded" | "down"; checks: unknown }>;
};

const none = z.object({}).strict();

const route = routesFor<ServerService>({
  name: "Server",
  description: "Public records: configuration, health and statistics.",
});

/** SPEC.md "Server": config, health, stats (treasury: api/treasury/routes.ts). */
export const serverRoutes = [
  route({
    method: "get",
    path: "/config",
    auth: "none",
    limits: PUBLIC,
    summary: "The server's pinned configuration",
    answer: configAnswer,
    errors: ["RATE_LIMITED"],
    mcp: {
      name: "config",
      description: "Server configuration (GET /api/v1/config): chain 4663, router, tokens, fees, limits. Pin it.",
      input: none,
      readOnly: true,
    },
    // Immutable for the life of the process: serialised once, not per request.
    handle: ({ c }, s) => c.body(s.configJson, 200, { "Content-Type": "application/json" }),
  }),
  route({
    method: "get",
    path: "/health",
    auth: "none",
    limits: PUBLIC,
    summary: "Health of the chain, indexer and database",
    answer: healthAnswer,
    errors: ["RATE_LIMITED"],
    alsoAnswers: 503,
    handle: async ({ c }, s) => {
      const health = await s.health();
      if (health.status === "down") c.header("Retry-After", "5");
      return c.json(
        { status: health.status, service: SERVICE_NAME, version: s.version, checks: health.checks },
        health.status === "down" ? 503 : 200,
      );
    },
  }),
  route({
    method: "get",
    path: "/stats",
    auth: "none",
    limits: PUBLIC,
    summary: "Shared market statistics (rebuilt at most every 5 s)",
    answer: statsAnswer,
    errors: ["RATE_LIMITED"],
    handle: (_, s) => s.stats.get(),
  }),
];
