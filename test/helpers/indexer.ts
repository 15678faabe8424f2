import "../../lib/noTelemetry.js";
import type { ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import { http } from "viem";
import { freePort, spawnDyingWithParent, startAnvil } from "../../devnet/anvil.js";
import { SNAPSHOT_FILE, UNIVERSE_FILE } from "../../devnet/snapshot.js";
import { publicClient } from "../../lib/chain.js";
import { indexerBuildHash } from "../../scripts/indexerSchema.js";
import { ROOT } from "../../lib/root.js";
import { PONDER_BIN } from "../../scripts/apiBundle.js";
import { sqlIndexedReads, type Query } from "../../api/ports/indexed.js";
import { readIndexerBlock } from "../../scripts/supervisor.js";

import { createDatabase, dropDatabase, runDatabaseName, runTemplate, type Template } from "./databases.js";

export type IndexerBackend = "postgres" | "pglite";

/** Where an indexer keeps its tables: its database (`dbName` when it is its own, dropped by cleanup), its schemas. */
type Layout = { dbName: string | null; dbUrl: string | null; schema: string; viewsSchema: string };

/** The schemas of every indexer copied from the run's template (each copy is a database of its own). */
const TEMPLATE_SCHEMAS = { schema: "ix", viewsSchema: "ix_views" } as const;

/**
 * The indexer build's hash (scripts/indexerSchema.ts), read once per process: it names the run's template, so a run
 * whose sources change under it (vitest's watch mode keeps the run) builds a new one, never copies one Ponder would
 * refuse as another app's.
 */
let build: string | undefined;

/**
 * The run's indexer template: the pristine devnet snapshot indexed once to its head, on a chain of its own. An
 * indexer on a copy finds its own build's tables and checkpoint (Ponder's crash recovery), reverts to the
 * snapshot's finalized block and follows the chain from there: its tables' creation and the indexing of the
 * snapshot's finalized blocks are skipped (it still reads their logs again: the devnet's RPC cache is off), 1.3 s of
 * wall and 0.5 CPU-s of each of the run's ~45 indexer starts (measured one at a time). The note is the snapshot's
 * head as `block:hash`: a copy serves only a chain that holds that block. test/indexer/template.test.ts holds a
 * copy to an indexer from the first block, row for row.
 */
function indexerTemplate(): Promise<Template | null> {
  build ??= indexerBuildHash(UNIVERSE_FILE).digest("hex").slice(0, 10);
  return runTemplate(`ixtpl${build}`, async (url) => {
    const anvil = await startAnvil({ loadState: SNAPSHOT_FILE, dieWithParent: true });
    try {
      const head = await blockAt(anvil.port);
      if (!head) throw new Error("the snapshot's chain has no head");
      const ix = await startIndexer({
        anvilPort: anvil.port,
        backend: "postgres",
        layout: { dbName: null, dbUrl: url, ...TEMPLATE_SCHEMAS },
      });
      try {
        await ix.waitFor(head.number);
        await (await ix.stop()).close();
      } finally {
        await ix.cleanup();
      }
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        // A stopped indexer's schema stays locked until its heartbeat expires (about 25 s): a copy must find it free.
        // Its views stay, as a restarted build's do in production: read during the copy's recovery, they give the
        // checkpoint its rows are at (api/ports/indexed.ts tablesCheckpoint; test/indexer/recovery.test.ts).
        await c.query(
          `UPDATE "${TEMPLATE_SCHEMAS.schema}"."_ponder_meta" SET value = jsonb_set(value, '{is_locked}', '0') ` +
            "WHERE key = 'app'",
        );
      } finally {
        await c.end();
      }
      return `${head.number}:${head.hash}`;
    } finally {
      await anvil.stop();
    }
  });
}

/** Block `blockNumber` (the head without one) on the anvil at `port`: its number and hash, or null when it has none. */
async function blockAt(port: number, blockNumber?: bigint): Promise<{ number: number; hash: string } | null> {
  const pub = publicClient({ transport: http(`http://127.0.0.1:${port}`) });
  const block = await pub.getBlock(blockNumber === undefined ? {} : { blockNumber }).catch(() => null);
  return block ? { number: Number(block.number), hash: block.hash } : null;
}

/**
 * A fresh indexer's layout: a database of its own (PostgreSQL) copied from the run's template when the chain holds
 * the template's head, else empty, or a new schema beside a running build (`deployInto`).
 */
async function layoutOf(opts: IndexerOpts): Promise<Layout> {
  if (opts.layout) return opts.layout;
  const id = Math.random().toString(36).slice(2, 10);
  const own = { schema: `t_${id}`, viewsSchema: `v_${id}` };
  if (opts.backend === "pglite") return { dbName: null, dbUrl: null, ...own };
  if (opts.deployInto)
    return {
      dbName: null,
      dbUrl: opts.deployInto.databaseUrl,
      schema: own.schema,
      viewsSchema: opts.deployInto.viewsSchema,
    };
  const dbName = runDatabaseName("ix");
  const tpl = opts.fromScratch ? null : await indexerTemplate();
  if (tpl) {
    const [block, hash] = tpl.note.split(":");
    if ((await blockAt(opts.anvilPort, BigInt(block!)))?.hash === hash)
      return { dbName, dbUrl: await createDatabase(dbName, tpl.name), ...TEMPLATE_SCHEMAS };
  }
  return { dbName, dbUrl: await createDatabase(dbName), ...own };
}

type IndexerOpts = {
  anvilPort: number;
  backend: IndexerBackend;
  deployInto?: { databaseUrl: string; viewsSchema: string };
  /** Mount the API in the indexer as npm start does (served at `base`); off by default. */
  embeddedApi?: boolean;
  /** Index the chain from its first block even where the run's template could serve (the backfill under test). */
  fromScratch?: boolean;
  /** Where to keep the tables, as given (the template's own build). */
  layout?: Layout;
};

/**
 * The real indexer (`ponder start`) against a test's devnet, on PostgreSQL (own schema + views
 * schema, read live) or PGlite (own directory, read after the indexer stops: PGlite has one
 * process). The indexer runs alone (PIT_INDEXER_ONLY) unless `embeddedApi` mounts the API in it.
 */
export async function startIndexer(opts: IndexerOpts) {
  // A database of its own: Ponder's sync cache (schema ponder_sync) is keyed by chain id, and every
  // devnet is chain 4663 with the same addresses, so a shared one would replay another chain's logs.
  // `deployInto`: a new build beside a running one (same database and views schema, its own schema).
  const { dbName, dbUrl, schema, viewsSchema } = await layoutOf(opts);
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
    // Ponder's CLI bundled once for the run by test/globalSetup.ts (scripts/apiBundle.ts), else as installed.
    process.env.PIT_INDEXER_BIN ?? PONDER_BIN,
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
  /**
   * Ponder's /ready: its backfill is done. Until then the checkpoint it reports may be one it is about to revert:
   * a copy of the run's template reports the template's head while it re-indexes the unfinalised blocks.
   */
  let ready = false;
  const backfilled = async () =>
    (ready ||= await fetch(`http://127.0.0.1:${opsPort}/ready`).then(
      (r) => r.status === 200,
      () => false,
    ));

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
        if (h !== null && h >= Number(block) && (await backfilled())) {
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
      if (dbName) await dropDatabase(dbName);
    },
  };
}

export type Indexer = Awaited<ReturnType<typeof startIndexer>>;
