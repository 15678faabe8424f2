import { createHash, type Hash } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { ROOT } from "../lib/root.js";
import type { Config } from "../lib/config.js";

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? files(p) : [p];
  });
}

/**
 * What an indexer build is made of, hashed: indexing code, ABIs, lib/ and the universe's addresses. The test run
 * names its indexer template by it (test/helpers/indexer.ts), so a copy is only ever of the same build.
 */
export function indexerBuildHash(universeFile: string): Hash {
  const h = createHash("sha256");
  const inputs = [
    join(ROOT, "ponder.config.ts"),
    join(ROOT, "ponder.schema.ts"),
    ...files(join(ROOT, "src")),
    ...files(join(ROOT, "abis")),
    ...files(join(ROOT, "lib")),
  ].sort();
  for (const f of inputs) h.update(relative(ROOT, f)).update(readFileSync(f));
  return h.update(readFileSync(universeFile));
}

/**
 * Ponder refuses to reuse a schema for a different build, and a changed build must re-index. So
 * the schema is named after what the build depends on: indexing code, ABIs, addresses and RPC.
 * Same build -> same schema -> Ponder resumes from its checkpoint after a restart.
 */
export function indexerSchema(config: Config): string {
  return `pit_${indexerBuildHash(config.universeFile).update(config.rpcUrl).digest("hex").slice(0, 12)}`;
}
