import { sql } from "ponder";
import { db } from "ponder:api";
import { createApp } from "../../api/app";
import { sqlIndexedReads } from "../../api/indexed";
import { createChainClient } from "../../lib/chain";
import { loadConfig } from "../../lib/config";
import { createLogger } from "../../lib/logger";

// The embedded default: the API runs inside Ponder's process and reads its tables directly.
const query = async (text: string) => {
  const result = (await db.execute(sql.raw(text))) as unknown as { rows: Record<string, unknown>[] };
  return result.rows;
};

const config = loadConfig();

export default createApp({
  config,
  logger: createLogger(),
  chain: createChainClient(config),
  indexed: sqlIndexedReads(query),
  pingDatabase: async () => {
    await query("SELECT 1");
  },
});
