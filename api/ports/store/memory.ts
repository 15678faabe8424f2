import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { type Db, openPglite, pgliteDb } from "./db.js";
import { MIGRATIONS, migrate } from "./migrations.js";
import { writeAside } from "../../../lib/writeAside.js";

/** Where the migrated dump is kept between processes (the tests set it; unset, it is per process only). */
const TEMPLATE_DIR = "PGLITE_TEMPLATE_DIR";

let template: Promise<Blob> | null = null;

/**
 * A migrated store in memory (tests, the devnet's in-process signing services, benches), opened
 * from a dump of a store migrated once rather than by PGlite's initdb and every migration each
 * time: initdb is most of an open's seconds. The dump is kept per process, and on disk under
 * PGLITE_TEMPLATE_DIR when that is set (named by the migrations' hash, so a changed migration
 * makes a new one). The store is as `openPglite` + `migrate` leave it.
 */
export async function openMigratedMemory(name = "store"): Promise<Db> {
  return openPglite(`memory://${name}-${Math.random().toString(36).slice(2)}`, await dumpOnce());
}

/** This process's migrated dump, made once (again after a failure). */
const dumpOnce = (): Promise<Blob> =>
  (template ??= migratedDump().catch((err) => {
    template = null;
    throw err;
  }));

/**
 * A PGlite store in the directory `dir`. A directory without a database starts from the migrated dump kept
 * under PGLITE_TEMPLATE_DIR when there is one (the tests' npm start: its app store and both signing services'
 * each paid initdb and every migration, seconds of CPU, at every fresh start); otherwise PGlite's initdb.
 * The caller migrates as always (a no-op on the dump's version).
 */
export async function openPgliteDir(dir: string): Promise<Db> {
  const fresh = !existsSync(join(dir, "PG_VERSION"));
  const kept = fresh ? keptDump() : null;
  return openPglite(dir, kept ?? undefined);
}

/**
 * The migrated dump kept under PGLITE_TEMPLATE_DIR for the stores opened by `openPgliteDir` in this process and the
 * processes it starts, made now when there is none: `npm start`'s first run on a fresh DATA_DIR opened three stores
 * (the app's, the co-signer's, the executors') each by initdb and every migration, about 3 CPU-s apiece beside the
 * indexer's start on two cores. False when the dump could not be kept (no PGLITE_TEMPLATE_DIR, a directory that cannot
 * be written): those stores then pay initdb as before.
 */
export async function keepMigratedDump(): Promise<boolean> {
  const file = dumpFile();
  if (!file) return false;
  const dump = await dumpOnce();
  // A dump this process made before PGLITE_TEMPLATE_DIR named this place is kept here too.
  if (!existsSync(file)) await keep(process.env[TEMPLATE_DIR]!, file, dump);
  return existsSync(file);
}

/** Where the migrated dump of the current migrations is kept, when PGLITE_TEMPLATE_DIR is set. */
function dumpFile(): string | null {
  const dir = process.env[TEMPLATE_DIR];
  // The dump's own layout counts too (v2: template1 alone), so a dump kept by an older checkout is not read.
  const hash = createHash("sha256")
    .update(`v2 ${JSON.stringify(MIGRATIONS)}`)
    .digest("hex")
    .slice(0, 16);
  return dir ? join(dir, `app-store-${hash}.tar`) : null;
}

/** The kept dump, or null when none is kept (not made yet, or no PGLITE_TEMPLATE_DIR). */
function keptDump(): Blob | null {
  const file = dumpFile();
  if (!file) return null;
  try {
    return new Blob([readFileSync(file)]);
  } catch {
    return null;
  }
}

async function migratedDump(): Promise<Blob> {
  const kept = keptDump();
  if (kept) return kept;
  const file = dumpFile();
  const dir = process.env[TEMPLATE_DIR];
  const lite = new PGlite();
  await lite.waitReady;
  await migrate(pgliteDb(lite));
  // PGlite keeps the store in template1; the cluster's two other databases are half the dump's files and bytes,
  // and every open unpacks them again (about a third of an open's CPU).
  for (const sql of ["DROP DATABASE postgres", "ALTER DATABASE template0 IS_TEMPLATE false", "DROP DATABASE template0"])
    await lite.exec(sql); // one statement each: DROP DATABASE refuses a transaction block
  await lite.exec("CHECKPOINT");
  const dump = await lite.dumpDataDir("none");
  await lite.close();
  if (file && dir) await keep(dir, file, dump);
  return dump;
}

/** `dump` kept as `file` in `dir`, best effort: a directory that cannot be written keeps nothing (the dump serves). */
async function keep(dir: string, file: string, dump: Blob) {
  try {
    writeAside(file, new Uint8Array(await dump.arrayBuffer()));
    // Dumps of earlier migrations are never read again.
    for (const f of readdirSync(dir)) if (/^app-store-\w+\.tar$/.test(f) && join(dir, f) !== file) rmSync(join(dir, f));
  } catch {
    // kept nowhere: this process's dump still serves
  }
}
