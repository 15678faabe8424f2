import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * The slowest files start first (longest-processing-time first over the two workers): on a clean
 * checkout vitest has no timings cached and orders by file size, which once left a 108 s fault
 * test to start near the end and run alone. Measured durations, slowest first; the rest keep
 * vitest's own order.
 */
const SLOWEST_FIRST = [
  "test/faults/restart.test.ts",
  "test/faults/stall.test.ts",
  "test/e2e/treasury.test.ts",
  "test/e2e/tokens.test.ts",
  "test/e2e/hosted.test.ts",
  "test/start.test.ts",
  "test/stack.test.ts",
  "sdk/test/package.test.ts",
  "test/e2e/sessions.test.ts",
  "test/e2e/leagueSeason.test.ts",
  "test/indexer/deploy.test.ts",
  "test/indexer/indexer.test.ts",
  "test/e2e/availability.test.ts",
  "test/e2e/limits.test.ts",
  "test/attacks/feesMarksEdges.test.ts",
  "test/e2e/fast.test.ts",
  "test/e2e/leagueWorker.test.ts",
  "test/e2e/routeLimits.test.ts",
  // Store-heavy files without a devnet (PostgreSQL and PGlite; 15-20 s each, measured under load).
  "api/hosted/agents.test.ts",
  "api/tokens/store.test.ts",
  "cosigner/executors.test.ts",
  "api/trading/ledger.test.ts",
  "api/league/pay.test.ts",
  "api/league/boards.test.ts",
];

export default class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const base = await super.sort(files);
    const rank = (f: TestSpecification) => {
      const i = SLOWEST_FIRST.findIndex((p) => f.moduleId.replaceAll("\\", "/").endsWith(p));
      return i < 0 ? SLOWEST_FIRST.length : i;
    };
    return [...base].sort((a, b) => rank(a) - rank(b));
  }
}
