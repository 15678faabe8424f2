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
    description:
      "The server's configuration, identical across restarts with the same settings: chain id (4663), " +
      "version, the sign-in block, router, permit contract, multicall, core tokens, the fee schedule " +
      "and recipient, the risk disclosure table, Shield's policies, trade limits, the session contracts" +
      " and co-signer, and whether the server relays. Clients pin chain, contracts, tokens, co-signer " +
      "and disclosures, and refuse a differing server (CONFIG_MISMATCH).",
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
    description:
      "Whether the chain, the indexer and the database answer: status ok, degraded or down, with the " +
      "service's name and version. HTTP 200 unless down (503, the same shape, with Retry-After).",
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
    description:
      "One shared answer rebuilt at most every 5 s (cached_s says how old): the chain's and indexer's " +
      "heads, each core asset's mark, pool mid, spread and a buy and sell of $1,000 against the mark, " +
      "route counts, latencies, whether the server relays, the fee schedule, the registry's tradable " +
      "count and the AI credit pool. An unreadable part is null; the answer is still 200.",
    answer: statsAnswer,
    errors: ["RATE_LIMITED"],
    handle: (_, s) => s.stats.get(),
  }),
];
