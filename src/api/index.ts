import "../../lib/noTelemetry.js";
import { Hono } from "hono";
import { sql } from "ponder";
import { db } from "ponder:api";
import { createApp } from "../../api/app";
import { serveApp } from "../../api/http/serve";
import { sqlIndexedReads } from "../../api/ports/indexed";
import { openAppStore } from "../../api/ports/store/open";
import { httpShield } from "../../api/ports/shield";
import { createChainClient } from "../../lib/chain";
import { loadConfig } from "../../lib/config";
import { createLogger } from "../../lib/logger";
import { followParent } from "../../scripts/parentWatch";

// The embedded default: the API runs inside Ponder's process and reads its tables directly.
// $n placeholders become bound parameters of one drizzle statement.
const query = async (text: string, params: unknown[] = []) => {
  const chunks = text.split(/(\$\d+)/).map((part) => {
    const m = /^\$(\d+)$/.exec(part);
    return m ? sql`${params[Number(m[1]) - 1]}` : sql.raw(part);
  });
  const result = (await db.execute(sql.join(chunks))) as unknown as { rows: Record<string, unknown>[] };
  return result.rows;
};

followParent(); // under npm start: the public port back in PORT, and exit with start.ts
const config = loadConfig();

// A hot reload (ponder dev re-imports this file) or a stop must not leave an old server, relay
// watcher or store handle; the app store is closed last so its sequences do not jump next start.
type Running = { stop(): Promise<void> };
const running = globalThis as { pitApi?: Running };
await running.pitApi?.stop();

const store = await openAppStore(config);

const app = createApp({
  config,
  logger: createLogger(),
  chain: createChainClient(config),
  indexed: sqlIndexedReads(query, process.env.DATABASE_SCHEMA),
  db: store,
  shield: config.shieldUrl ? httpShield(config.shieldUrl) : null,
  pingDatabase: async () => {
    await query("SELECT 1");
    await store.query("SELECT 1");
  },
});

// The API is served by its own capped server on PORT (api/http/serve.ts); Ponder's server keeps
// only Ponder's routes, on 127.0.0.1:OPS_PORT under npm start, so nothing of ours is served
// without the edge's caps and host guard.
const server = await serveApp(app, {
  port: config.port,
  hostname: process.env.HOST ?? "0.0.0.0",
  trustedProxies: config.trustedProxies,
});
let stopping: Promise<void> | null = null;
running.pitApi = {
  stop: () =>
    (stopping ??= (async () => {
      const closed = new Promise<void>((r) => server.close(() => r()));
      server.closeAllConnections();
      await closed;
      await app.stop();
      await store.close();
    })()),
};
for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => void running.pitApi?.stop());

// Ponder's own signal handler ends with process.exit() once its parts are down, without waiting
// for ours: an app store PGlite cut off mid-close loses its sequence state (ids jump by 32 on the
// next start). So the exit waits for our stop, at most 3 s.
const exitNow = process.exit.bind(process);
process.exit = ((code?: number) => {
  const stopped = running.pitApi?.stop() ?? Promise.resolve();
  void Promise.race([stopped, new Promise((r) => setTimeout(r, 3_000))]).finally(() => exitNow(code));
}) as typeof process.exit;

export default new Hono();
