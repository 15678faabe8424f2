import { join } from "node:path";
import type { Config } from "../../../lib/config.js";
import { openPostgres, type Db } from "./db.js";
import { openPgliteDir } from "./memory.js";
import { migrate } from "./migrations.js";

/** The app store for this config, migrated: PostgreSQL with DATABASE_URL, else PGlite in DATA_DIR/app. */
export async function openAppStore(config: Pick<Config, "databaseUrl" | "dataDir">): Promise<Db> {
  const db = config.databaseUrl
    ? await openPostgres(config.databaseUrl)
    : await openPgliteDir(join(config.dataDir, "app"));
  await migrate(db);
  return db;
}
