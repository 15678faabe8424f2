import type { Logger } from "pino";
import type { PublicClient } from "viem";
import type { Config } from "../lib/config.js";
import type { Limiter } from "./http/rateLimit.js";
import type { Db } from "./ports/store/db.js";
import type { SqlIndexedReads } from "./ports/indexed.js";
import type { ShieldProvider } from "./ports/shield.js";
import type { Sequencer } from "./ports/sequencer.js";
import type { CosignerPort } from "./ports/cosigner.js";
import type { PlatformSigner } from "./ports/platformSigner.js";
import type { ExecutorPort } from "./ports/executors.js";
import type { ScreenTuning } from "./tokens/index.js";
import type { SignInCaps } from "./auth/index.js";

/** Everything the app touches outside itself, passed in so tests build it directly. */
export type AppDeps = {
  config: Config;
  logger: Logger;
  chain: PublicClient;
  /** Typed reads over the indexer's tables (api/indexed.ts). */
  indexed: SqlIndexedReads;
  /** Database behind indexed reads and the app store; resolves when reachable. */
  pingDatabase(): Promise<void>;
  /** The app store (migrated). */
  db: Db;
  limiter?: Limiter;
  /** Where new-token screening budgets live (default: Redis with REDIS_URL, else this instance). */
  screenBudget?: Limiter;
  /** Screening limits (default SCREEN_DEFAULTS): tests and the benchmark pass their own. */
  screen?: ScreenTuning;
  /**
   * New accounts' and keys' caps per client and for the service (default SIGN_IN_CAPS): tests and the benchmark pass
   * their own.
   */
  signInCaps?: SignInCaps;
  /** The Shield verdict provider; null when none is configured (shield=1 then answers 503). */
  shield?: ShieldProvider | null;
  clock?: () => number;
  /** Where live/submit relays (default: JSON-RPC to config.sequencerUrl). */
  sequencer?: Sequencer;
  /** The co-signer (default: over HTTP at COSIGNER_URL); null: none. */
  cosigner?: CosignerPort | null;
  /**
   * The platform wallet's signer for the treasury split (default: TREASURY_SIGNER_URL, or the devnet's account 1);
   * null: none.
   */
  platformSigner?: PlatformSigner | null;
  /** Treasury tuning for tests: confirmations before a week closes, answer cache, closer interval, ETH method. */
  /** Hosted executors' signing service (default: over HTTP at EXECUTORS_URL); null: none. */
  executors?: ExecutorPort | null;
  /**
   * Hosted scheduler tuning for tests: pass interval (0: no timer, tests call runDue), lease, concurrency, instance
   * name.
   */
  hostedScheduler?: {
    intervalMs?: number;
    leaseMs?: number;
    concurrency?: number;
    tickTimeoutMs?: number;
    instance?: string;
  };
  /** League settler pass interval (0: not started; tests drive runOnce), reading cache, the reserve wallet's signer. */
  /**
   * cacheMs: the standings worker's pause between passes (0: not started); leaseMs: its lease's ttl; onCompute sees
   * each standings computation start.
   */
  league?: {
    settleIntervalMs?: number;
    cacheMs?: number;
    leaseMs?: number;
    reserveSigner?: PlatformSigner | null;
    onCompute?: (key: string) => Promise<void>;
  };
  /** Stats loop: how often (real time) it looks whether the answer is due (api/server/stats.ts). */
  stats?: { pollMs?: number };
  treasury?: {
    confirmations?: number;
    cacheMs?: number;
    intervalMs?: number;
    deliverTimeoutMs?: number;
    ethMethod?: "trace" | "balance";
  };
};

/** The edge's request variables live with the edge (api/http/env.ts). */
export type { AppEnv } from "./http/env.js";
