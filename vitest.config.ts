import { defineConfig } from "vitest/config";
import SlowestFirst from "./test/sequencer.js";

export default defineConfig({
  // The workspace's SDK by name, from its source (sdk/build.ts builds the package that
  // sdk/test/package.test.ts installs elsewhere).
  resolve: { alias: { "@pit/sdk": new URL("./sdk/src/index.ts", import.meta.url).pathname } },
  test: {
    include: [
      "test/**/*.test.ts",
      "api/**/*.test.ts",
      "lib/**/*.test.ts",
      "cosigner/**/*.test.ts",
      "sdk/test/**/*.test.ts",
    ],
    // The smart-accounts-kit's analytics stay off in every test process (and what they spawn).
    // In-memory stores open from one migrated dump (test/globalSetup.ts builds it first).
    env: { DO_NOT_TRACK: "1", PGLITE_TEMPLATE_DIR: new URL("./.data/test", import.meta.url).pathname },
    globalSetup: ["test/globalSetup.ts"],
    // Each file starts its own anvil; two cores means two files at a time is the sweet spot.
    // A fresh fork per file (vitest's default). One module graph per worker (isolate off) saved
    // 38 % of the CPU of the files without a devnet, but a worker grew to 5-7 GB over the stack
    // files (PGlite and WASM memory that outlives its file) and the whole run slowed down.
    pool: "forks",
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    sequence: { sequencer: SlowestFirst },
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: ["default"],
  },
});
