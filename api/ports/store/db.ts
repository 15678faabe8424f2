import { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import { Refusal } from "../../errors/index.js";

/**
 * The app store's connection: the same SQL on PGlite (embedded default, its own directory next to
 * Ponder's) and PostgreSQL (DATABASE_URL; shared by any number of API instances).
 *
 * Fails closed: a store that cannot answer (connection lost or terminated, out of connections or
 * file descriptors) throws 503 ENGINE_UNAVAILABLE, never an empty result; SQL errors of the
 * statement itself (data, constraint, syntax, raised exceptions) pass through unchanged, so a
 * caller can still branch on a unique violation.
 */
export interface Db {
  readonly kind: "pglite" | "postgres";
  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
  /** Runs a script of several statements (no parameters). */
  exec(text: string): Promise<void>;
  /** Runs fn in one transaction; the Db passed to fn is bound to it. */
  tx<T>(fn: (db: Db) => Promise<T>): Promise<T>;
  /**
   * Runs fn while holding the store-wide lock `name`, or answers null at once when another holder
   * has it. PostgreSQL: a session advisory lock on a connection kept for the call, so a holder
   * that dies frees it with its connection. PGlite: one process, so a lock in this process.
   */
  exclusive<T>(name: string, fn: () => Promise<T>): Promise<{ value: T } | null>;
  close(): Promise<void>;
}

/** SQLSTATE classes that are about the statement, not the store: 22 data, 23 constraint, 42 syntax/access, P0 raise. */
const STATEMENT_ERROR = /^(22|23|42|P0)/;

/** The store's own failure as 503 ENGINE_UNAVAILABLE; the statement's errors and our refusals as they are. */
export function storeFailure(err: unknown): unknown {
  if (err instanceof Refusal || err instanceof FromCaller) return err;
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === "string" && STATEMENT_ERROR.test(code)) return err;
  return new Refusal(
    "ENGINE_UNAVAILABLE",
    "the service's store did not answer; try again shortly",
    {},
    { cause: err, retryAfterS: 2 },
  );
}

/**
 * An error the caller's own code threw inside a transaction: rolled back and rethrown as it was, not taken for the
 * store failing.
 */
class FromCaller {
  constructor(readonly err: unknown) {}
}

/**
 * A transaction whose begin, commit or connection failing is ENGINE_UNAVAILABLE, and whose body's own errors come back
 * unchanged.
 */
async function transaction<T>(
  run: (body: (db: Db) => Promise<T>) => Promise<T>,
  fn: (db: Db) => Promise<T>,
): Promise<T> {
  try {
    return await failClosed(() =>
      run(async (db) => {
        try {
          return await fn(db);
        } catch (err) {
          throw new FromCaller(err);
        }
      }),
    );
  } catch (err) {
    throw err instanceof FromCaller ? err.err : err;
  }
}

const failClosed = async <T>(run: () => Promise<T>): Promise<T> => {
  try {
    return await run();
  } catch (err) {
    throw storeFailure(err);
  }
};

/** Namespace of the service's advisory locks (the two-key form: this, hashtext(name)). */
const LOCK_SPACE = 4663;

/** An in-process lock set: the exclusive() of a store only one process opens. */
function localLocks() {
  const held = new Set<string>();
  return async <T>(name: string, fn: () => Promise<T>): Promise<{ value: T } | null> => {
    if (held.has(name)) return null;
    held.add(name);
    try {
      return { value: await fn() };
    } finally {
      held.delete(name);
    }
  };
}

export async function openPglite(dataDir?: string, from?: Blob): Promise<Db> {
  const lite = new PGlite({ dataDir, loadDataDir: from });
  await lite.waitReady;
  return pgliteDb(lite);
}

/** The Db over an open PGlite (its transactions bound to it; one process, so its locks are local). */
export function pgliteDb(lite: PGlite): Db {
  const exclusive = localLocks();
  const bound = (q: Pick<PGlite, "query" | "exec">): Db => ({
    kind: "pglite",
    query: <T>(text: string, params?: unknown[]) => failClosed(async () => (await q.query<T>(text, params)).rows),
    exec: (text: string) => failClosed(async () => void (await q.exec(text))),
    tx: (fn) => transaction(async (body) => (await lite.transaction((t) => body(bound(t))))!, fn),
    exclusive,
    close: () => lite.close(),
  });
  return bound(lite);
}

export async function openPostgres(connectionString: string, max = 10): Promise<Db> {
  const pool = new pg.Pool({
    connectionString,
    max,
    application_name: "pit-app-store",
    connectionTimeoutMillis: 5_000,
  });
  // A connection lost while idle must not crash the process: the pool drops it and the next
  // query opens a new one.
  pool.on("error", () => {});
  const onClient = (client: pg.PoolClient): Db => ({
    kind: "postgres",
    query: <T>(text: string, params?: unknown[]) =>
      failClosed(async () => (await client.query(text, params)).rows as T[]),
    exec: (text: string) => failClosed(async () => void (await client.query(text))),
    tx: (fn) => fn(onClient(client)),
    exclusive: () => Promise.reject(new Error("exclusive() inside a transaction")),
    close: async () => {},
  });
  return {
    kind: "postgres",
    query: <T>(text: string, params?: unknown[]) =>
      failClosed(async () => (await pool.query(text, params)).rows as T[]),
    exec: (text: string) => failClosed(async () => void (await pool.query(text))),
    tx: (fn) => transaction((body) => inTransaction(pool, (client) => body(onClient(client))), fn),
    exclusive: (name, fn) => advisoryLocked(pool, name, fn),
    close: () => pool.end(),
  };
}

/** fn under pg_try_advisory_lock on a client kept checked out for it; null when another session holds the lock. */
async function advisoryLocked<T>(pool: pg.Pool, name: string, fn: () => Promise<T>): Promise<{ value: T } | null> {
  const client = await failClosed(() => pool.connect());
  let broken: Error | undefined;
  const onError = (err: Error) => void (broken = err);
  client.on("error", onError);
  try {
    const [row] = (
      await failClosed(() => client.query("SELECT pg_try_advisory_lock($1, hashtext($2)) AS ok", [LOCK_SPACE, name]))
    ).rows;
    if (!row?.ok) return null;
    try {
      return { value: await fn() };
    } finally {
      await client
        .query("SELECT pg_advisory_unlock($1, hashtext($2))", [LOCK_SPACE, name])
        .catch((e: Error) => void (broken ??= e));
    }
  } finally {
    client.off("error", onError);
    client.release(broken);
  }
}

/**
 * BEGIN ... COMMIT on one client. A checked-out client has no pool 'error' listener: a backend
 * terminated mid-transaction emits 'error' on the client, which would kill the process if nobody
 * listened. The broken client is destroyed on release instead of going back to the pool.
 */
async function inTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  const onError = (err: Error) => void (broken = err);
  client.on("error", onError);
  try {
    await client.query("BEGIN");
    const out = await fn(client);
    await client.query("COMMIT");
    return out;
  } catch (err) {
    broken ??= await client.query("ROLLBACK").then(
      () => undefined,
      (e: Error) => e,
    );
    throw err;
  } finally {
    client.off("error", onError);
    client.release(broken);
  }
}
