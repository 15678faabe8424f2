import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root, whatever the working directory. */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
