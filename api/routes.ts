import type { Services } from "./services.js";
import { mount, type Mount, type RouteEntry } from "./http/route.js";
import { checkHealth } from "./server/health.js";
import { publicConfig } from "./server/index.js";
import { serverRoutes } from "./server/routes.js";
import { leagueRoutes } from "./league/routes.js";
import { sessionRoutes } from "./sessions/routes.js";
import { accountRoutes } from "./account/routes.js";
import { hostedRoutes } from "./hosted/routes.js";
import { fastRoutes } from "./fast/routes.js";
import { tradingRoutes } from "./trading/routes.js";
import { authRoutes } from "./auth/routes.js";
import { tokenRoutes } from "./tokens/routes.js";
import { treasuryRoutes } from "./treasury/routes.js";

/**
 * Every domain's routes (issue 27: each declared once, in its domain's routes.ts) and the one
 * place that hands each its own domain's service. The app mounts these, the OpenAPI document and
 * MCP's tools are built from them, test/e2e/routeLimits.test.ts holds their buckets.
 */
export const MOUNTS: readonly Mount<Services>[] = [
  mount(serverRoutes, (s) => ({
    configJson: JSON.stringify(publicConfig(s.config)),
    version: s.config.version,
    stats: s.stats,
    health: () => checkHealth(s.deps),
  })),
  mount(authRoutes, (s) => s.signIn),
  mount(tokenRoutes, (s) => s.tokens),
  mount(sessionRoutes, (s) => ({
    sessions: s.sessions,
    hostedSummaries: s.hosted.summaries,
    recordRefused: s.ledger.recordRefused,
    refOfParam: s.trading.refOfParam,
  })),
  mount(fastRoutes, (s) => ({ fast: s.fast, ledger: s.ledger })),
  mount(tradingRoutes, (s) => ({ trading: s.trading, relay: s.relay, ledger: s.ledger })),
  mount(accountRoutes, (s) => ({ trades: s.ledger.list, portfolio: s.portfolio.get })),
  mount(treasuryRoutes, (s) => s.treasury.reader),
  mount(hostedRoutes, (s) => s.hosted),
  mount(leagueRoutes, (s) => s.league),
];

/** The routes declared as entries, in mount order. */
export const API_ROUTES: readonly RouteEntry[] = MOUNTS.flatMap((m) => m.entries);
