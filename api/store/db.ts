import { PGlite } from "@electric-sql/pglite";
import pg from "pg";

/**
 * The app store's connection: the same SQL on PGlite (embedded default, its own directory next to
 * Ponder's) and PostgreSQL (DATABASE_URL; shared by any number of API instances).
 */
export interface Db {
  readonly kind: "pglite" | "postgres";
  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
  /** Runs a script of several statements (no parameters). */
  exec(text: string): Promise<void>;
  /** Runs fn in one transaction; the Db passed to fn is bound to it. */
  tx<T>(fn: (db: Db) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export async function openPglite(dataDir?: string): Promise<Db> {
  const lite = new PGlite(dataDir);
  await lite.waitReady;
  const bound = (q: Pick<PGlite, "query" | "exec">): Db => ({
    kind: "pglite",
    query: async <T>(text: string, params?: unknown[]) => (await q.query<T>(text, params)).rows,
    exec: async (text: string) => void (await q.exec(text)),
    tx: async (fn) => (await lite.transaction((t) => fn(bound(t))))!,
    close: () => lite.close(),
  });
  return bound(lite);
}

export async function openPostgres(connectionString: string, max = 10): Promise<Db> {
  const pool = new pg.Pool({ connectionString, max });
  // A connection error on an idle client must not crash the process; the next query reports it.
  pool.on("error", () => {});
  const onClient = (client: pg.PoolClient): Db => ({
    kind: "postgres",
    query: async <T>(text: string, params?: unknown[]) => (await client.query(text, params)).rows as T[],
    exec: async (text: string) => void (await client.query(text)),
    tx: (fn) => fn(onClient(client)),
    close: async () => {},
  });
  return {
    kind: "postgres",
    query: async <T>(text: string, params?: unknown[]) => (await pool.query(text, params)).rows as T[],
    exec: async (text: string) => void (await pool.query(text)),
    async tx(fn) {
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        const out = await fn(onClient(client));
        await client.query("COMMIT");
        return out;
      } catch (err) {
        await client.query("ROLLBACK").catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}
