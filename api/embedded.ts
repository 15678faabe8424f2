import "../lib/noTelemetry.js";
import { createApp } from "./app.js";
import { serveApp } from "./http/serve.js";
import { sqlIndexedReads, type Query } from "./ports/indexed.js";
import { openAppStore } from "./ports/store/open.js";
import { httpShield } from "./ports/shield.js";
import { createChainClient } from "../lib/chain.js";
import { loadConfig } from "../lib/config.js";
import { createLogger } from "../lib/logger.js";
import { followParent } from "../scripts/parentWatch.js";
import { closeMetrics, serveMetrics } from "../lib/metrics.js";

/** The repository root as the running module finds it (from a bundle it must be the same: tests check). */
export { ROOT } from "../lib/root.js";

type Running = { stop(): Promise<void> };

/**
 * The embedded default: the API inside Ponder's process, reading its tables through `query` (Ponder's
 * own database handle, which only src/api/index.ts can reach). It serves on its own capped server on
 * PORT; Ponder's server keeps only Ponder's routes, so nothing of ours is served without the edge's
 * caps and host guard. Our metrics answer on 127.0.0.1:METRICS_PORT: Ponder's /metrics on OPS_PORT
 * reads a registry of its own that we cannot reach (lib/metrics.ts says why).
 */
export async function startEmbedded(query: Query): Promise<void> {
  followParent(); // under npm start: the public port back in PORT, and exit with start.ts
  const config = loadConfig();
  // A hot reload (ponder dev re-imports the API file) or a stop must not leave an old server, relay
  // watcher or store handle; the app store is closed last so its sequences do not jump next start.
  const running = globalThis as { pitApi?: Running };
  await running.pitApi?.stop();

  const store = await openAppStore(config);
  const logger = createLogger();
  const app = createApp({
    config,
    logger,
    chain: createChainClient(config),
    indexed: sqlIndexedReads(query, process.env.DATABASE_SCHEMA),
    db: store,
    shield: config.shieldUrl ? httpShield(config.shieldUrl) : null,
    pingDatabase: async () => {
      await query("SELECT 1");
      await store.query("SELECT 1");
    },
  });
  const server = await serveApp(app, {
    port: config.port,
    hostname: process.env.HOST ?? "0.0.0.0",
    trustedProxies: config.trustedProxies,
  });
  const metrics = await serveMetrics({ port: config.metricsPort, name: "api", log: logger });
  let stopping: Promise<void> | null = null;
  running.pitApi = {
    stop: () =>
      (stopping ??= (async () => {
        const closed = new Promise<void>((r) => server.close(() => r()));
        server.closeAllConnections();
        await closed;
        await closeMetrics(metrics);
        await app.stop();
        await store.close();
      })()),
  };
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => void running.pitApi?.stop());
  waitForOurStopOnExit(running);
}

/**
 * Ponder's own signal handler ends with process.exit() once its parts are down, without waiting for
 * ours: an app store PGlite cut off mid-close loses its sequence state (ids jump by 32 on the next
 * start). So the exit waits for our stop, at most 3 s.
 */
function waitForOurStopOnExit(running: { pitApi?: Running }) {
  const exitNow = process.exit.bind(process);
  process.exit = ((code?: number) => {
    const stopped = running.pitApi?.stop() ?? Promise.resolve();
    void Promise.race([stopped, new Promise((r) => setTimeout(r, 3_000))]).finally(() => exitNow(code));
  }) as typeof process.exit;
}
