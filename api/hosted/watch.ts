import type { Address } from "viem";
import type { HostedContext, HostedSession } from "./deps.js";
import { executorGas } from "./executor.js";
import type { LogRow, StoredAgent } from "./store.js";

/** An attached session ending within this long is shown in `watch` (it ends the agent's live trading). */
export const SESSION_SOON_S = 3_600;
/** How many of the newest log rows `watch` reads to find how long a hold has lasted. */
export const HOLD_ROWS = 200;

/** A hold the agent's newest tick met: its code, message, since when (unix s) and in which tick. */
export type HoldRun = { code: string; message: string | null; since: number; tick: number };

/**
 * The hold of the agent's newest tick, and since when it has held: the first hold logged in that
 * tick, back through the unbroken run of ticks that logged a hold with the same code. `rows` are
 * log rows newest first (GET logs' order); null when the newest tick logged no hold. A run longer
 * than the rows read starts at the oldest row read.
 */
export function currentHold(
  rows: (Pick<LogRow, "tick" | "kind" | "code" | "at"> & { message?: unknown })[],
): HoldRun | null {
  const byTick = new Map<number, typeof rows>();
  for (const r of rows) if (r.tick !== null) byTick.set(r.tick, [...(byTick.get(r.tick) ?? []), r]);
  const ticks = [...byTick.keys()];
  const newest = ticks[0];
  if (newest === undefined) return null;
  const first = byTick
    .get(newest)!
    .filter((r) => r.kind === "hold" && r.code !== null)
    .at(-1);
  if (!first) return null;
  let since = first.at;
  for (const t of ticks) {
    const held = byTick.get(t)!.filter((r) => r.kind === "hold" && r.code === first.code);
    if (!held.length) break;
    since = Math.min(since, ...held.map((r) => r.at));
  }
  return {
    code: first.code!,
    message: typeof first.message === "string" ? first.message : null,
    since: Math.floor(since / 1000),
    tick: newest,
  };
}

/** The executor's gas against what about twenty redeems cost (executor.ts executorGas). */
export type GasState = {
  executor: string;
  balance_wei: string;
  min_balance_wei: string;
  enough: boolean;
  top_up: { wei: string; usd: number | null; to: string } | null;
};

/**
 * SPEC "Hosted agent" `watch`: what the agent is waiting on. Its next tick (unix s; null when it
 * does not tick), the hold its newest tick met and since when, its attached session when it ends
 * within SESSION_SOON_S, its executor when the gas is under what about twenty redeems cost (with
 * the top-up). null when there is nothing to show.
 */
export function watchOf(w: {
  nowMs: number;
  nextTickMs: number | null;
  hold: HoldRun | null;
  session: { id: string; expires: number } | null;
  gas: GasState | null;
}) {
  const nowS = Math.floor(w.nowMs / 1000);
  const s = w.session;
  const out = {
    next_tick_at: w.nextTickMs === null ? null : Math.ceil(w.nextTickMs / 1000),
    hold: w.hold,
    session_ending:
      s && s.expires - nowS <= SESSION_SOON_S
        ? { session_id: s.id, expires: s.expires, seconds_left: Math.max(0, s.expires - nowS) }
        : null,
    executor_gas: w.gas && !w.gas.enough ? w.gas : null,
  };
  return Object.values(out).every((v) => v === null) ? null : out;
}

export type Watch = ReturnType<typeof watchOf>;

/**
 * The agent's watch, read: a running agent's next slot and the hold of its newest tick (its newest
 * HOLD_ROWS log rows), a live agent's active session and its executor's gas (not shown when the
 * chain cannot be read: the view still answers).
 */
export async function watchFor(
  d: HostedContext,
  a: StoredAgent,
  session: Pick<HostedSession, "id" | "status" | "expires"> | null,
  executor: Address | null,
) {
  const running = a.status === "active" && a.deletedAt === null;
  const [next] = running
    ? await d.store.db.query<{ next_tick_ms: string }>(
        "SELECT next_tick_ms FROM app.hosted_schedule WHERE agent_id = $1",
        [a.id],
      )
    : [];
  const rows = running ? await d.store.logs(a.id, { limit: HOLD_ROWS }) : [];
  const stopped = a.status === "stopped" || a.deletedAt !== null;
  const gas =
    executor && !stopped
      ? await executorGas(d, executor).then(
          (g) => g.view,
          () => null,
        )
      : null;
  return watchOf({
    nowMs: d.clock(),
    nextTickMs: next ? Number(next.next_tick_ms) : null,
    hold: currentHold(rows),
    session: !stopped && session?.status === "active" ? session : null,
    gas,
  });
}
