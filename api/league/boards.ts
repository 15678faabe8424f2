import { answerJson } from "../../lib/answerJson.js";
import { PART_BYTES, packJson, unpackJson } from "../../lib/packedJson.js";
import type { Db } from "../ports/store/db.js";
import type { Lease } from "../ports/store/lease.js";
import type { Common } from "../ports/common.js";

/**
 * A key whose computation failed is not computed again by a reader for this long (the worker's next pass
 * retries it).
 */
export const FAILED_RETRY_MS = 5_000;

type Answer<T> = { value: T; at: number };

/** Answers shared by the instances of one store: the lease holder writes them, the others read them. */
export type SharedAnswers<T> = {
  /** Takes or renews the standings lease; true while this instance holds it. */
  hold(): Promise<boolean>;
  release(): Promise<void>;
  /** The stored answers of `keys` computed after `since(key)` (ms; 0 when this instance has none). */
  load(keys: string[], since: (key: string) => number): Promise<Map<string, Answer<T>>>;
  /** Writes a key's answer, only while this instance holds the lease (false otherwise). */
  save(key: string, answer: Answer<T>): Promise<boolean>;
  /** Drops the stored answers of keys no longer worked (decided, or past the latest seasons). */
  prune(live: string[]): Promise<void>;
};

/**
 * The standings answers in app.league_board_packed (migration 25; app.league_board_answers before), as their JSON
 * deflated (lib/packedJson: a live season's 4 MB answer written on every pass took 110-320 ms of a pass as text, its
 * tenth deflated 60-100 ms with its JSON; the rows' text is the one readers are served, lib/answerJson), with the
 * block it was read at when it has one. A write is fenced by the
 * lease: an instance that lost it (paused past its ttl) writes nothing over its successor's answers.
 */
export function storedAnswers<T>(
  db: Db,
  lease: Lease,
  blockOf: (value: T) => number | null = () => null,
): SharedAnswers<T> {
  return {
    hold: () => lease.hold(),
    release: () => lease.release(),
    async load(keys, since) {
      if (!keys.length) return new Map();
      const rows = await db.query<{ key: string; answer: Buffer; computed_at: string }>(
        `SELECT a.key, a.answer, a.computed_at::text AS computed_at
         FROM app.league_board_packed a JOIN unnest($1::text[], $2::bigint[]) AS k(key, since) ON k.key = a.key
         WHERE a.computed_at > k.since`,
        [keys, keys.map((k) => Math.floor(since(k)))],
      );
      const read = rows.map(
        async (r) => [r.key, { value: await unpackJson<T>(r.answer), at: Number(r.computed_at) }] as const,
      );
      return new Map(await Promise.all(read));
    },
    async save(key, a) {
      const rows = await db.query(
        `INSERT INTO app.league_board_packed (key, answer, computed_at, block)
         SELECT $1::text, $2::bytea, $3::bigint, $4::bigint
         WHERE EXISTS (SELECT 1 FROM app.leases WHERE name = $5 AND holder = $6)
         ON CONFLICT (key) DO UPDATE
         SET answer = EXCLUDED.answer, computed_at = EXCLUDED.computed_at, block = EXCLUDED.block
         RETURNING key`,
        [
          key,
          await packJson(a.value, PART_BYTES, answerJson),
          Math.floor(a.at),
          blockOf(a.value),
          lease.name,
          lease.holder,
        ],
      );
      return rows.length === 1;
    },
    async prune(live) {
      await db.query("DELETE FROM app.league_board_packed WHERE NOT (key = ANY($1::text[]))", [live]);
    },
  };
}

export type BoardsDeps<T> = Pick<Common, "clock" | "logger"> & {
  keys: () => Promise<string[]>;
  compute: (key: string) => Promise<T>;
  intervalMs?: number;
  onCompute?: (key: string) => Promise<void>;
  shared?: SharedAnswers<T>;
};

