import { z } from "zod";
import { PUBLIC } from "../http/limits.js";
import { route } from "../http/route.js";
import type { Stats } from "./stats.js";

export const SERVICE_NAME = "pit-trading-service";

/** What SPEC "Server" reads: the public config (serialised once), the stats loop's answer, a health probe. */
export type ServerService = {
  configJson: string;
  version: string;
  stats: Pick<Stats, "get">;
  health: () => Promise<{ status: "ok" | "degraded" | "down"; checks: unknown }>;
};

const none = z.object({}).strict();

/** SPEC.md "Server": config, health, stats (treasury: api/treasury/routes.ts). */
export const serverRoutes = [
  route<ServerService>({
    method: "get",
    path: "/config",
    auth: "none",
    limits: PUBLIC,
    summary: "The server's pinned configuration",
    answer: ["chain_id", "version", "auth", "router", "permit_contract", "tokens", "fee"],
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
  route<ServerService>({
    method: "get",
    path: "/health",
    auth: "none",
    limits: PUBLIC,
    summary: "Health of the chain, indexer and database",
    answer: ["status", "service", "version"],
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
  route<ServerService>({
    method: "get",
    path: "/stats",
    auth: "none",
    limits: PUBLIC,
    summary: "Shared market statistics (rebuilt at most every 5 s)",
    answer: ["status", "generated_at", "cached_s"],
    errors: ["RATE_LIMITED"],
    handle: (_, s) => s.stats.get(),
  }),
];
