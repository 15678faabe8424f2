/**
 * `npm run api`: the API as its own process (any number side by side) against PostgreSQL: the
 * app store in DATABASE_URL's `app` schema, indexed tables through the views schema that
 * `ponder start --views-schema` publishes (INDEXER_SCHEMA, default `pit`). Its metrics answer on
 * 127.0.0.1:METRICS_PORT (default PORT + 2), never on PORT.
 */
import "../lib/noTelemetry.js";
import pg from "pg";
import { createApp } from "../api/app.js";
import { serveApp } from "../api/http/serve.js";
import { sqlIndexedReads } from "../api/ports/indexed.js";
import { openAppStore } from "../api/ports/store/open.js";
import { httpShield } from "../api/ports/shield.js";
import { createChainClient } from "../lib/chain.js";
import { ConfigError, loadConfig } from "../lib/config.js";
import { createLogger } from "../lib/logger.js";
import { closeMetrics, serveMetrics } from "../lib/metrics.js";

let config: ReturnType<typeof loadConfig>;
try {
  config = loadConfig();
  if (!config.databaseUrl)
    throw new ConfigError(
      "DATABASE_URL",
      "required for a separate API process (PGlite lives inside the indexer's process: use npm start)",
    );
} catch (err) {
  console.error((err as Error).message);
  process.exit(2);
}
const logger = createLogger();
const views = config.indexerSchema ?? "pit";
const pool = new pg.Pool({ connectionString: config.databaseUrl!, max: 10 });
pool.on("error", () => {});
const query = async (text: string, params?: unknown[]) => (await pool.query(text, params)).rows;
const store = await openAppStore(config);
const app = createApp({
  config,
  logger,
  chain: createChainClient(config),
  indexed: sqlIndexedReads(query, views),
  db: store,
  shield: config.shieldUrl ? httpShield(config.shieldUrl) : null,
  pingDatabase: async () => void (await query("SELECT 1")),
});
const server = await serveApp(app, {
  port: config.port,
  hostname: process.env.HOST ?? "0.0.0.0",
  trustedProxies: config.trustedProxies,
});
const metrics = await serveMetrics({ port: config.metricsPort, name: "api", log: logger });
console.log(`[api] http://localhost:${config.port}/api/v1 (indexer views ${views}, app store PostgreSQL)`);
const stop = () => {
  server.close(
    () => void Promise.all([app.stop(), pool.end(), store.close(), closeMetrics(metrics)]).then(() => process.exit(0)),
  );
  server.closeAllConnections();
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
