import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { keepMigratedDump, openPgliteDir } from "./memory.js";
import { MIGRATIONS, migrate } from "./migrations.js";

const was = process.env.PGLITE_TEMPLATE_DIR;
const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "pit-store-dump-"));
  dirs.push(d);
  return d;
};
afterEach(() => {
  if (was === undefined) delete process.env.PGLITE_TEMPLATE_DIR;
  else process.env.PGLITE_TEMPLATE_DIR = was;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** The store's applied migrations and whether it takes a write of the app's tables. */
async function storeState(dir: string) {
  const db = await openPgliteDir(dir);
  try {
    await migrate(db);
    const versions = await db.query<{ n: string }>("SELECT count(*)::text AS n FROM app.schema_migrations");
    await db.query("INSERT INTO app.leases (name, holder, until_ms) VALUES ($1, 'h', 0)", [`k${Math.random()}`]);
    const rows = await db.query<{ n: string }>("SELECT count(*)::text AS n FROM app.leases");
    return { migrations: Number(versions[0]!.n), rows: Number(rows[0]!.n) };
  } finally {
    await db.close();
  }
}

describe("the migrated store dump npm start keeps (PGLITE_TEMPLATE_DIR)", () => {
  it("is kept once, and a new store directory opens from it migrated and writable", async () => {
    const kept = tempDir();
    process.env.PGLITE_TEMPLATE_DIR = kept;
    expect(await keepMigratedDump()).toBe(true);
    const files = readdirSync(kept);
    expect(files).toEqual([expect.stringMatching(/^app-store-\w+\.tar$/)]);
    const store = join(tempDir(), "app");
    expect(await storeState(store)).toEqual({ migrations: MIGRATIONS.length, rows: 1 });
    // Opened again (a restart), it is the same store, not a new copy of the dump.
    expect((await storeState(store)).rows).toBe(2);
  }, 60_000);

  it("keeps nothing where the place cannot be written, and a store then opens by initdb as before", async () => {
    const blocked = join(tempDir(), "a-file");
    writeFileSync(blocked, "not a directory");
    process.env.PGLITE_TEMPLATE_DIR = join(blocked, "dumps");
    expect(await keepMigratedDump()).toBe(false);
    expect(existsSync(join(blocked, "dumps"))).toBe(false);
    expect(await storeState(join(tempDir(), "app"))).toEqual({ migrations: MIGRATIONS.length, rows: 1 });
  }, 60_000);
});
