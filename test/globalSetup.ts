import { join } from "node:path";
import { ensureSnapshot } from "../devnet/snapshot.js";
import { openMigratedMemory } from "../api/ports/store/memory.js";
import { ROOT } from "../lib/root.js";

/** Where the workers find the migrated store's dump (vitest.config.ts gives them the same path). */
export const PGLITE_TEMPLATE_DIR = join(ROOT, ".data", "test");

/**
 * Builds the pristine devnet snapshot once, before any worker starts its own anvil from it, and
 * the migrated store's dump every in-memory store of the run opens from (api/ports/store/memory.ts).
 */
export default async function setup() {
  await ensureSnapshot((m) => console.log(m));
  process.env.PGLITE_TEMPLATE_DIR = PGLITE_TEMPLATE_DIR;
  await (await openMigratedMemory()).close();
}
