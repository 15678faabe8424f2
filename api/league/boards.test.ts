import { describe, expect, it } from "vitest";
import { createBoardsWorker, FAILED_RETRY_MS } from "./boards.js";
import { RECENT_CLOSED_SEASONS, workedSeasons } from "./read.js";
import { LEAGUE_EPOCH_S, SEASON_S } from "../../lib/leagueCalendar.js";

/** The standings worker's invariant with its own clock: one computation per key at a time, readers served the last answer. */
function harness() {
  let now = 1_000_000;
  const calls: string[] = [];
  const gates = new Map<string, () => void>();
  let fail = false;
  const worker = createBoardsWorker<string>({
    clock: () => now,
    keys: async () => ["a", "b"],
    compute: async (k) => {
      calls.push(k);
      if (fail) throw new Error("chain down");
      return `${k}@${calls.length}`;
    },
    onCompute: (k) => new Promise<void>((r) => (gates.has(k) ? gates.set(k, r) : r())),
  });
  return { worker, calls, gates, tick: (ms: number) => (now += ms), failing: (v: boolean) => (fail = v) };
}

describe("the standings worker", () => {
  it("shares the first computation of a key among its first readers, then serves the last answer while the next runs", async () => {
    const h = harness();
    const first = await Promise.all(Array.from({ length: 50 }, () => h.worker.get("a")));
    expect(new Set(first)).toEqual(new Set(["a@1"]));
    expect(h.worker.computations("a")).toBe(1);
    // A pass held on key a: readers get a@1 and start nothing.
    h.gates.set("a", () => {});
    const pass = h.worker.runOnce();
    await new Promise((r) => setTimeout(r, 0));
    expect(await Promise.all(Array.from({ length: 50 }, () => h.worker.get("a")))).toEqual(Array(50).fill("a@1"));
    expect(h.worker.computations("a")).toBe(2);
    // A second pass asked meanwhile is the same pass.
    expect(h.worker.runOnce()).toBe(pass);
    h.gates.get("a")!();
    h.gates.delete("a");
    expect(await pass).toBe(2);
    expect(await h.worker.get("a")).toBe("a@2");
    expect(h.calls).toEqual(["a", "a", "b"]);
  });

  it("keeps the last answer when a pass fails, and a reader of a key that just failed gets the failure until the retry time", async () => {
    const h = harness();
    await h.worker.runOnce();
    h.failing(true);
    await h.worker.runOnce();
    expect(await h.worker.get("a")).toBe("a@1");
    // A key never answered, failed just now: readers do not recompute it for FAILED_RETRY_MS.
    const fresh = harness();
    fresh.failing(true);
    await expect(fresh.worker.get("a")).rejects.toThrow("chain down");
    await expect(fresh.worker.get("a")).rejects.toThrow("chain down");
    expect(fresh.worker.computations("a")).toBe(1);
    fresh.tick(FAILED_RETRY_MS);
    fresh.failing(false);
    expect(await fresh.worker.get("a")).toBe("a@2");
  });

  it("works the season playing and the latest ended ones only", () => {
    const inSeason = (n: number) => LEAGUE_EPOCH_S + (n - 1) * SEASON_S + 3_600;
    expect(workedSeasons(inSeason(10))).toEqual([10, 9, 8].slice(0, RECENT_CLOSED_SEASONS + 1));
    expect(workedSeasons(inSeason(1))).toEqual([1]);
    expect(workedSeasons(LEAGUE_EPOCH_S - 10)).toEqual([]);
  });
});
