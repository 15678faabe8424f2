import { createHash } from "node:crypto";
import { existsSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";
import { ROOT } from "../lib/root.js";

/** Where bundles are kept: a build cache, never committed. */
const DIR = join(ROOT, "node_modules", ".cache", "pit-api");

/**
 * Bundles the API Ponder mounts (api/embedded.ts and every source file it reaches; packages stay
 * imports) into one ES module and answers its path, for PIT_API_BUNDLE (src/api/index.ts).
 */
export const buildApiBundle = (): Promise<string> => buildBundle(join("api", "embedded.ts"), "embedded");

/**
 * Bundles `entry` (a path under the repository's root) and every source file it reaches into one ES
 * module, packages left as imports, and answers its path: the processes npm start runs from our
 * TypeScript (the signing services, the API processes of `npm run stack`) start from one file that
 * Node loads natively, in about half the time of tsx over a few hundred sources.
 *
 * Named by the hash of its bytes and written by rename: a start or test run building while another
 * process loads an older bundle never changes a file under it. Built at every start (well under a
 * second), so it is never older than the sources.
 */
export async function buildBundle(entry: string, name: string): Promise<string> {
  const out = await build({
    entryPoints: [join(ROOT, entry)],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    write: false,
    logLevel: "error",
  });
  const bytes = out.outputFiles[0]!.contents;
  const file = join(DIR, `${name}-${createHash("sha256").update(bytes).digest("hex").slice(0, 16)}.mjs`);
  if (!existsSync(file)) {
    mkdirSync(DIR, { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, bytes);
    renameSync(tmp, file);
  }
  return file;
}
