import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { IndexerSupervisor } from "../scripts/supervisor.js";

/**
 * An indexer that fails at every start (as an embedded store left inconsistent by kill -9 does):
 * beforeRestart hears how many restarts the last minute held and why, so npm start can re-index
 * from scratch at the second crash instead of retrying the same failure until it gives up.
 */
describe("IndexerSupervisor", () => {
  it("tells beforeRestart the restarts of the last minute and the crash's reason", async () => {
    const calls: [number, string][] = [];
    let gaveUp = "";
    const s = new IndexerSupervisor({
      spawnIndexer: () => spawn(process.execPath, ["-e", "process.exit(1)"], { stdio: "ignore" }),
      opsUrl: "http://127.0.0.1:9",
      chainHead: async () => null,
      beforeRestart: async (n, reason) => void calls.push([n, reason]),
      log: () => {},
      onGiveUp: (r) => void (gaveUp = r),
      maxRestartsPerMinute: 3,
      pollMs: 60_000,
    });
    s.start();
    for (let i = 0; i < 200 && !gaveUp; i++) await new Promise((r) => setTimeout(r, 100));
    await s.stop();
    expect(calls.map((c) => c[0])).toEqual([1, 2, 3]);
    expect(calls.every((c) => /exited unexpectedly \(code 1/.test(c[1]))).toBe(true);
    expect(gaveUp).toMatch(/3 restarts in the last minute/);
  }, 30_000);
});
