import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Address } from "viem";
import { openPostgres, type Db } from "../ports/store/db.js";
import { migrate } from "../ports/store/migrations.js";
import { createDatabase, dropDatabase } from "../../test/helpers/databases.js";
import type { AiConfig } from "../../lib/config.js";
import { LOCK_POOL, NANO, reserve, settle } from "./spend.js";

const name = `pit_spend_${Math.random().toString(36).slice(2, 10)}`;
let db: Db;
beforeAll(async () => {
  db = await openPostgres(await createDatabase(name), 20);
  await migrate(db);
});
afterAll(async () => {
  await db?.close();
  await dropDatabase(name);
});

const ai: AiConfig = {
  gatewayUrl: "http://127.0.0.1:1/v1",
  gatewayKey: "k".repeat(16),
  standIn: false,
  models: [{ id: "m", price: { input: 1, output: 1, structured: null, source: "t" } }],
  pool: {
    usdDay: 0.05,
    ownerShareMaxUsd: 0.03,
    liveShareUsd: 0.03,
    trialShareUsd: 0.03,
    trialDays: 7,
    trialPoolPct: 40,
    models: null,
    minIntervalS: 300,
    agentsPerOwner: 100,
  },
  ownKeysSecret: "s".repeat(40),
  callTimeoutMs: 1_000,
};
const wallet = "0x00000000000000000000000000000000000000a1" as Address;
const agent = (i: number, o: Partial<Parameters<typeof reserve>[2]> = {}) => ({
  id: `ha_${i}`,
  wallet,
  intervalS: 300,
  live: true,
  model: "m",
  funding: "own" as const,
  fallbackOwn: true,
  budgetUsdDay: 1,
  ...o,
});
const sum = async (where: string) =>
  Number(
    (
      await db.query<{ n: string }>(`SELECT coalesce(sum(cost_nusd), 0)::text AS n FROM app.ai_spend WHERE ${where}`)
    )[0]!.n,
  ) / NANO;

describe("reserving an AI call's worst case on PostgreSQL", () => {
  it("holds 40 concurrent reservations of one owner within the own day cap and the agent's budget", async () => {
    await db.query(
      `INSERT INTO app.ai_own (wallet, sealed_key, sub_hint, day_cap_usd, connected_at)
       VALUES ($1, 'x', '…abcd', 0.02, 0)`,
      [wallet.toLowerCase()],
    );
    const now = Date.now();
    const all = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        reserve(db, ai, agent(i % 4), { ownerSinceMs: now, nowMs: now, worstUsd: 0.003, tickSeq: i }),
      ),
    );
    const made = all.filter((r) => "rowId" in r);
    expect(made.length).toBe(6);
    expect(all.filter((r) => "hold" in r && r.hold === "OWN_DAY_CAP").length).toBe(34);
    expect(await sum("source = 'own'")).toBeLessThanOrEqual(0.02);
    // Settled below the worst case: room again for what the cap still holds.
    for (const r of made)
      if ("rowId" in r)
        await settle(db, r.rowId, {
          status: "ok",
          code: null,
          promptTokens: 10,
          completionTokens: 10,
          costUsd: 0.001,
          costSource: "usage",
          ms: 5,
          poolHold: null,
        });
    expect(await sum("source = 'own'")).toBeCloseTo(0.006, 9);
  });

  it("holds concurrent pool-paid reservations of many owners within the pool and each owner's share", async () => {
    const now = Date.now();
    const owners = Array.from({ length: 5 }, (_, i) => `0x00000000000000000000000000000000000000b${i}` as Address);
    const all = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        reserve(
          db,
          ai,
          { ...agent(100 + i), wallet: owners[i % 5]!, funding: "service", fallbackOwn: false },
          { ownerSinceMs: now, nowMs: now, worstUsd: 0.004, tickSeq: i },
        ),
      ),
    );
    const made = all.filter((r) => "rowId" in r);
    // The pool holds 12 worst cases ($0.05 / $0.004), each owner's share 7 ($0.03 / $0.004).
    expect(made.length).toBe(12);
    expect(await sum("source = 'service'")).toBeLessThanOrEqual(0.05);
    for (const o of owners)
      expect(await sum(`source = 'service' AND wallet = '${o.toLowerCase()}'`)).toBeLessThanOrEqual(0.03);
    expect(new Set(all.flatMap((r) => ("hold" in r ? [r.hold] : [])))).toEqual(new Set(["AI_POOL_SPENT"]));
  });

  it(
    "is AI_POOL_UNAVAILABLE when the pool's lock cannot be had in time: the owner's own account pays with it as " +
      "pool_hold, or the tick holds; a free pool pays again",
    async () => {
      const now = Date.now() + 2 * 86_400_000;
      const w = "0x00000000000000000000000000000000000000e1" as Address;
      await db.query(
        `INSERT INTO app.ai_own (wallet, sealed_key, sub_hint, day_cap_usd, connected_at)
       VALUES ($1, 'x', '…abcd', 1, 0)`,
        [w.toLowerCase()],
      );
      const ask = (i: number, fallbackOwn: boolean) =>
        reserve(
          db,
          ai,
          { ...agent(300 + i), wallet: w, funding: "service", fallbackOwn },
          { ownerSinceMs: now, nowMs: now, worstUsd: 0.001, tickSeq: i, poolLockMs: 200 },
        );
      // Another connection holds the pool's lock until both asks have answered (a stuck reservation elsewhere in the
      // fleet): each gives up after its own 200 ms, whatever the machine's load, and none can take the lock first.
      let taken!: () => void;
      const locked = new Promise<void>((r) => (taken = r));
      let release!: () => void;
      const released = new Promise<void>((r) => (release = r));
      const holder = db.tx(async (tx) => {
        await tx.query("SELECT pg_advisory_xact_lock($1, 0)", [LOCK_POOL]);
        taken();
        await released;
      });
      await locked;
      const [held, own] = await Promise.all([ask(0, false), ask(1, true)]).finally(release);
      await holder;
      expect(held).toEqual({ hold: "AI_POOL_UNAVAILABLE", message: expect.any(String), poolHold: null });
      expect(own).toMatchObject({ source: "own", poolHold: "AI_POOL_UNAVAILABLE" });
      expect(await ask(2, false)).toMatchObject({ source: "service", poolHold: null });
    },
  );

  it("lets new owners' trials together take only their part of the pool, however many wallets ask", async () => {
    const now = Date.now() + 86_400_000;
    const owners = Array.from(
      { length: 20 },
      (_, i) =>
        `0x00000000000000000000000000000000000000c${(i % 16).toString(16)}`.replace(
          /c(.)$/,
          (_, h) => `${i < 16 ? "c" : "d"}${h}`,
        ) as Address,
    );
    const all = await Promise.all(
      owners.map((w, i) =>
        reserve(
          db,
          ai,
          { ...agent(200 + i), wallet: w, live: false, funding: "service", fallbackOwn: false },
          { ownerSinceMs: now - 1_000, nowMs: now, worstUsd: 0.004, tickSeq: i },
        ),
      ),
    );
    // 40 % of $0.05 holds 5 worst cases of $0.004 for all trials together.
    expect(all.filter((r) => "rowId" in r).length).toBe(5);
    expect(all.filter((r) => "hold" in r && r.hold === "AI_POOL_SPENT").length).toBe(15);
  });
});
