import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { ROOT } from "./root.js";

type Ponder = typeof import("ponder");

/**
 * Ponder's package as Node itself loads it, for ponder.config.ts, ponder.schema.ts and src/api.
 *
 * Ponder runs those files through vite-node, which inlines (transforms and runs itself) every file it imports from
 * node_modules whose path has an `/esm/` folder, guessing that Node could not load it. Ponder's entry is
 * `dist/esm/index.js` and re-exports GraphQL middleware, so `import … from "ponder"` had vite-node transform about 400
 * modules (ponder, graphql-yoga, graphql-tools) at every indexer start: 1.8 s of its 7 s to ready, about 2.5 CPU-s,
 * at each of a test run's ~55 starts and at every `npm start`.
 *
 * `require` of an ES module (Node 20.19 and later) is one vite-node does not rewrite: Node loads the package, sharing
 * the modules the Ponder CLI has loaded already (its CLI imports the same entry). Where Node cannot (an older 20, an
 * entry that is not a plain path), the import vite-node inlines, as before, with a warning. The entry is read from
 * the package's own `exports`, so the working directory does not matter.
 */
function ponderEntry(): string | null {
  const dir = join(ROOT, "node_modules", "ponder");
  const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
    exports?: { ".": { import?: unknown } };
  };
  const entry = pkg.exports?.["."]?.import;
  return typeof entry === "string" ? join(dir, entry) : null;
}

/** Node's refusals to `require` an ES module: the only failures that fall back to vite-node's import. */
const CANNOT_REQUIRE_ESM = new Set(["ERR_REQUIRE_ESM", "ERR_REQUIRE_ASYNC_MODULE"]);

function loadNatively(): Ponder | null {
  const entry = ponderEntry();
  const slow = (why: string) => {
    process.emitWarning(`Ponder's package is loaded through vite-node (slower indexer start): ${why}`);
    return null;
  };
  if (!entry) return slow("its package.json names no plain import entry");
  try {
    return createRequire(import.meta.url)(entry) as Ponder;
  } catch (err) {
    // Anything else (a missing file, an error inside Ponder's modules) is a real failure, not a slow path.
    const code = (err as { code?: string }).code;
    if (code && CANNOT_REQUIRE_ESM.has(code)) return slow(code);
    throw err;
  }
}

/**
 * The Ponder an indexer started from its bundle (scripts/apiBundle.ts buildIndexerBundle) publishes before its CLI
 * runs: the CLI's own modules, bundled, so the project's files use the very Ponder that indexes (its tables, its
 * `sql`) without Node loading the package a second time.
 */
const published = (globalThis as Record<symbol, unknown>)[Symbol.for("pit.ponder")] as Ponder | undefined;

export const ponder: Ponder = published ?? loadNatively() ?? (await import("ponder"));
