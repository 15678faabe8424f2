/**
 * The HTTP benchmark's server process: the service app (all middleware, JSON logs to /dev/null,
 * rate limits off so the load generator measures the request path, not 429s) or a plain Hono app
 * answering the same /config JSON (the anchor). Prints READY when listening.
 * bench/availability.ts runs it with the buckets on (BENCH_RATE_LIMITS=on); bench/trading.ts names a request log
 * (BENCH_REQUEST_LOG) and runs a second one with LOCAL_QUOTES=off.
 */
import { serve } from "@hono/node-server";
import pg from "pg";
import { Hono } from "hono";
import { createApp } from "../api/app.js";
import { SCREEN_DEFAULTS } from "../api/tokens/index.js";
import { sqlIndexedReads } from "../api/ports/indexed.js";
import { publicConfig } from "../api/server/config.js";
import { openPglite, openPostgres } from "../api/ports/store/db.js";
import { createDatabase, dropDatabase } from "../test/helpers/databases.js";
import { migrate } from "../api/ports/store/migrations.js";
import { createChainClient } from "../lib/chain.js";
import { loadConfig } from "../lib/config.js";
import { createLogger } from "../lib/logger.js";
import { startLocalSigners } from "../cosigner/process.js";

const mode = process.argv[2] as "app" | "plain";
const port = Number(process.argv[3]);
const anvilPort = process.argv[4]!;
// BENCH_RATE_LIMITS=on keeps the buckets (bench/availability.ts); BENCH_PROXY_HEADER lets the load generator name each
// client's address.
const config = {
  ...loadConfig({
    ANVIL_PORT: anvilPort,
    PORT: String(port),
    RATE_LIMITS: process.env.BENCH_RATE_LIMITS === "on" ? "on" : "off",
    ...(process.env.BENCH_PROXY_HEADER ? { TRUSTED_PROXY_HEADER: process.env.BENCH_PROXY_HEADER } : {}),
    ...(process.env.LOCAL_QUOTES ? { LOCAL_QUOTES: process.env.LOCAL_QUOTES } : {}),
  }),
  allowedHosts: [`127.0.0.1:${port}`, `localhost:${port}`],
};

let fetchFn: (req: Request) => Response | Promise<Response>;
let beforeExit: () => Promise<unknown> = async () => {};
if (mode === "plain") {
  const body = publicConfig(config);
  const plain = new Hono();
  plain.get("/api/v1/config", (c) => c.json(body));
  fetchFn = plain.fetch;
} else {
  const viewsPool = process.env.BENCH_VIEWS
    ? new pg.Pool({
        connectionString: process.env.BENCH_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/test",
        max: 8,
      })
    : null;
  // BENCH_STORE=postgres: the app store in a PostgreSQL database of its own (production's store) instead of PGlite.
  const benchDb = `pit_bench_${process.pid}`;
  const db =
    process.env.BENCH_STORE === "postgres" ? await openPostgres(await createDatabase(benchDb)) : await openPglite();
  if (process.env.BENCH_STORE === "postgres")
    beforeExit = () =>
      db
        .close()
        .catch(() => {})
        .then(() => dropDatabase(benchDb));
  await migrate(db);
  // The devnet's signing services as npm start runs them: their own HTTP ports, secrets and stores.
  const signers = await startLocalSigners({ config, chain: createChainClient(config), clock: Date.now });
  const app = createApp({
    config,
    // BENCH_REQUEST_LOG: the request log's file, for the server side's own ms per request (bench/trading.ts).
    logger: createLogger("info", process.env.BENCH_REQUEST_LOG ?? "/dev/null"),
    chain: createChainClient(config),
    cosigner: signers.cosigner,
    executors: signers.executors,
    // With BENCH_VIEWS the indexer's PostgreSQL views serve indexed reads (token venues), else none.
    indexed: process.env.BENCH_VIEWS
      ? sqlIndexedReads(async (t, p) => (await viewsPool!.query(t, p)).rows, process.env.BENCH_VIEWS)
      : sqlIndexedReads((t, p) => db.query(t, p)),
    db,
    // Likewise the per-caller budget of new-token screens (the benchmark screens dozens with one key).
    screen: { ...SCREEN_DEFAULTS, newPerCallerBurst: 1e9 },
    // Thousands of sign-ins from one loopback address: lift the per-address sign-up and key caps.
    signInCaps: { accountsPerAddressDay: 1e9, accountsServiceHour: 1e9, keysPerAddressDay: 1e9, keysServiceHour: 1e9 },
    pingDatabase: async () => void (await db.query("SELECT 1")),
  });
  fetchFn = app.fetch;
}
// Exit on SIGTERM through process.exit, so the logger's buffer is flushed (createLogger's exit hook), once a store
// of its own is dropped.
process.once("SIGTERM", () => void beforeExit().finally(() => process.exit(0)));
serve({ fetch: fetchFn, port, hostname: "127.0.0.1" }, () => console.log("READY"));
