import type { AppDeps } from "./deps.js";

export type HealthStatus = "ok" | "degraded" | "down";

/** Indexer lag (blocks) past which the service calls itself degraded. */
export const MAX_INDEXER_LAG_BLOCKS = 30;
const PROBE_TIMEOUT_MS = 1_500;

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error("timeout")), ms).unref())]);
}

/**
 * down: the chain or the database cannot be reached (nothing can be served right);
 * degraded: the indexer lags or has not reported; ok otherwise.
 */
export async function checkHealth(deps: Pick<AppDeps, "chain" | "indexed" | "pingDatabase">) {
  const [chain, indexer, database] = await Promise.allSettled([
    withTimeout(deps.chain.getBlockNumber({ cacheTime: 0 }), PROBE_TIMEOUT_MS),
    withTimeout(deps.indexed.head(), PROBE_TIMEOUT_MS),
    withTimeout(deps.pingDatabase(), PROBE_TIMEOUT_MS),
  ]);
  const chainBlock = chain.status === "fulfilled" ? Number(chain.value) : null;
  const indexerBlock = indexer.status === "fulfilled" && indexer.value ? indexer.value.block : null;
  const lag = chainBlock !== null && indexerBlock !== null ? Math.max(0, chainBlock - indexerBlock) : null;
  const dbOk = database.status === "fulfilled";
  const status: HealthStatus =
    chainBlock === null || !dbOk ? "down" : lag === null || lag > MAX_INDEXER_LAG_BLOCKS ? "degraded" : "ok";
  return {
    status,
    checks: {
      chain: { ok: chainBlock !== null, block: chainBlock },
      indexer: { ok: lag !== null && lag <= MAX_INDEXER_LAG_BLOCKS, block: indexerBlock, lag_blocks: lag },
      database: { ok: dbOk },
    },
  };
}
