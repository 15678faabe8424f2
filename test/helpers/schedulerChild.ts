/**
 * One scheduler instance in its own process, for the kill test: the real createScheduler over
 * PostgreSQL, with a tick that only commits its slot (app.hosted_ticks) after TICK_MS. The clock
 * runs RATE times faster than the wall from CLOCK_START, the same function as the test's.
 */
import { createScheduler } from "../../api/hosted/scheduler.js";
import { openPostgres, type Db } from "../../api/ports/store/db.js";
import type { Claimed } from "../../api/hosted/scheduler.js";

export const virtualClock = (start: number, rate: number) => () => start + (Date.now() - start) * rate;

/** The scale test's tick: commits its due slot once (what runTick's transaction does, without a brain). */
export async function recordTick(
  db: Db,
  c: Claimed,
  instance: string,
  tickMs: number,
  clock: () => number,
): Promise<boolean> {
  if (tickMs) await new Promise((r) => setTimeout(r, tickMs));
  const rows = await db.query(
    "INSERT INTO app.hosted_ticks (agent_id, tick_seq, due_ms, ran_at_ms, instance) VALUES ($1, $2, $3, $4, $5) ON " +
      "CONFLICT DO NOTHING RETURNING 1",
    [c.agentId, c.seq, c.dueMs, clock(), instance],
  );
  return rows.length === 1;
}

if (process.argv[1]?.endsWith("schedulerChild.ts")) {
  const env = process.env;
  const clock = virtualClock(Number(env.CLOCK_START), Number(env.RATE));
  const db = await openPostgres(env.STORE_URL!, 8);
  const tickMs = Number(env.TICK_MS ?? 0);
  const scheduler = createScheduler({
    db,
    clock,
    instance: env.INSTANCE,
    leaseMs: Number(env.LEASE_MS),
    concurrency: 16,
    intervalMs: 100,
    runTick: (c, instance) => recordTick(db, c, instance, tickMs, clock),
  });
  scheduler.start();
  // The scheduler's timer does not hold a process open (it is unref'd for the API's sake): this one lives until killed.
  setInterval(() => {}, 1 << 30);
  console.log("ready");
}
