import { afterAll, beforeAll } from "vitest";
import type { ChildProcess } from "node:child_process";
import { liveChildren } from "../../devnet/anvil.js";

/**
 * Each stack file's last after-hook (setup files' hooks are registered first, after-hooks run in reverse): an
 * anvil or indexer the file started and did not stop (a hook that timed out before its handle was kept, an
 * afterAll that threw half-way) is killed here, not left running beside the next files of this fork.
 */
let before = new Set<ChildProcess>();
beforeAll(() => {
  before = new Set(liveChildren);
});
afterAll(() => {
  for (const child of liveChildren) if (!before.has(child)) child.kill("SIGKILL");
});
