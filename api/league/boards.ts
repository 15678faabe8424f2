import type { Logger } from "pino";

/** A key whose computation failed is not computed again by a reader for this long (the worker's next pass retries it). */
export const FAILED_RETRY_MS = 5_000;

/**
 * The league's standings worker (issue 26): the one place where a board of a season not yet
 * decided is computed (it takes seconds for a large field). One per instance, each holding its
 * answers in memory: an answer served from another instance's memory would need the store (a
 * lease for this worker fits once the answers live there). Every `intervalMs` after its last pass
 * ends, a pass computes each key of `keys()` (a bounded set: the caller's choice) one after
 * another, and drops the answers of keys that left the set.
 *
 * Invariant: at most one computation of a key runs at a time, and a reader never starts one for a
 * key that has an answer: it gets the last answer, stale while the worker computes the next. The
 * first readers of a key without an answer wait for its first computation, one shared by all of
 * them and by the worker; a key whose computation just failed refuses readers for FAILED_RETRY_MS
 * (by the injected `clock`) rather than let each start another. `onCompute` sees (and may hold)
 * each computation as it starts: tests count and pause them with it.
 */
export function createBoardsWorker<T>(d: {
  clock: () => number;
  keys: () => Promise<string[]>;
  compute: (key: string) => Promise<T>;
  intervalMs?: number;
  logger?: Logger;
  onCompute?: (key: string) => Promise<void>;
}) {
  const answers = new Map<string, { value: T; at: number }>();
  const failed = new Map<string, { err: unknown; at: number }>();
  const inFlight = new Map<string, Promise<T>>();
  const started = new Map<string, number>();
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<number> | null = null;

  /** The key's computation running now, or a new one: never two at once. */
  function computeOnce(key: string): Promise<T> {
    const now = inFlight.get(key);
    if (now) return now;
    const run = (async () => {
      started.set(key, (started.get(key) ?? 0) + 1);
      await d.onCompute?.(key);
      try {
        const value = await d.compute(key);
        answers.set(key, { value, at: d.clock() });
        failed.delete(key);
        return value;
      } catch (err) {
        failed.set(key, { err, at: d.clock() });
        throw err;
      }
    })().finally(() => inFlight.delete(key));
    inFlight.set(key, run);
    return run;
  }

  /** One pass over the keys; answers how many it computed. A key that fails keeps its last answer. */
  async function once(): Promise<number> {
    const keys = await d.keys();
    const live = new Set(keys);
    for (const k of [...answers.keys()]) if (!live.has(k)) answers.delete(k);
    let n = 0;
    for (const k of keys) {
      try {
        await computeOnce(k);
        n++;
      } catch (err) {
        d.logger?.warn({ err, key: k }, "league standings not computed; the last answer stays served");
      }
    }
    return n;
  }

  return {
    /** The key's last answer; before its first, that first computation (shared). */
    async get(key: string): Promise<T> {
      const a = answers.get(key);
      if (a) return a.value;
      const f = failed.get(key);
      if (f && d.clock() - f.at < FAILED_RETRY_MS && !inFlight.has(key)) throw f.err;
      return computeOnce(key);
    },
    /** How many computations of `key` started (tests and metrics). */
    computations: (key: string) => started.get(key) ?? 0,
    /** One pass now (tests drive it; the timer runs it in the service); a pass already running is shared. */
    runOnce: () => (running ??= once().finally(() => (running = null))),
    start() {
      if (timer || !d.intervalMs) return;
      const tick = () => {
        void this.runOnce()
          .catch((err) => d.logger?.warn({ err }, "league standings pass failed"))
          .finally(() => {
            if (timer) timer = setTimeout(tick, d.intervalMs);
          });
      };
      timer = setTimeout(tick, 0);
    },
    async stop() {
      if (timer) clearTimeout(timer);
      timer = null;
      await running?.catch(() => undefined);
    },
  };
}

export type BoardsWorker<T> = ReturnType<typeof createBoardsWorker<T>>;
