import { join } from "node:path";
import { ensureSnapshot } from "../devnet/snapshot.js";
import { weekOf } from "../api/treasury/week.js";
import { openMigratedMemory } from "../api/ports/store/memory.js";
import { ROOT } from "../lib/root.js";
import { buildApiBundle, buildIndexerBundle } from "../scripts/apiBundle.js";
import { dropRunDatabases } from "./helpers/databases.js";

/** Where the workers find the migrated store's dump (vitest.config.ts gives them the same path). */
export const PGLITE_TEMPLATE_DIR = join(ROOT, ".data", "test");

/**
 * Builds the pristine devnet snapshot once, before any worker starts its own anvil from it, and
 * the migrated store's dump every in-memory store of the run opens from (api/ports/store/memory.ts),
 * and the bundles its indexers run and load (scripts/apiBundle.ts). Names the run, so that the teardown drops the
 * PostgreSQL databases its files left (helpers/indexer.ts runDatabaseName) and no other run's.
 */
export default async function setup() {
  // vitest runs this once for the root and once per project: one name for the run, whichever comes first.
  process.env.PIT_TEST_RUN ??= Math.random().toString(36).slice(2, 8);
  const run = process.env.PIT_TEST_RUN;
  // Built beside the snapshot (esbuild runs in a process of its own), once per install.
  const indexerBin = buildIndexerBundle((m) => console.warn(m));
  // A snapshot from before this week's Monday (UTC) is built again: the treasury's tests see week A begin before
  // the loaded state only when the snapshot's blocks lie in the week they run in (a local snapshot was kept for weeks).
  await ensureSnapshot((m) => console.log(m), { builtSince: weekOf(Date.now() / 1000).start * 1000 });
  process.env.PGLITE_TEMPLATE_DIR = PGLITE_TEMPLATE_DIR;
  await (await openMigratedMemory()).close();
  // Every indexer of the run (and every npm start a test runs) mounts the API from one bundle.
  process.env.PIT_API_BUNDLE = await buildApiBundle();
  // …and runs Ponder's CLI from one bundle (test/helpers/indexer.ts; an npm start a test runs finds the same file).
  process.env.PIT_INDEXER_BIN = await indexerBin;
  // A run that made no database (unit files alone, on a machine without PostgreSQL) has nothing to drop.
  return () => dropRunDatabases(run).catch(() => {});
}
