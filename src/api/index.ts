import { sql } from "ponder";
import { db } from "ponder:api";
import { createApp } from "../../api/app";
import { sqlIndexedReads } from "../../api/indexed";
import { openAppStore } from "../../api/store/open";
import { httpShield } from "../../api/shield";
import { createChainClient } from "../../lib/chain";
import { loadConfig } from "../../lib/config";
import { createLogger } from "../../lib/logger";

// The embedded default: the API runs inside Ponder's process and reads its tables directly.
// $n placeholders become bound parameters of one drizzle statement.
const query = async (text: string, params: unknown[] = []) => {
  const chunks = text.split(/(\$\d+)/).map((part) => {
    const m = /^\$(\d+)$/.exec(part);
    return m ? sql`${params[Number(m[1]) - 1]}` : sql.raw(part);
  });
  const result = (await db.execute(sql.join(chunks))) as unknown as { rows: Record<string, unknown>[] };
  return result.rows;
};

const config = loadConfig();
const store = await openAppStore(config);

export default createApp({
  config,
  logger: createLogger(),
  chain: createChainClient(config),
  indexed: sqlIndexedReads(query, process.env.DATABASE_SCHEMA),
  db: store,
  shield: config.shieldUrl ? httpShield(config.shieldUrl) : null,
  pingDatabase: async () => {
    await query("SELECT 1");
    await store.query("SELECT 1");
  },
});
