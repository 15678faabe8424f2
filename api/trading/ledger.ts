import * as mined from "./ledger/mined.js";
import * as plans from "./ledger/plans.js";
import * as relay from "./ledger/relay.js";
import * as trades from "./ledger/trades.js";
import * as watch from "./ledger/watch.js";
import type { LedgerDeps } from "./ledger/records.js";

export {
  DROP_AFTER_S,
  fingerprint,
  relayedPlanOf,
  storedOutcome,
  type LedgerDeps,
  type PendingTrade,
  type RelayedTrade,
  type RelayState,
  type StoredOutcome,
  type StoredPlan,
  type TokenRef,
  type WatchedTrade,
} from "./ledger/records.js";
export type { TradeRecord } from "./ledger/trades.js";

/** A ledger query with its deps bound: what callers hold. */
type Bound<Q> = { [K in keyof Q]: Q[K] extends (d: LedgerDeps, ...a: infer A) => infer R ? (...a: A) => R : never };

/** Binds every query of `queries` to `d` (the queries stay plain functions over the store, testable one by one). */
function bind<Q extends Record<string, (d: LedgerDeps, ...a: never[]) => unknown>>(
  d: LedgerDeps,
  queries: Q,
): Bound<Q> {
  return Object.fromEntries(Object.entries(queries).map(([k, q]) => [k, (...a: never[]) => q(d, ...a)])) as Bound<Q>;
}

/**
 * The app store's record of what was built for which key (plans, with a fingerprint per
 * transaction) and of what was relayed or refused (trades), with the outcome of each relayed hash
 * as the relay watcher (watcher.ts) read it from its receipt. The queries live in ledger/ by who
 * asks: plans, the relay, the watcher, what was mined, the wallet's trade records.
 */
export function createLedger(d: LedgerDeps) {
  const { listTrades, ...records } = trades;
  return bind(d, { ...plans, ...relay, ...mined, ...watch, ...records, list: listTrades });
}

export type Ledger = ReturnType<typeof createLedger>;
