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
 * the modules the Ponder CLI has loaded already. Where Node cannot (an older 20), the import vite-node inlines, as
 * before. The entry is read from the package's own `exports`, so the working directory does not matter.
 */
function ponderEntry(): string {
  const dir = join(ROOT, "node_modules", "ponder");
  const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { exports: { ".": { import: string } } };
  return join(dir, pkg.exports["."].import);
}

function loadNatively(): Ponder | null {
  try {
    return createRequire(import.meta.url)(ponderEntry()) as Ponder;
  } catch {
    return null;
  }
}

export const ponder: Ponder = loadNatively() ?? (await import("ponder"));