/** The worker's state: answers held here, recent failures, computations and store reads under way, its timer. */
type Worker<T> = {
  d: BoardsDeps<T>;
  answers: Map<string, Answer<T>>;
  failed: Map<string, { err: unknown; at: number }>;
  inFlight: Map<string, Promise<T>>;
  loading: Map<string, Promise<Answer<T> | null>>;
  started: Map<string, number>;
  timer: NodeJS.Timeout | null;
  running: Promise<number> | null;
};

/** The key's computation running now, or a new one: never two at once. */
function computeOnce<T>(w: Worker<T>, key: string): Promise<T> {
  const now = w.inFlight.get(key);
  if (now) return now;
  const run = (async () => {
    w.started.set(key, (w.started.get(key) ?? 0) + 1);
    await w.d.onCompute?.(key);
    try {
      const value = await w.d.compute(key);
      w.answers.set(key, { value, at: w.d.clock() });
      w.failed.delete(key);
      return value;
    } catch (err) {
      w.failed.set(key, { err, at: w.d.clock() });
      throw err;
    }
  })().finally(() => w.inFlight.delete(key));
  w.inFlight.set(key, run);
  return run;
}

/** A stored answer replaces the one held here only when computed later. */
function keep<T>(w: Worker<T>, key: string, a: Answer<T>) {
  const held = w.answers.get(key);
  if (!held || held.at < a.at) w.answers.set(key, a);
}

/**
 * The key's stored answer, read once for all the readers waiting on it (null: none stored, or the
 * store did not answer).
 */
function loadOnce<T>(w: Worker<T>, shared: SharedAnswers<T>, key: string): Promise<Answer<T> | null> {
  const now = w.loading.get(key);
  if (now) return now;
  const run = shared
    .load([key], () => 0)
    .then((m) => {
      const a = m.get(key) ?? null;
      if (a) keep(w, key, a);
      return a;
    })
    .catch((err) => (w.d.logger?.warn({ err, key }, "league standings not read from the store"), null))
    .finally(() => w.loading.delete(key));
  w.loading.set(key, run);
  return run;
}

/** The answers the holder wrote since the ones held here. */
async function readStored<T>(w: Worker<T>, shared: SharedAnswers<T>, keys: string[]) {
  for (const [k, a] of await shared.load(keys, (k) => w.answers.get(k)?.at ?? 0)) keep(w, k, a);
}

/** Computes the keys one after another (writing each answer when `shared`); a key that fails keeps its last answer. */
async function computeAll<T>(w: Worker<T>, keys: string[], shared?: SharedAnswers<T>): Promise<number> {
  let n = 0;
  for (const [i, k] of keys.entries()) {
    if (shared && i > 0 && !(await shared.hold())) {
      // The lease went to another instance mid-pass: the rest is its to compute.
      await readStored(w, shared, keys.slice(i));
      break;
    }
    try {
      const value = await computeOnce(w, k);
      n++;
      if (shared)
        await shared
          .save(k, { value, at: w.answers.get(k)?.at ?? w.d.clock() })
          .catch((err) => w.d.logger?.warn({ err, key: k }, "league standings not written to the store"));
    } catch (err) {
      w.d.logger?.warn({ err, key: k }, "league standings not computed; the last answer stays served");
    }
  }
  return n;
}

/** One pass over the keys; answers how many it computed (none on an instance that does not hold the lease). */
async function once<T>(w: Worker<T>): Promise<number> {
  const keys = await w.d.keys();
  const live = new Set(keys);
  for (const k of [...w.answers.keys()]) if (!live.has(k)) w.answers.delete(k);
  const shared = w.d.shared;
  if (!shared) return computeAll(w, keys);
  if (!(await shared.hold())) {
    await readStored(w, shared, keys);
    return 0;
  }
  await shared.prune(keys);
  return computeAll(w, keys, shared);
}

