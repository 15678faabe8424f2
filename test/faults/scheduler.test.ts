import { spawn, type ChildProcess } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { createScheduler } from "../../api/hosted/scheduler.js";
import { openPostgres, type Db } from "../../api/ports/store/db.js";
import { migrate } from "../../api/ports/store/migrations.js";
import { createDatabase, dropDatabase } from "../helpers/databases.js";
import { recordTick, virtualClock } from "../helpers/schedulerChild.js";

/**
 * The hosted scheduler at scale: 1,000 agents ticking every 60 s on one PostgreSQL, shared by an
 * instance in its own process and one here, on a clock running 6x the wall. The other process is
 * killed with SIGKILL while it holds leases in the middle of a slot; its leases lapse and this
 * instance runs what it left. Every due slot of every agent is ticked exactly once.
 */
const AGENTS = 1_000;
const RATE = 6;
const INTERVAL_S = 60;
const LEASE_MS = 12_000; // virtual: 2 s of wall time

let child: ChildProcess | null = null;
let db: Db | null = null;
const name = `pit_sched_${Math.random().toString(36).slice(2, 10)}`;
afterAll(async () => {
  child?.kill("SIGKILL");
  await db?.close();
  await dropDatabase(name).catch(() => {});
});

async function seed(db: Db, start: number) {
  await db.query(
    `INSERT INTO app.hosted_agents (id, wallet, key_id, name, brain, params, interval_s, pairs, limits, mode, status,
           terms, created_at, updated_at)
     SELECT 'ha_s' || i, '0x' || lpad(to_hex(i), 40, '0'), 1, 'scale ' || i, 'rule', '{}', $1, '["ETH/USDG"]', '{}',
       'paper', 'active', '{}', 0, 0 FROM generate_series(1, $2) AS i`,
    [INTERVAL_S, AGENTS],
  );
  await db.query(
    "INSERT INTO app.hosted_schedule (agent_id, next_tick_ms) SELECT 'ha_s' || i, $1 FROM generate_series(1, $2) AS i",
    [start, AGENTS],
  );
}

describe("1,000 agents at 60 s on two instances, one killed with SIGKILL mid-slot", () => {
  it("ticks every due slot of every agent exactly once", async () => {
    const url = await createDatabase(name);
    db = await openPostgres(url, 8);
    await migrate(db);
    const start = Date.now();
    const clock = virtualClock(start, RATE);
    await seed(db, start);

    child = spawn(process.execPath, ["--import", "tsx", "test/helpers/schedulerChild.ts"], {
      env: {
        ...process.env,
        STORE_URL: url,
        CLOCK_START: String(start),
        RATE: String(RATE),
        INSTANCE: "child",
        LEASE_MS: String(LEASE_MS),
        TICK_MS: "20",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout!.on("data", (b) => (out += b));
    child.stderr!.on("data", (b) => (out += b));
    const here = createScheduler({
      db,
      clock,
      instance: "here",
      leaseMs: LEASE_MS,
      concurrency: 16,
      intervalMs: 100,
      runTick: (c, instance) => recordTick(db!, c, instance, 20, clock),
    });
    here.start();

    // Into the second slot (virtual 60 s = 10 s of wall), until the child holds leases it has not finished.
    const slot2 = start + INTERVAL_S * 1000;
    const deadline = Date.now() + 30_000;
    for (;;) {
      const [r] = await db.query<{ held: string; done: string }>(
        "SELECT (SELECT count(*) FROM app.hosted_schedule WHERE lease_owner = 'child' AND next_tick_ms = $1)::text " +
          "AS held, (SELECT count(*) FROM app.hosted_ticks WHERE instance = 'child' AND due_ms = $1)::text AS done",
        [slot2],
      );
      if (Number(r!.held) > 20 && Number(r!.done) > 0) break;
      if (Date.now() > deadline) throw new Error(`the child never held a lease in the second slot:\n${out}`);
      await new Promise((res) => setTimeout(res, 5));
    }
    child.kill("SIGKILL");
    const heldAtKill = Number(
      (
        await db.query<{ n: string }>("SELECT count(*)::text AS n FROM app.hosted_schedule WHERE lease_owner = 'child'")
      )[0]!.n,
    );
    expect(heldAtKill).toBeGreaterThan(0);

    // Until every agent has ticked in the third slot (virtual 120 s), then stop: not at a fixed moment, which a loaded
    // machine could reach before that slot's pass ends or after the fourth (180 s) begins.
    const slot3 = start + 2 * INTERVAL_S * 1000;
    const slot3By = Date.now() + 60_000;
    for (;;) {
      const [r] = await db.query<{ n: string }>("SELECT count(*)::text AS n FROM app.hosted_ticks WHERE due_ms = $1", [
        slot3,
      ]);
      if (Number(r!.n) >= AGENTS) break;
      if (Date.now() > slot3By) throw new Error(`the third slot never completed (${r!.n} of ${AGENTS}):\n${out}`);
      await new Promise((res) => setTimeout(res, 50));
    }
    await here.stop();

    const slots = [0, 1, 2].map((k) => start + k * INTERVAL_S * 1000);
    const rows = await db.query<{ due_ms: string; n: string; agents: string }>(
      "SELECT due_ms::text, count(*)::text AS n, count(DISTINCT agent_id)::text AS agents FROM app.hosted_ticks " +
        "GROUP BY due_ms ORDER BY due_ms",
    );
    expect(rows.map((r) => Number(r.due_ms))).toEqual(slots);
    for (const r of rows) expect([Number(r.n), Number(r.agents)]).toEqual([AGENTS, AGENTS]);
    const byInstance = await db.query<{ instance: string; n: string }>(
      "SELECT instance, count(*)::text AS n FROM app.hosted_ticks GROUP BY instance ORDER BY instance",
    );
    // Both did work: the child until it died, this instance the rest (the child's lapsed leases included).
    expect(byInstance.map((r) => r.instance)).toEqual(["child", "here"]);
    const left = await db.query("SELECT agent_id FROM app.hosted_schedule WHERE next_tick_ms <> $1", [
      start + 3 * INTERVAL_S * 1000,
    ]);
    expect(left).toEqual([]);
  }, 120_000);
});
