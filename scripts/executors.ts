/**
 * `npm run executors`: the hosted executors' signing service as its own process, holding the
 * executor keys sealed under EXECUTOR_KEYS_SECRET (a public development secret on the devnet), its
 * own store (EXECUTORS_DATABASE_URL; PGlite in DATA_DIR/executors on the devnet) and its own bearer
 * secret (EXECUTORS_TOKEN). It holds no co-signer key. The API runs with EXECUTORS_URL and
 * EXECUTORS_TOKEN.
 */
import "../lib/noTelemetry.js";
import { runSignerProcess, serveExecutors } from "../cosigner/process.js";
import { createChainClient } from "../lib/chain.js";
import { createLogger } from "../lib/logger.js";

await runSignerProcess({
  name: "executors",
  token: (config) => config.executorsToken,
  forbidden: {
    env: "COSIGNER_KEY",
    why:
      "set in the executor signing service's process: the co-signer's key lives in `npm run cosigner`, never " +
      "beside the executor keys",
  },
  databaseUrl: (config) => config.executorsDatabaseUrl,
  serve: (config, db, token) =>
    serveExecutors({
      config,
      db,
      chain: createChainClient(config),
      clock: Date.now,
      logger: createLogger(),
      token,
      port: config.executorsPort,
      host: process.env.EXECUTORS_HOST,
    }),
});