/** The key's last answer (here, else the store's); with none anywhere, that first computation (shared). */
async function answerOf<T>(w: Worker<T>, key: string): Promise<T> {
  const a = w.answers.get(key);
  if (a) return a.value;
  const f = w.failed.get(key);
  if (f && w.d.clock() - f.at < FAILED_RETRY_MS && !w.inFlight.has(key)) throw f.err;
  const run = w.inFlight.get(key);
  if (run) return run;
  if (w.d.shared) {
    const stored = await loadOnce(w, w.d.shared, key);
    if (stored) return stored.value;
  }
  return w.answers.get(key)?.value ?? computeOnce(w, key);
}

/** One pass now; a pass already running is shared. */
const runOnce = <T>(w: Worker<T>) => (w.running ??= once(w).finally(() => (w.running = null)));

/** Passes every `intervalMs` after the last one ends (none without an interval). */
function start<T>(w: Worker<T>) {
  const interval = w.d.intervalMs;
  if (w.timer || !interval) return;
  const tick = () => {
    void runOnce(w)
      .catch((err) => w.d.logger?.warn({ err }, "league standings pass failed"))
      .finally(() => {
        if (w.timer) w.timer = setTimeout(tick, interval);
      });
  };
  w.timer = setTimeout(tick, 0);
}

/** Ends the timer and the pass running, and gives up the lease (another instance need not wait out its ttl). */
async function stop<T>(w: Worker<T>) {
  if (w.timer) clearTimeout(w.timer);
  w.timer = null;
  await w.running?.catch(() => undefined);
  await w.d.shared?.release().catch((err) => w.d.logger?.warn({ err }, "league standings lease not released"));
}

/**
 * The league's standings worker (issue 26): the one place where a board of a season not yet
 * decided is computed (it takes seconds for a large field). Every `intervalMs` after its last pass
 * ends, a pass works each key of `keys()` (a bounded set: the caller's choice) one after another,
 * and drops the answers of keys that left the set.
 *
 * With `shared` (the service: one store, any number of instances), a pass first takes or renews
 * the store's standings lease. The holder computes each key and writes its answer (renewing the
 * lease before each key, so the ttl must outlast one key's computation); every other instance
 * reads the answers written since its own and serves them, computing nothing. A holder that
 * stops releases the lease; one that dies keeps it until its ttl lapses, and the next instance to
 * pass takes over. Without `shared`, every pass computes (one instance alone).
 *
 * Invariant: at most one computation of a key runs at a time in a process, and a reader never
 * starts one for a key that has an answer, here or in the store: it gets the last answer, stale
 * while the holder computes the next. The first readers of a key without an answer anywhere (a
 * cold start before the holder's first write) wait for one local computation, shared by all of
 * them and by the worker; a key whose computation just failed refuses readers for
 * FAILED_RETRY_MS (by the injected `clock`) rather than let each start another. `onCompute` sees
 * (and may hold) each computation as it starts: tests count and pause them with it.
 */
export function createBoardsWorker<T>(d: BoardsDeps<T>) {
  const w: Worker<T> = {
    d,
    answers: new Map(),
    failed: new Map(),
    inFlight: new Map(),
    loading: new Map(),
    started: new Map(),
    timer: null,
    running: null,
  };
  return {
    /** The key's last answer (here, else the store's); with none anywhere, that first computation (shared). */
    get: (key: string): Promise<T> => answerOf(w, key),
    /** How many computations of `key` started (tests and metrics). */
    computations: (key: string) => w.started.get(key) ?? 0,
    /** One pass now (tests drive it; the timer runs it in the service); a pass already running is shared. */
    runOnce: () => runOnce(w),
    start: () => start(w),
    /** Ends the timer and the pass running, and gives up the lease (another instance need not wait out its ttl). */
    stop: () => stop(w),
  };
}

export type BoardsWorker<T> = ReturnType<typeof createBoardsWorker<T>>;
