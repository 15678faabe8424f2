import type { ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import { freePort, spawnDyingWithParent } from "../../devnet/anvil.js";
import { ROOT } from "../../lib/root.js";
import { sqlIndexedReads, type Query } from "../../api/ports/indexed.js";
import { readIndexerBlock } from "../../scripts/supervisor.js";

export const PG_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/test";

export type IndexerBackend = "postgres" | "pglite";

/**
 * A database name of this test run (`pit_<kind>_<run>_<random>`): globalSetup's teardown drops every one of the run
 * left behind (a store whose file never dropped it, a file stopped by a timeout), and no other run's.
 */
export function runDatabaseName(kind: string): string {
  return `pit_${kind}_${process.env.PIT_TEST_RUN ?? "local"}_${Math.random().toString(36).slice(2, 10)}`;
}

/** Drops the databases `runDatabaseName` made for `run` that are still there. */
export async function dropRunDatabases(run: string): Promise<void> {
  const admin = new pg.Pool({ connectionString: PG_URL, max: 1 });
  const { rows } = await admin.query<{ datname: string }>(
    "SELECT datname FROM pg_database WHERE datname LIKE 'pit\\_%' AND position($1 in datname) > 0",
    [`_${run}_`],
  );
  for (const { datname } of rows) await admin.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`).catch(() => {});
  await admin.end();
}

/** A fresh PostgreSQL database next to the test one; its URL. */
export async function createDatabase(name: string): Promise<string> {
  const admin = new pg.Pool({ connectionString: PG_URL, max: 1 });
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  return PG_URL.replace(/\/[^/]*$/, `/${name}`);
}

export async function dropDatabase(name: string): Promise<void> {
  const admin = new pg.Pool({ connectionString: PG_URL, max: 1 });
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
  await admin.end();
}

/**
 * The real indexer (`ponder start`) against a test's devnet, on PostgreSQL (own schema + views
 * schema, read live) or PGlite (own directory, read after the indexer stops: PGlite has one
 * process). The indexer runs alone (PIT_INDEXER_ONLY) unless `embeddedApi` mounts the API in it.
 */
export async function startIndexer(opts: {
  anvilPort: number;
  backend: IndexerBackend;
  deployInto?: { databaseUrl: string; viewsSchema: string };
  /** Mount the API in the indexer as npm start does (served at `base`); off by default. */
  embeddedApi?: boolean;
}) {
  const id = Math.random().toString(36).slice(2, 10);
  // A database of its own: Ponder's sync cache (schema ponder_sync) is keyed by chain id, and every
  // devnet is chain 4663 with the same addresses, so a shared one would replay another chain's logs.
  // `deployInto`: a new build beside a running one (same database and views schema, its own schema).
  const ownsDb = opts.backend === "postgres" && !opts.deployInto;
  const dbName = runDatabaseName("ix");
  const dbUrl = opts.backend === "postgres" ? (opts.deployInto?.databaseUrl ?? (await createDatabase(dbName))) : null;
  const schema = `t_${id}`;
  const viewsSchema = opts.deployInto?.viewsSchema ?? `v_${id}`;
  const dataDir = mkdtempSync(join(tmpdir(), "pit-indexer-"));
  // As npm start does: Ponder's own routes on the ops port (Ponder binds env PORT), the API on its
  // own port, passed as PIT_API_PORT and put back into PORT by scripts/parentWatch.ts.
  const port = await freePort();
  const opsPort = await freePort();
  // The embedded API's metrics listener: drawn here, or its default (its port + 2) could be a port
  // this worker hands to another process while the indexer starts.
  const metricsPort = await freePort();
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    ANVIL_PORT: String(opts.anvilPort),
    PORT: String(opsPort),
    OPS_PORT: String(opsPort),
    METRICS_PORT: String(metricsPort),
    PIT_API_PORT: String(port),
    DATA_DIR: dataDir,
    DATABASE_SCHEMA: schema,
    LOG_LEVEL: "warn",
  };
  // The indexer alone unless a test reads the API mounted in it: a second whole API (store, workers)
  // in each of the run's ~40 indexers was CPU that no test used.
  if (!opts.embeddedApi) env.PIT_INDEXER_ONLY = "1";
  const args = [
    "node_modules/ponder/dist/esm/bin/ponder.js",
    "start",
    "--port",
    String(opsPort),
    "--hostname",
    "127.0.0.1",
    "--log-format",
    "json",
    "--log-level",
    "warn",
  ];
  if (opts.backend === "postgres") {
    env.DATABASE_URL = dbUrl!;
    args.push("--views-schema", viewsSchema);
  } else {
    delete env.DATABASE_URL;
  }
  // Dies with this test process, however it dies: an indexer left running would load the rest of the run.
  const child: ChildProcess = spawnDyingWithParent(
    process.execPath,
    args,
    { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] },
    // SIGKILL: an orphaned ponder whose database was dropped was seen to outlive SIGTERM.
    "SIGKILL",
  );
  let log = "";
  child.stdout!.on("data", (d) => (log = (log + d.toString()).slice(-20_000)));
  child.stderr!.on("data", (d) => (log = (log + d.toString()).slice(-20_000)));
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  const base = `http://127.0.0.1:${port}`;

  let pool: pg.Pool | null = null;
  const pgQuery: Query = async (text, params) => {
    if (!pool) {
      pool = new pg.Pool({ connectionString: dbUrl!, max: 2 });
      // cleanup() drops the database WITH (FORCE): idle clients then see 57P01, which is expected.
      pool.on("error", () => {});
    }
    return (await pool.query(text, params)).rows;
  };

  /** Indexer's head block as Ponder's own /status reports it (its latest checkpoint). */
  const head = (): Promise<number | null> => readIndexerBlock(`http://127.0.0.1:${opsPort}`);

  return {
    backend: opts.backend,
    schema,
    viewsSchema,
    dataDir,
    base,
    /** Ponder's own routes (/status, /ready, /metrics, /health). */
    opsBase: `http://127.0.0.1:${opsPort}`,
    log: () => log,
    head,
    /** Waits until every block up to `block` is indexed (and, on PostgreSQL, visible in the views). */
    async waitFor(block: bigint | number, timeoutMs = 90_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        if (child.exitCode !== null) throw new Error(`indexer exited (${child.exitCode}):\n${log}`);
        const h = await head();
        if (h !== null && h >= Number(block)) {
          // PGlite is read after the indexer stops: give the block's rows a moment to land with its
          // checkpoint (under load, a stop right at the checkpoint lost the last block's rows).
          if (opts.backend === "pglite") return void (await new Promise((r) => setTimeout(r, 1_000)));
          try {
            const reads = sqlIndexedReads(pgQuery, viewsSchema);
            const vh = await reads.head();
            if (vh && vh.block >= Number(block)) return;
          } catch {
            // views not created yet (they appear when the backfill is done)
          }
        }
        if (Date.now() > deadline) throw new Error(`indexer did not reach block ${block} (at ${h}):\n${log}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    /** The indexer's own PostgreSQL database (null on PGlite). */
    databaseUrl: dbUrl,
    /** Live reads (PostgreSQL views). */
    liveReads() {
      if (opts.backend !== "postgres") throw new Error("live reads need PostgreSQL");
      return { reads: sqlIndexedReads(pgQuery, viewsSchema), query: pgQuery };
    },
    /** Stops the indexer; on PGlite, opens its directory and gives reads over it. */
    async stop(): Promise<{ reads: ReturnType<typeof sqlIndexedReads>; query: Query; close: () => Promise<void> }> {
      if (child.exitCode === null) {
        child.kill("SIGTERM");
        await exited;
      }
      if (opts.backend === "postgres") {
        return {
          reads: sqlIndexedReads(pgQuery, viewsSchema),
          query: pgQuery,
          close: async () => void (await pool?.end()),
        };
      }
      const db = new PGlite(join(dataDir, "ponder"));
      const q: Query = async (text, params) => (await db.query<Record<string, unknown>>(text, params)).rows;
      return { reads: sqlIndexedReads(q, schema), query: q, close: () => db.close() };
    },
    /** Freezes the indexer process (SIGSTOP) until the returned function resumes it: an indexer that falls behind. */
    pause(): () => void {
      child.kill("SIGSTOP");
      return () => void child.kill("SIGCONT");
    },
    /** Drops what the test created in PostgreSQL. */
    async cleanup() {
      if (child.exitCode === null) child.kill("SIGKILL");
      await pool?.end().catch(() => {});
      pool = null;
      if (ownsDb) await dropDatabase(dbName);
    },
  };
}

export type Indexer = Awaited<ReturnType<typeof startIndexer>>;
