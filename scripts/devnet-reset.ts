/**
 * `npm run devnet:reset`: back to the pristine snapshot, chain and stores together. On the
 * embedded default that is the data directory (chain state, both PGlite stores). With
 * DATABASE_URL it also drops what lives in PostgreSQL: the app store (`app`), the indexer's build
 * schemas (`pit_<hash>`), its views schema and Ponder's sync cache (`ponder_sync`, keyed by chain
 * id, so an old devnet's cached logs would replay into the new one). Devnet only.
 */
import { rmSync } from "node:fs";
import pg from "pg";
import { join, resolve } from "node:path";
import { ConfigError, loadConfig } from "../lib/config.js";
import { ROOT } from "../lib/root.js";

let config: ReturnType<typeof loadConfig>;
try {
  config = loadConfig();
} catch (err) {
  // No universe yet (nothing was ever started): only a data directory can exist.
  if (!(err instanceof ConfigError && err.variable === "UNIVERSE_FILE")) throw err;
  const dir = process.env.DATA_DIR ? resolve(ROOT, process.env.DATA_DIR) : join(ROOT, ".data");
  rmSync(dir, { recursive: true, force: true });
  console.log(`removed ${dir}`);
  process.exit(0);
}
if (!config.devnet) {
  console.error("devnet:reset only resets the local devnet (CHAIN_RPC_URL is set): nothing was removed");
  process.exit(2);
}
rmSync(config.dataDir, { recursive: true, force: true });
console.log(`removed ${config.dataDir}: the next npm start begins from the pristine snapshot`);

if (config.databaseUrl) {
  const client = new pg.Client({ connectionString: config.databaseUrl });
  await client.connect();
  try {
    const views = config.indexerSchema ?? "pit";
    const { rows } = await client.query<{ name: string }>(
      `SELECT nspname AS name FROM pg_namespace WHERE nspname = ANY($1::text[]) OR nspname ~ '^pit_[0-9a-f]{12}$' ` +
        `ORDER BY 1`,
      [["app", "ponder_sync", views]],
    );
    for (const { name } of rows) await client.query(`DROP SCHEMA "${name.replace(/"/g, '""')}" CASCADE`);
    console.log(
      rows.length
        ? `dropped schemas ${rows.map((r) => r.name).join(", ")} in ${new URL(config.databaseUrl).pathname.slice(1)}`
        : "no devnet schemas in the database",
    );
  } finally {
    await client.end();
  }
}
