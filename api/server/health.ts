import type { PublicClient } from "viem";
import type { Db } from "../ports/store/db.js";
import type { SqlIndexedReads } from "../ports/indexed.js";
import { MIGRATIONS } from "../ports/store/migrations.js";
import { secpBackend } from "../../lib/secp.js";

export type HealthStatus = "ok" | "degraded" | "down";

/** Indexer lag (blocks) past which the service calls itself degraded. */
export const MAX_INDEXER_LAG_BLOCKS = 30;
const PROBE_TIMEOUT_MS = 1_500;

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error("timeout")), ms).unref())]);
}

/**
 * A real read of the app store: its migration table must show the latest step. A store that
 * answers `SELECT 1` but reads its tables as empty (seen with file descriptors exhausted) fails.
 */
async function storeAnswers(db: Db): Promise<void> {
  const latest = MIGRATIONS[MIGRATIONS.length - 1]!.version;
  const rows = await db.query<{ v: number | null }>("SELECT max(version) AS v FROM app.schema_migrations");
  if (Number(rows[0]?.v) !== latest)
    throw new Error(`the app store reads migration ${rows[0]?.v ?? "none"}, not ${latest}`);
}

/**
 * Closed treasury weeks whose reconciliation is `accepted` rather than `agrees` (the operator's count; status
 * unaffected).
 */
async function weeksAccepted(db: Db): Promise<number> {
  const rows = await db.query<{ n: string }>(
    "SELECT count(*)::text AS n FROM app.treasury_rows WHERE (body::json -> 'reconciliation' ->> 'status') = " +
      "'accepted'",
  );
  return Number(rows[0]?.n ?? 0);
}

/** What the probe reads: the chain, the indexer's tables, the database and the app store (the app's own deps). */
export type HealthDeps = {
  chain: PublicClient;
  indexed: Pick<SqlIndexedReads, "head">;
  pingDatabase(): Promise<void>;
  db: Db;
};

/**
 * How many blocks the indexed views trail the chain's head (pit_views_lag_blocks, read at each scrape):
 * null when either head cannot be read within the probe's timeout; negative when the node lost blocks
 * the indexer had.
 */
export async function viewsLagBlocks(deps: Pick<HealthDeps, "chain" | "indexed">): Promise<number | null> {
  const [chain, indexed] = await Promise.all([
    withTimeout(deps.chain.getBlockNumber({ cacheTime: 0 }), PROBE_TIMEOUT_MS),
    withTimeout(deps.indexed.head(), PROBE_TIMEOUT_MS),
  ]);
  return indexed ? Number(chain) - indexed.block : null;
}

/**
 * down: the chain or a store cannot be read (nothing can be served right); degraded: the indexer
 * lags, has not reported, or is ahead of the chain (the node lost blocks it had indexed); ok
 * otherwise.
 */
export async function checkHealth(deps: HealthDeps) {
  const [chain, indexer, database, store, accepted] = await Promise.allSettled([
    withTimeout(deps.chain.getBlockNumber({ cacheTime: 0 }), PROBE_TIMEOUT_MS),
    withTimeout(deps.indexed.head(), PROBE_TIMEOUT_MS),
    withTimeout(deps.pingDatabase(), PROBE_TIMEOUT_MS),
    withTimeout(storeAnswers(deps.db), PROBE_TIMEOUT_MS),
    withTimeout(weeksAccepted(deps.db), PROBE_TIMEOUT_MS),
  ]);
  const chainBlock = chain.status === "fulfilled" ? Number(chain.value) : null;
  const indexerBlock = indexer.status === "fulfilled" && indexer.value ? indexer.value.block : null;
  const lag = chainBlock !== null && indexerBlock !== null ? chainBlock - indexerBlock : null;
  const indexerOk = lag !== null && lag >= 0 && lag <= MAX_INDEXER_LAG_BLOCKS;
  const dbOk = database.status === "fulfilled" && store.status === "fulfilled";
  const status: HealthStatus = chainBlock === null || !dbOk ? "down" : indexerOk ? "ok" : "degraded";
  return {
    status,
    checks: {
      chain: { ok: chainBlock !== null, block: chainBlock },
      indexer: {
        ok: indexerOk,
        block: indexerBlock,
        lag_blocks: lag,
        ...(lag !== null && lag < 0 ? { ahead_of_chain: true } : {}),
      },
      database: { ok: dbOk },
      treasury: { weeks_accepted: accepted.status === "fulfilled" ? accepted.value : null },
      // Which secp256k1 recovers signers in this process: native (libsecp256k1) or viem's JavaScript fallback,
      // several times slower under load; an operator reads here whether the binary loaded (lib/secp.ts).
      signatures: { backend: secpBackend },
    },
  };
}
