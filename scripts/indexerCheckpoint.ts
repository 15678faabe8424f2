/**
 * Before Ponder starts: does the indexer's saved progress fit the chain it is about to follow?
 *
 * After kill -9 the devnet may come back a little behind what the indexer already saw (anvil's
 * state is written once a second, not per block). Ponder then refuses with "Finalized block ...
 * cannot move backwards" (it compares the timestamp of the chain's block at head - finality with
 * its saved finalized checkpoint). Here that is found before Ponder starts and handled:
 * - devnet, only unfinalized blocks lost: mine the missing blocks, so the chain is past the
 *   indexer again; Ponder's crash recovery reverts its rows to the safe checkpoint and indexes the
 *   new blocks (the lost ones are, for it, a reorg);
 * - devnet, finalized blocks lost: drop the indexer's build and re-index;
 * - real chain: refuse, naming the blocks (we cannot mine a real chain, and a re-index of a real
 *   chain is an operator's decision).
 * The app store (DATA_DIR/app, schema app) is never touched here.
 */
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import type { Config } from "../lib/config.js";
import { FINALITY_BLOCKS } from "../lib/finality.js";

export type IndexerCheckpoint = {
  latestBlock: number;
  latestTimestamp: number;
  finalizedBlock: number;
  finalizedTimestamp: number;
};

type Query = (text: string) => Promise<Record<string, unknown>[]>;
export type IndexerDb = { query: Query; close(): Promise<void> };
type Db = IndexerDb;

/**
 * Ponder's checkpoint string: 10 digits of block timestamp, 16 of chain id, 16 of block number,
 * then transaction index, event type and event index (node_modules/ponder/.../utils/checkpoint.js).
 */
export function decodeCheckpoint(checkpoint: string): { timestamp: number; chainId: number; blockNumber: number } {
  return {
    timestamp: Number(checkpoint.slice(0, 10)),
    chainId: Number(checkpoint.slice(10, 26)),
    blockNumber: Number(checkpoint.slice(26, 42)),
  };
}

export function pgliteDir(config: Config): string {
  return join(config.dataDir, "ponder");
}

/** The indexer's database (null: a PGlite directory that does not exist yet). */
export async function openIndexerDb(config: Config): Promise<Db | null> {
  if (config.databaseUrl) {
    const client = new pg.Client({ connectionString: config.databaseUrl });
    await client.connect();
    return { query: async (text) => (await client.query(text)).rows, close: () => client.end() };
  }
  const dir = pgliteDir(config);
  if (!existsSync(dir)) return null;
  // Imported late: PGlite's wasm is only needed when there is a directory to read.
  const { PGlite } = await import("@electric-sql/pglite");
  const db = new PGlite(dir);
  return { query: async (text) => (await db.query<Record<string, unknown>>(text)).rows, close: () => db.close() };
}

const quote = (ident: string) => `"${ident.replace(/"/g, '""')}"`;

async function tableExists(db: Db, schema: string, table: string): Promise<boolean> {
  const rows = await db.query(
    `SELECT 1 FROM information_schema.tables WHERE table_schema = '${schema.replace(/'/g, "''")}' AND table_name = ` +
      `'${table}'`,
  );
  return rows.length > 0;
}

/** The build's saved progress on `chainId`, or null when it has none (fresh or never indexed). */
export async function readCheckpoint(db: Db, schema: string, chainId: number): Promise<IndexerCheckpoint | null> {
  if (!(await tableExists(db, schema, "_ponder_checkpoint"))) return null;
  const rows = await db.query(
    `SELECT latest_checkpoint, finalized_checkpoint FROM ${quote(schema)}."_ponder_checkpoint" WHERE chain_id = ` +
      `${chainId}`,
  );
  const row = rows[0];
  if (!row) return null;
  const latest = decodeCheckpoint(String(row.latest_checkpoint));
  const finalized = decodeCheckpoint(String(row.finalized_checkpoint));
  return {
    latestBlock: latest.blockNumber,
    latestTimestamp: latest.timestamp,
    finalizedBlock: finalized.blockNumber,
    finalizedTimestamp: finalized.timestamp,
  };
}

/**
 * Releases Ponder's lock on the build when its holder is known dead (our previous indexer, killed
 * -9). Without this Ponder waits out the lock's 25 s heartbeat expiry before it starts.
 */
export async function releaseDeadLock(db: Db, schema: string): Promise<boolean> {
  if (!(await tableExists(db, schema, "_ponder_meta"))) return false;
  const rows = await db.query(
    `UPDATE ${quote(schema)}."_ponder_meta" SET value = jsonb_set(value, '{is_locked}', to_jsonb(0)) WHERE key = ` +
      `'app' AND (value->>'is_locked') = '1' RETURNING key`,
  );
  return rows.length > 0;
}

/** Drops the indexer's build: its schema on PostgreSQL, Ponder's PGlite directory otherwise. */
export async function dropIndexerBuild(config: Config, schema: string): Promise<void> {
  if (!config.databaseUrl) {
    rmSync(pgliteDir(config), { recursive: true, force: true });
    return;
  }
  const db = await openIndexerDb(config);
  try {
    await db!.query(`DROP SCHEMA IF EXISTS ${quote(schema)} CASCADE`);
  } finally {
    await db!.close();
  }
}

export type ChainView = {
  head: number;
  /** Timestamp of the chain's block at `n`, null when the chain has no such block. */
  timestampAt(n: number): Promise<number | null>;
};

export type Verdict =
  | { action: "none" }
  | { action: "mine"; blocks: number; reason: string }
  | { action: "reindex"; reason: string }
  | { action: "refuse"; reason: string };

/**
 * What to do with `cp` on `chain`. The finalized block must still be on the chain with the same
 * timestamp (else finalized history changed: re-index), and the chain must reach the indexer's
 * latest block and finalized + finality (Ponder's own check), else blocks are missing.
 */
export async function judge(cp: IndexerCheckpoint, chain: ChainView, devnet: boolean): Promise<Verdict> {
  const needHead = Math.max(cp.latestBlock, cp.finalizedBlock + FINALITY_BLOCKS);
  const finalizedTs = cp.finalizedBlock <= chain.head ? await chain.timestampAt(cp.finalizedBlock) : null;
  const finalizedKept = finalizedTs === cp.finalizedTimestamp;
  if (finalizedKept && chain.head >= needHead) return { action: "none" };
  const where =
    `the indexer is at block ${cp.latestBlock} (finalized ${cp.finalizedBlock}), the chain's head is ` +
    `${chain.head}`;
  if (!finalizedKept) {
    const reason = `${where}: the chain lost finalized block ${cp.finalizedBlock}`;
    return devnet ? { action: "reindex", reason } : { action: "refuse", reason };
  }
  const reason =
    `${where}: ${needHead - chain.head} block(s) missing, all inside the ${FINALITY_BLOCKS}-block ` +
    `unfinalized window`;
  return devnet ? { action: "mine", blocks: needHead - chain.head, reason } : { action: "refuse", reason };
}
