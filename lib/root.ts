import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The repository root, whatever the working directory: the nearest folder above this file that holds
 * package.json (from lib/ that is its parent; from the API bundle under node_modules/.cache, the same).
 */
function findRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json")) && !dir.includes("node_modules")) return dir;
    if (dirname(dir) === dir) return join(dirname(fileURLToPath(import.meta.url)), "..");
  }
}

export const ROOT = findRoot(dirname(fileURLToPath(import.meta.url)));
