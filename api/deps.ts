import type { Logger } from "pino";
import type { PublicClient } from "viem";
import type { Config } from "../lib/config.js";
import type { RateLimiter } from "./rateLimit.js";
import type { KeyRecord } from "./signin.js";
import type { Db } from "./store/db.js";

/** What the indexer tells the API about itself (Ponder's checkpoint). */
export type IndexerStatus = { block: number; timestamp: number } | null;

/** Reads over Ponder's tables. Grows with the indexer issue; here just the head. */
export interface IndexedReads {
  head(): Promise<IndexerStatus>;
}

/** Everything the app touches outside itself, passed in so tests build it directly. */
export type AppDeps = {
  config: Config;
  logger: Logger;
  chain: PublicClient;
  indexed: IndexedReads;
  /** Database behind indexed reads and the app store; resolves when reachable. */
  pingDatabase(): Promise<void>;
  /** The app store (migrated). */
  db: Db;
  limiter?: RateLimiter;
  clock?: () => number;
};

export type AppEnv = {
  Variables: {
    log: Logger;
    requestId: string;
    errorCode: string | undefined;
    clientAddr: string;
    body: Record<string, unknown>;
    key: KeyRecord;
  };
};
