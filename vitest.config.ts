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
    // One module graph per worker (isolate off): every file imported the whole API afresh, about
    // 3.7 s of CPU each; test files share no module state that one file changes for the next.
    pool: "forks",
    poolOptions: { forks: { maxForks: 2, minForks: 1, isolate: false } },
    sequence: { sequencer: SlowestFirst },
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: ["default"],
  },
});
