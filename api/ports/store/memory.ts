import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { type Db, openPglite, pgliteDb } from "./db.js";
import { MIGRATIONS, migrate } from "./migrations.js";

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
  template ??= migratedDump().catch((err) => {
    template = null;
    throw err;
  });
  return openPglite(`memory://${name}-${Math.random().toString(36).slice(2)}`, await template);
}

async function migratedDump(): Promise<Blob> {
  const dir = process.env[TEMPLATE_DIR];
  const hash = createHash("sha256").update(JSON.stringify(MIGRATIONS)).digest("hex").slice(0, 16);
  const file = dir ? join(dir, `app-store-${hash}.tar`) : null;
  if (file) {
    try {
      return new Blob([readFileSync(file)]);
    } catch {
      // Not made yet: made below.
    }
  }
  const lite = new PGlite();
  await lite.waitReady;
  await migrate(pgliteDb(lite));
  const dump = await lite.dumpDataDir("none");
  await lite.close();
  if (file && dir) {
    // Written aside, then renamed: a process reading it never sees half a file.
    mkdirSync(dir, { recursive: true });
    const part = `${file}.${process.pid}.part`;
    writeFileSync(part, Buffer.from(await dump.arrayBuffer()));
    renameSync(part, file);
    // Dumps of earlier migrations are never read again.
    for (const f of readdirSync(dir)) if (/^app-store-\w+\.tar$/.test(f) && join(dir, f) !== file) rmSync(join(dir, f));
  }
  return dump;
}
