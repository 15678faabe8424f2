import { randomUUID } from "node:crypto";
import PQueue from "p-queue";
import type { Db } from "../ports/store/db.js";
import type { Common } from "../ports/common.js";
import { hostedTickLag, hostedTicks } from "../../lib/metrics.js";

export type Claimed = { agentId: string; seq: number; dueMs: number; intervalS: number };

/**
 * When the tick after one due at `dueMs` is due: the next slot, or the latest slot already passed (a
 * late agent skips what it missed rather than replay it).
 */
export function nextDue(dueMs: number, intervalS: number, nowMs: number): number {
  const step = intervalS * 1000;
  const k = Math.max(1, Math.floor((nowMs - dueMs) / step));
  return dueMs + k * step;
}

type SchedulerDeps = Pick<Common, "clock" | "logger"> & {
  db: Db;
  runTick: (c: Claimed, instance: string) => Promise<boolean>;
  leaseMs?: number;
  batch?: number;
  concurrency?: number;
  tickTimeoutMs?: number;
  intervalMs?: number;
  instance?: string;
};
/** One scheduler instance: its deps, its name (the lease owner), its lease and tick timeout. */
type Instance = { d: SchedulerDeps; instance: string; leaseMs: number; tickTimeoutMs: number };

/**
 * The hosted agents' scheduler: any number of instances share app.hosted_schedule. Each claims
 * due rows of active agents with FOR UPDATE SKIP LOCKED and a lease (tick_seq + 1 is the
 * fencing token), runs them on a bounded queue with a timeout each, and moves the row to its next
 * slot only while it still holds the lease. A crashed instance's leases lapse after `leaseMs` and
 * another instance claims the same agents with the next seq; a tick that ran twice commits once
 * (runTick's (agent, seq) row). The embedded default runs this on PGlite in one process.
 */
export function createScheduler(d: SchedulerDeps) {
  const me: Instance = {
    d,
    instance: d.instance ?? randomUUID(),
    leaseMs: d.leaseMs ?? 30_000,
    tickTimeoutMs: d.tickTimeoutMs ?? 20_000,
  };
  const batch = d.batch ?? 200;
  const queue = new PQueue({ concurrency: d.concurrency ?? 16 });
  let timer: NodeJS.Timeout | null = null;
  let pass: Promise<number> | null = null;

  /** Claims and runs every due tick (batch by batch) until none is due; answers how many were claimed. */
  async function runDue(): Promise<number> {
    let total = 0;
    for (;;) {
      const room = Math.max(1, batch - queue.size - queue.pending);
      const claimed = await claim(me, room);
      total += claimed.length;
      for (const c of claimed) void queue.add(() => runOne(me, c));
      if (claimed.length < room) break;
      await queue.onSizeLessThan(Math.max(1, Math.floor(batch / 2)));
    }
    await queue.onIdle();
    return total;
  }

  return {
    instance: me.instance,
    runDue,
    /** Resets an agent's next tick (resume, interval change): due at `atMs`. */
    async dueAt(agentId: string, atMs: number) {
      await d.db.query("UPDATE app.hosted_schedule SET next_tick_ms = $2 WHERE agent_id = $1", [agentId, atMs]);
    },
    start() {
      if (timer) return;
      timer = setInterval(
        () =>
          void (pass ??= runDue()
            .catch((err) => (d.logger?.error({ err }, "hosted scheduler pass failed"), 0))
            .finally(() => (pass = null))),
        d.intervalMs ?? 1_000,
      );
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = null;
      await pass;
      await queue.onIdle();
    },
  };
}

/** Up to `n` due rows of active agents, leased to this instance (their seq moved on: the fencing token). */
async function claim({ d, instance, leaseMs }: Instance, n: number): Promise<Claimed[]> {
  const now = d.clock();
  const rows = await d.db.query<{ agent_id: string; tick_seq: string; next_tick_ms: string; interval_s: number }>(
    `UPDATE app.hosted_schedule s SET lease_owner = $1, lease_until_ms = $2::bigint + $3::bigint,
       tick_seq = s.tick_seq + 1
     FROM app.hosted_agents a
     WHERE a.id = s.agent_id AND s.agent_id IN (
       SELECT q.agent_id FROM app.hosted_schedule q JOIN app.hosted_agents g ON g.id = q.agent_id
       WHERE q.next_tick_ms <= $2 AND (q.lease_until_ms IS NULL OR q.lease_until_ms < $2)
         AND g.status = 'active' AND g.deleted_at IS NULL
       ORDER BY q.next_tick_ms LIMIT $4 FOR UPDATE OF q SKIP LOCKED)
     RETURNING s.agent_id, s.tick_seq, s.next_tick_ms, a.interval_s`,
    [instance, now, leaseMs, n],
  );
  return rows.map((r) => ({
    agentId: r.agent_id,
    seq: Number(r.tick_seq),
    dueMs: Number(r.next_tick_ms),
    intervalS: Number(r.interval_s),
  }));
}

/** The row moved to its next slot and its lease let go, only while this instance still holds it. */
async function finish({ d, instance }: Instance, c: Claimed) {
  await d.db.query(
    `UPDATE app.hosted_schedule SET next_tick_ms = $4, lease_owner = NULL, lease_until_ms = NULL
     WHERE agent_id = $1 AND tick_seq = $2 AND lease_owner = $3`,
    [c.agentId, c.seq, instance, nextDue(c.dueMs, c.intervalS, d.clock())],
  );
}

/**
 * One claimed tick, given up after the tick timeout; the row moves on either way. Its lateness (claimed
 * after its slot) and outcome go to pit_hosted_tick_lag_seconds and pit_hosted_ticks_total.
 */
async function runOne(me: Instance, c: Claimed) {
  const { d, instance, tickTimeoutMs } = me;
  hostedTickLag.observe(Math.max(0, d.clock() - c.dueMs) / 1000);
  let timer: NodeJS.Timeout | undefined;
  let timedOut = false;
  try {
    const late = new Promise<never>(
      (_, reject) =>
        (timer = setTimeout(
          () => ((timedOut = true), reject(new Error(`tick took over ${tickTimeoutMs} ms`))),
          tickTimeoutMs,
        )),
    );
    const run = d.runTick(c, instance);
    run.catch(() => {});
    hostedTicks.inc({ outcome: (await Promise.race([run, late])) ? "committed" : "skipped" });
  } catch (err) {
    hostedTicks.inc({ outcome: timedOut ? "timed_out" : "failed" });
    d.logger?.warn({ err, agent: c.agentId, tick: c.seq }, "hosted tick failed");
  } finally {
    clearTimeout(timer);
    // A failed or slow tick still moves on: the next slot is a new tick, never this one again.
    await finish(me, c).catch((err) => d.logger?.warn({ err, agent: c.agentId }, "hosted schedule not advanced"));
  }
}

export type Scheduler = ReturnType<typeof createScheduler>;
