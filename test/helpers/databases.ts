import pg from "pg";
import { openPostgres } from "../../api/ports/store/db.js";
import { migrate } from "../../api/ports/store/migrations.js";

export const PG_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/test";

/** The URL of database `name` on the test server. */
export const databaseUrl = (name: string): string => PG_URL.replace(/\/[^/]*$/, `/${name}`);

/**
 * A database name of this test run (`pit_<kind>_<run>_<random>`): globalSetup's teardown drops every one of the run
 * left behind (a store whose file never dropped it, a file stopped by a timeout), and no other run's.
 */
export function runDatabaseName(kind: string): string {
  return `pit_${kind}_${process.env.PIT_TEST_RUN ?? "local"}_${Math.random().toString(36).slice(2, 10)}`;
}

async function admin<T>(work: (c: pg.Pool) => Promise<T>): Promise<T> {
  const pool = new pg.Pool({ connectionString: PG_URL, max: 1 });
  try {
    return await work(pool);
  } finally {
    await pool.end();
  }
}

/** Drops the databases `runDatabaseName` (and `runTemplate`) made for `run` that are still there. */
export async function dropRunDatabases(run: string): Promise<void> {
  await admin(async (c) => {
    const { rows } = await c.query<{ datname: string }>(
      "SELECT datname FROM pg_database WHERE datname LIKE 'pit\\_%' AND position($1 in datname) > 0",
      [`_${run}_`],
    );
    for (const { datname } of rows) await c.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`).catch(() => {});
  });
}

/** A fresh PostgreSQL database next to the test one, empty or a copy of `template`; its URL. */
export async function createDatabase(name: string, template?: string): Promise<string> {
  await admin((c) => c.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ""}`));
  return databaseUrl(name);
}

export async function dropDatabase(name: string): Promise<void> {
  await admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).catch(() => {});
}

export type Template = { name: string; note: string };

/** Per process: each kind's template is looked up (or built) once. */
const templates = new Map<string, Promise<Template | null>>();

/**
 * The test run's template database of `kind`, built by `build` in whichever test process asks first while the
 * others wait on an advisory lock, then only looked up and copied (`createDatabase(name, template)`): a copy costs
 * what an empty database does and a little more (430-520 ms here against 275-330, WAL and fsync), and saves each file
 * the build (a store's migrations, 295-400 ms; an indexer's tables and backfill of the snapshot, about 1 CPU-s).
 *
 * `build` fills the database at the URL it is given and returns a note the copies need (kept as the database's
 * comment, read without connecting to it: a copy fails while anyone is connected to its template). It builds under
 * another name that becomes the template's only when the build is done, so a builder that dies leaves no half-built
 * template. Outside a test run (no PIT_TEST_RUN: benches, scripts) there is none, and callers build from scratch.
 */
export function runTemplate(kind: string, build: (url: string) => Promise<string>): Promise<Template | null> {
  const run = process.env.PIT_TEST_RUN;
  if (!run) return Promise.resolve(null);
  let t = templates.get(kind);
  if (!t) {
    // A template that cannot be built is a slower run, not a failed one: its callers build from scratch.
    t = lockedTemplate(`pit_${kind}_${run}_template`, build).catch((err) => {
      console.warn(`no ${kind} template this run (building from scratch instead): ${(err as Error).message}`);
      return null;
    });
    templates.set(kind, t);
  }
  return t;
}

async function lockedTemplate(name: string, build: (url: string) => Promise<string>): Promise<Template> {
  const lock = new pg.Client({ connectionString: PG_URL });
  await lock.connect();
  try {
    // Bounded: a builder that hangs makes the others build from scratch, inside their hooks' 120 s.
    await lock.query("SET lock_timeout = '100s'");
    await lock.query("SELECT pg_advisory_lock(hashtext($1))", [name]);
    const [done] = (
      await lock.query<{ note: string | null }>(
        "SELECT shobj_description(oid, 'pg_database') AS note FROM pg_database WHERE datname = $1",
        [name],
      )
    ).rows;
    if (done) return { name, note: done.note ?? "" };
    const building = `${name}_building`;
    await lock.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`);
    const note = await build(await createDatabase(building));
    await lock.query(`COMMENT ON DATABASE ${building} IS ${pg.escapeLiteral(note)}`);
    await lock.query(`ALTER DATABASE ${building} RENAME TO ${name}`);
    return { name, note };
  } finally {
    await lock.end();
  }
}

/** The app store's migrations, applied once a run: the API's store and the signing services' stores copy it. */
export function storeTemplate(): Promise<Template | null> {
  return runTemplate("store", async (url) => {
    const db = await openPostgres(url, 1);
    try {
      await migrate(db);
    } finally {
      await db.close();
    }
    return "";
  });
}

/** A fresh database of this run with the app store's migrations applied (a copy of the run's template, if any). */
export async function createMigratedDatabase(name: string): Promise<string> {
  return createDatabase(name, (await storeTemplate())?.name);
}
