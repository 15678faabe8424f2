import type { IndexedReads, IndexerStatus } from "./deps.js";

/**
 * Ponder checkpoints are 75 digits: block timestamp (10), chain id (16), block number (16),
 * transaction index (16), event type (1), event index (16).
 */
export function decodeCheckpointHead(checkpoint: string): IndexerStatus {
  if (!/^\d{75}$/.test(checkpoint)) return null;
  return { timestamp: Number(checkpoint.slice(0, 10)), block: Number(checkpoint.slice(26, 42)) };
}

type Query = (sql: string) => Promise<Record<string, unknown>[]>;

/** Indexed reads over SQL: `query` runs against Ponder's schema (embedded db or a pg views schema). */
export function sqlIndexedReads(query: Query): IndexedReads {
  return {
    async head() {
      const rows = await query("SELECT latest_checkpoint FROM _ponder_checkpoint LIMIT 1");
      const cp = rows[0]?.latest_checkpoint;
      return typeof cp === "string" ? decodeCheckpointHead(cp) : null;
    },
  };
}
