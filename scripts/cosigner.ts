/**
 * `npm run cosigner`: the session co-signer and the hosted executors' signing service as their own
 * process, holding COSIGNER_KEY and the executor keys sealed under EXECUTOR_KEYS_SECRET (the API then
 * runs with COSIGNER_URL and COSIGNER_TOKEN and never sees a key).
 */
import "../lib/noTelemetry.js";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { openPglite, openPostgres } from "../api/ports/store/db.js";
import { migrate } from "../api/ports/store/migrations.js";
import { cosignerFromEnv, executorsFromConfig } from "../cosigner/index.js";
import { cosignerServer } from "../cosigner/server.js";
import { createChainClient } from "../lib/chain.js";
import { ConfigError, loadConfig } from "../lib/config.js";
import { createLogger } from "../lib/logger.js";

let config;
try {
  config = loadConfig();
  if (!config.cosignerToken) throw new ConfigError("COSIGNER_TOKEN", "required: the secret the API sends");
} catch (err) {
  console.error((err as Error).message);
  process.exit(2);
}
const logger = createLogger();
// Its own store: COSIGNER_DATABASE_URL (give it a database the API cannot write: the keys, counters
// and attestations it keeps are what stands between a compromised API and the wallets), else
// DATABASE_URL's, else PGlite in DATA_DIR/cosigner.
const storeUrl = process.env.COSIGNER_DATABASE_URL ?? config.databaseUrl;
if (!storeUrl) mkdirSync(join(config.dataDir, "cosigner"), { recursive: true });
const db = storeUrl ? await openPostgres(storeUrl) : await openPglite(join(config.dataDir, "cosigner"));
await migrate(db);
let port;
try {
  port = cosignerFromEnv({ config, db, chain: createChainClient(config), clock: Date.now });
  if (!port) throw new ConfigError("COSIGNER_KEY", "required off the devnet");
} catch (err) {
  console.error((err as Error).message);
  process.exit(2);
}
// Hosted agents' executor keys live here too when EXECUTOR_KEYS_SECRET is set (always on the devnet).
const executors = executorsFromConfig({ config, db, clock: Date.now, chain: createChainClient(config) });
const server = cosignerServer(port, { token: config.cosignerToken!, logger, executors });
server.listen(config.cosignerPort, process.env.COSIGNER_HOST ?? "127.0.0.1", () => console.log(`[cosigner] ${port!.address} on http://127.0.0.1:${config!.cosignerPort}`));
const stop = () => server.close(() => void db.close().then(() => process.exit(0)));
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
