import { afterEach, describe, expect, it } from "vitest";
import { openMigratedMemory } from "../ports/store/memory.js";
import { createBoardsWorker, FAILED_RETRY_MS, storedAnswers } from "./boards.js";
import type { Db } from "../ports/store/db.js";
import { migrate } from "../ports/store/migrations.js";
import { createLease } from "../ports/store/lease.js";
import { RECENT_CLOSED_SEASONS, workedSeasons } from "./read.js";
import { LEAGUE_EPOCH_S, SEASON_S } from "../../lib/league/calendar.js";

/**
 * The standings worker's invariant with its own clock: one computation per key at a time, readers served the
 * last answer.
 */
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
  it(
    "shares the first computation of a key among its first readers, then serves the last answer " +
      "while the next runs",
    async () => {
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
    },
  );

  it(
    "keeps the last answer when a pass fails, and a reader of a key that just failed gets the " +
      "failure until the retry time",
    async () => {
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
    },
  );

  it("works the season playing and the latest ended ones only", () => {
    const inSeason = (n: number) => LEAGUE_EPOCH_S + (n - 1) * SEASON_S + 3_600;
    expect(workedSeasons(inSeason(10))).toEqual([10, 9, 8].slice(0, RECENT_CLOSED_SEASONS + 1));
    expect(workedSeasons(inSeason(1))).toEqual([1]);
    expect(workedSeasons(LEAGUE_EPOCH_S - 10)).toEqual([]);
  });
});

/**
 * Instances of the worker sharing one store (a real PGlite) and one injected clock: the holder of
 * the standings lease computes and writes; the others read its answers.
 */
const LEASE_MS = 60_000;
async function sharedStore() {
  const db = await openMigratedMemory();
  await migrate(db);
  let now = 1_000_000;
  const clock = () => now;
  /** One instance: its computations by key, and a gate per key that holds its next computation. */
  function instance(name: string) {
    const gates = new Map<string, () => void>();
    let n = 0;
    const worker = createBoardsWorker<string>({
      clock,
      keys: async () => ["a", "b"],
      compute: async (k) => `${k}@${name}${++n}`,
      onCompute: (k) => new Promise<void>((r) => (gates.has(k) ? gates.set(k, r) : r())),
      shared: storedAnswers<string>(db, createLease(db, "league-standings", LEASE_MS, clock)),
    });
    return { worker, gates, flood: (k: string) => Promise.all(Array.from({ length: 50 }, () => worker.get(k))) };
  }
  return { db, instance, tick: (ms: number) => (now += ms) };
}

describe("the standings worker across instances, under a lease", () => {
  let db: Db | undefined;
  afterEach(async () => void (await db?.close()));

  it(
    "the holder computes each key once per pass; the others serve its answers and start nothing, " +
      "stale while it computes the next",
    async () => {
      const s = await sharedStore();
      db = s.db;
      const [a, b, cold] = [s.instance("A"), s.instance("B"), s.instance("C")];
      expect(await a.worker.runOnce()).toBe(2);
      // Readers of an instance that never passed: the stored answer, no computation.
      expect(new Set(await cold.flood("a"))).toEqual(new Set(["a@A1"]));
      expect(await b.worker.runOnce()).toBe(0);
      const [fromA, fromB] = await Promise.all([a.flood("a"), b.flood("a")]);
      expect(new Set([...fromA, ...fromB])).toEqual(new Set(["a@A1"]));
      expect([a.worker.computations("a"), b.worker.computations("a"), cold.worker.computations("a")]).toEqual([
        1, 0, 0,
      ]);

      // The holder's next pass, a second later, held on key a; the other's pass meanwhile computes nothing.
      s.tick(1_000);
      a.gates.set("a", () => {});
      const pass = a.worker.runOnce();
      for (let i = 0; i < 100 && a.worker.computations("a") < 2; i++) await new Promise((r) => setTimeout(r, 5));
      expect(await b.worker.runOnce()).toBe(0);
      const [heldA, heldB] = await Promise.all([a.flood("a"), b.flood("a")]);
      expect(new Set([...heldA, ...heldB])).toEqual(new Set(["a@A1"]));
      expect([a.worker.computations("a"), b.worker.computations("a")]).toEqual([2, 0]);
      a.gates.get("a")!();
      a.gates.delete("a");
      expect(await pass).toBe(2);
      // The other's next pass reads the new answers.
      await b.worker.runOnce();
      expect([await b.worker.get("a"), await b.worker.get("b")]).toEqual(["a@A3", "b@A4"]);
      expect(b.worker.computations("a") + b.worker.computations("b")).toBe(0);
    },
  );

  it(
    "a holder that dies keeps the lease until it lapses, then another takes it and computes; a " +
      "holder that stops gives it up at once",
    async () => {
      const s = await sharedStore();
      db = s.db;
      const [a, b] = [s.instance("A"), s.instance("B")];
      expect(await a.worker.runOnce()).toBe(2);
      // A goes silent (no stop, no pass). Within the lease, B only reads.
      s.tick(LEASE_MS - 1);
      expect(await b.worker.runOnce()).toBe(0);
      s.tick(2);
      expect(await b.worker.runOnce()).toBe(2);
      expect(await b.worker.get("a")).toBe("a@B1");
      // A back: no longer the holder, it serves B's answers.
      expect(await a.worker.runOnce()).toBe(0);
      expect(await a.worker.get("a")).toBe("a@B1");
      // B stops cleanly: A takes over at its next pass, without waiting out the lease.
      await b.worker.stop();
      expect(await a.worker.runOnce()).toBe(2);
      expect(await a.worker.get("a")).toBe("a@A3");
    },
  );

  it("stores an answer deflated, about a tenth of its JSON, and reads it back field for field", async () => {
    const s = await sharedStore();
    db = s.db;
    const lease = createLease(db, "league-standings", LEASE_MS, () => 1_000_000);
    const shared = storedAnswers<{ rows: Record<string, unknown>[] }>(db, lease);
    // A board's rows as they repeat: the same rules and reasons, numbers that differ.
    const rows = Array.from({ length: 1_000 }, (_, i) => ({
      rank: i + 1,
      entry_id: `le_${String(i).padStart(16, "0")}`,
      profit_usd: Math.round(Math.sin(i) * 1e6) / 100,
      eligibility: { status: "pass", rules: ["CONFIRMED", "SANCTIONS", "HOUSE"].map((rule) => ({ rule, ok: true })) },
    }));
    expect(await shared.hold()).toBe(true);
    expect(await shared.save("prize:9", { value: { rows }, at: 1_000_001 })).toBe(true);
    const [stored] = await db.query<{ n: number }>(
      "SELECT octet_length(answer) AS n FROM app.league_board_packed WHERE key = 'prize:9'",
    );
    expect(Number(stored!.n)).toBeLessThan(JSON.stringify({ rows }).length / 5);
    const back = await shared.load(["prize:9"], () => 0);
    expect(back.get("prize:9")).toEqual({ value: { rows }, at: 1_000_001 });
    // Read only when written after what the reader holds.
    expect((await shared.load(["prize:9"], () => 1_000_001)).size).toBe(0);
  });

  it("readers of a key with no answer anywhere share one local computation", async () => {
    const s = await sharedStore();
    db = s.db;
    const b = s.instance("B");
    expect(new Set(await b.flood("a"))).toEqual(new Set(["a@B1"]));
    expect(b.worker.computations("a")).toBe(1);
  });
});
