import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { defineConfig } from "vitest/config";
import SlowestFirst from "./test/sequencer.js";

const ROOT = new URL(".", import.meta.url).pathname;
const TEST_DIRS = ["test", "api", "lib", "cosigner", "sdk/test"];

/** A file that starts a chain, an indexer or a process of ours: it needs a fork of its own. */
const STARTS_PROCESSES =
  /helpers\/(devnet|stack|npmStart|indexer|sessions|fast|hostile|league|trades|schedulerChild)\.js|startAnvil|spawn\(/;

/** Every test file under the test folders (repository-relative), split by whether it starts processes. */
function testFiles(): { isolated: string[]; shared: string[] } {
  const all: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, e.name);
      if (e.isDirectory() && e.name !== "node_modules" && e.name !== "dist") walk(path);
      else if (e.isFile() && e.name.endsWith(".test.ts")) all.push(relative(ROOT, path));
    }
  };
  for (const d of TEST_DIRS) walk(join(ROOT, d));
  const isolated = all.filter((f) => STARTS_PROCESSES.test(readFileSync(join(ROOT, f), "utf8")));
  return { isolated, shared: all.filter((f) => !isolated.includes(f)) };
}
const files = testFiles();

export default defineConfig({
  // The workspace's SDK by name, from its source (sdk/build.ts builds the package that
  // sdk/test/package.test.ts installs elsewhere).
  resolve: { alias: { "@pit/sdk": new URL("./sdk/src/index.ts", import.meta.url).pathname } },
  test: {
    // The smart-accounts-kit's analytics stay off in every test process (and what they spawn).
    // In-memory stores open from one migrated dump (test/globalSetup.ts builds it first).
    env: { DO_NOT_TRACK: "1", PGLITE_TEMPLATE_DIR: new URL("./.data/test", import.meta.url).pathname },
    globalSetup: ["test/globalSetup.ts"],
    poolOptions: {
      // Each stack file starts its own anvil (and indexer, store, API), two files at a time on two cores. A fork
      // keeps one module graph across its files (isolate off): importing the API's few hundred modules once per
      // fork instead of once per file took the forks' CPU from about 240 to 165 s a run. (It once grew a fork to
      // 5-7 GB, when every stack file opened three PGlite stores; their stores are PostgreSQL now: 0.4-0.6 GB.)
      forks: { maxForks: 2, minForks: 1, isolate: false },
      // The files that start nothing share one module graph in one thread beside the forks: importing
      // the API's few hundred modules once instead of once per file was about 38 % of their CPU.
      threads: { maxThreads: 1, minThreads: 1, isolate: false },
    },
    sequence: { sequencer: SlowestFirst },
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: ["default"],
    projects: [
      {
        extends: true,
        test: { name: "stack", include: files.isolated, pool: "forks", setupFiles: ["test/setup/leftovers.ts"] },
      },
      { extends: true, test: { name: "unit", include: files.shared, pool: "threads" } },
    ],
  },
});
