/**
 * `npm run cosigner`: the session co-signer as its own process, holding COSIGNER_KEY (the devnet's
 * account 2 on the devnet), its own store (COSIGNER_DATABASE_URL; PGlite in DATA_DIR/cosigner on
 * the devnet) and its own bearer secret (COSIGNER_TOKEN). It holds no executor key: hosted
 * executors sign in `npm run executors`. The API runs with COSIGNER_URL and COSIGNER_TOKEN.
 */
import "../lib/noTelemetry.js";
import { runSignerProcess, serveCosigner } from "../cosigner/process.js";
import { createChainClient } from "../lib/chain.js";
import { createLogger } from "../lib/logger.js";

await runSignerProcess({
  name: "cosigner",
  token: (config) => config.cosignerToken,
  forbidden: {
    env: "EXECUTOR_KEYS_SECRET",
    why:
      "set in the co-signer's process: the executor keys live in `npm run executors`, never beside the " +
      "co-signer's key",
  },
  databaseUrl: (config) => config.cosignerDatabaseUrl,
  serve: (config, db, token) =>
    serveCosigner({
      config,
      db,
      chain: createChainClient(config),
      clock: Date.now,
      logger: createLogger(),
      token,
      port: config.cosignerPort,
      host: process.env.COSIGNER_HOST,
    }),
});
