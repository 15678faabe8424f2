import { randomUUID } from "node:crypto";
import type { Db } from "./db.js";

/** The database's clock in ms: instances (and tests with shifted service clocks) agree on it. */
const DB_NOW_MS = "(extract(epoch from clock_timestamp()) * 1000)::bigint";

/**
 * A named lease in the app store: the holder renews it, anyone takes it once it has lapsed. A
 * worker that must run once per store (the relay watcher; later the week closer) acts only while
 * it holds its lease, so N instances do the work once and another takes over within `ttlMs` of
 * the holder dying. Works the same on PGlite (one process) and PostgreSQL. Time is the database's
 * unless a `clock` is given (the league standings' lease: its tests move the service clock past
 * the ttl instead of waiting it out; every instance sharing the lease must then share that clock).
 */
export function createLease(db: Db, name: string, ttlMs = 5_000, clock?: () => number) {
  const holder = randomUUID();
  const now = `COALESCE($4::bigint, ${DB_NOW_MS})`;
  return {
    name,
    holder,
    /** Takes or renews the lease; true while this instance holds it. */
    async hold(): Promise<boolean> {
      const rows = await db.query(
        `INSERT INTO app.leases (name, holder, until_ms) VALUES ($1, $2, ${now} + $3::bigint)
         ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, until_ms = EXCLUDED.until_ms
         WHERE app.leases.holder = EXCLUDED.holder OR app.leases.until_ms < ${now}
         RETURNING holder`,
        [name, holder, ttlMs, clock ? Math.floor(clock()) : null],
      );
      return rows.length === 1;
    },
    /** Gives the lease up at a clean stop, so another instance need not wait out the ttl. */
    async release(): Promise<void> {
      await db.query("DELETE FROM app.leases WHERE name = $1 AND holder = $2", [name, holder]);
    },
  };
}

export type Lease = ReturnType<typeof createLease>;
