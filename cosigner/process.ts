import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { Logger } from "pino";
import type { PublicClient } from "viem";
import { httpCosigner, type CosignerPort } from "../api/ports/cosigner.js";
import { httpExecutors, type ExecutorPort } from "../api/ports/executors.js";
import { openMigratedMemory, openPgliteDir } from "../api/ports/store/memory.js";
import { openPostgres, type Db } from "../api/ports/store/db.js";
import { migrate } from "../api/ports/store/migrations.js";
import { ConfigError, loadConfig, type Config } from "../lib/config.js";
import { createLogger } from "../lib/logger.js";
import { closeMetrics, serveMetrics } from "../lib/metrics.js";
import { cosignerFromEnv, executorsFromConfig } from "./index.js";
import { cosignerServer, executorsServer } from "./server.js";

/**
 * A signing process's own store: its PostgreSQL URL (required off the devnet: a database no other
 * process reads), else PGlite in DATA_DIR/<name> (the devnet), or in memory for tests.
 */
export async function openSignerStore(
  config: Config,
  name: "cosigner" | "executors",
  url: string | null,
  memory = false,
): Promise<Db> {
  const variable = name === "cosigner" ? "COSIGNER_DATABASE_URL" : "EXECUTORS_DATABASE_URL";
  if (!url && !config.devnet)
    throw new ConfigError(
      variable,
      `required off the devnet: the ${name === "cosigner" ? "co-signer" : "executor signing service"} ` +
        "keeps a store of its own",
    );
  if (url && config.databaseUrl && url === config.databaseUrl)
    throw new ConfigError(variable, "is the API's DATABASE_URL: a signing service keeps a store of its own");
  let db: Db;
  if (url) db = await openPostgres(url);
  else if (memory) db = await openMigratedMemory(name);
  else {
    const dir = join(config.dataDir, name);
    mkdirSync(dir, { recursive: true });
    db = await openPgliteDir(dir);
  }
  await migrate(db);
  return db;
}

type Listen = { token: string; port: number; host?: string; logger?: Logger };
const listen = (server: Server, l: Listen) =>
  new Promise<number>((resolve, reject) => {
    server.once("error", reject);
    server.listen(l.port, l.host ?? "127.0.0.1", () => resolve((server.address() as AddressInfo).port));
  });

/** The co-signer's process: its key (COSIGNER_KEY, the devnet's account 2), its store, its port. */
export async function serveCosigner(
  d: {
    config: Config;
    db: Db;
    chain: PublicClient;
    clock: () => number;
    env?: Record<string, string | undefined>;
  } & Listen,
) {
  const port = cosignerFromEnv(d);
  if (!port) throw new ConfigError("COSIGNER_KEY", "required off the devnet");
  const server = cosignerServer(port, { token: d.token, logger: d.logger });
  return { server, address: port.address, port: await listen(server, d) };
}

/** The executor signing service's process: keys sealed under EXECUTOR_KEYS_SECRET, its store, its port. */
export async function serveExecutors(d: { config: Config; db: Db; chain: PublicClient; clock: () => number } & Listen) {
  const executors = executorsFromConfig(d);
  if (!executors) throw new ConfigError("EXECUTOR_KEYS_SECRET", "required off the devnet");
  const server = executorsServer(executors, { token: d.token, logger: d.logger });
  return { server, port: await listen(server, d) };
}

/**
 * Both signing services on the devnet, each on its own port with its own in-memory store and its
 * own random bearer secret, and the API's HTTP ports to them: what tests and the bench run, so the
 * API they drive talks to its signers exactly as in production.
 */
export async function startLocalSigners(d: {
  config: Config;
  chain: PublicClient;
  clock: () => number;
  env?: Record<string, string | undefined>;
  /** PostgreSQL databases of their own for the two stores; in memory (PGlite) when not given. */
  storeUrls?: { cosigner: string; executors: string };
}) {
  if (!d.config.devnet) throw new Error("local signing services are for the devnet only");
  const [cosignerDb, executorsDb] = await Promise.all([
    openSignerStore(d.config, "cosigner", d.storeUrls?.cosigner ?? null, true),
    openSignerStore(d.config, "executors", d.storeUrls?.executors ?? null, true),
  ]);
  const tokens = { cosigner: randomBytes(24).toString("hex"), executors: randomBytes(24).toString("hex") };
  const c = await serveCosigner({ ...d, db: cosignerDb, token: tokens.cosigner, port: 0 });
  const e = await serveExecutors({ ...d, db: executorsDb, token: tokens.executors, port: 0 });
  // They serve the test file or bench that started them, and never keep its process alive.
  c.server.unref();
  e.server.unref();
  const urls = { cosigner: `http://127.0.0.1:${c.port}`, executors: `http://127.0.0.1:${e.port}` };
  const cosigner: CosignerPort = httpCosigner(urls.cosigner, tokens.cosigner, c.address);
  const executors: ExecutorPort = httpExecutors(urls.executors, tokens.executors);
  const closeServer = (s: Server) => new Promise<void>((r) => (s.close(() => r()), s.closeAllConnections()));
  return {
    cosigner,
    executors,
    urls,
    tokens,
    cosignerDb,
    executorsDb,
    async close() {
      await Promise.all([closeServer(c.server), closeServer(e.server)]);
      await Promise.all([cosignerDb.close(), executorsDb.close()]);
    },
  };
}
export type LocalSigners = Awaited<ReturnType<typeof startLocalSigners>>;

/**
 * A signing process's main: refuses a key that belongs to the other process (`forbidden`), opens
 * its own store, serves, and on SIGINT/SIGTERM closes the server and the store. Any start-up
 * error prints its message (never a stack with config in it) and exits 2. Its metrics (the
 * co-signer's decisions; each process's own CPU and memory) answer on 127.0.0.1 at
 * COSIGNER_METRICS_PORT or EXECUTORS_METRICS_PORT, never on the port the API calls.
 */
export async function runSignerProcess(o: {
  name: "cosigner" | "executors";
  token: (config: Config) => string | null;
  forbidden: { env: string; why: string };
  databaseUrl: (config: Config) => string | null;
  serve: (config: Config, db: Db, token: string) => Promise<{ server: Server; port: number; address?: string }>;
}): Promise<void> {
  let running: { server: Server; db: Db; metrics: Server | null };
  try {
    const config = loadConfig();
    const token = o.token(config);
    if (!token)
      throw new ConfigError(
        `${o.name === "cosigner" ? "COSIGNER" : "EXECUTORS"}_TOKEN`,
        "required: the secret the API sends",
      );
    if (process.env[o.forbidden.env]) throw new ConfigError(o.forbidden.env, o.forbidden.why);
    const db = await openSignerStore(config, o.name, o.databaseUrl(config));
    const s = await o.serve(config, db, token);
    const metricsPort = o.name === "cosigner" ? config.cosignerMetricsPort : config.executorsMetricsPort;
    const metrics = await serveMetrics({ port: metricsPort, name: o.name, log: createLogger() });
    running = { server: s.server, db, metrics };
    console.log(`[${o.name}] ${s.address ? `${s.address} ` : ""}on http://127.0.0.1:${s.port}`);
  } catch (err) {
    console.error((err as Error).message);
    process.exit(2);
  }
  const stop = () =>
    running.server.close(
      () => void Promise.all([running.db.close(), closeMetrics(running.metrics)]).then(() => process.exit(0)),
    );
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}
