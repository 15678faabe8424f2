import { ponder } from "./lib/ponderNative";

const { index, onchainTable, primaryKey } = ponder;

// Every table here is written only by the indexing functions in src/ and is reorg-safe: Ponder
// removes rows of dropped blocks. Readers (api/indexed.ts) tolerate rows vanishing that way.

/** Every v4 pool: its key, its state after the last event, and the TWAP accumulator's head. */
export const pool = onchainTable("pool", (t) => ({
  id: t.hex().primaryKey(),
  currency0: t.hex().notNull(),
  currency1: t.hex().notNull(),
  fee: t.integer().notNull(),
  tickSpacing: t.integer().notNull(),
  hooks: t.hex().notNull(),
  sqrtPriceX96: t.bigint().notNull(),
  tick: t.integer().notNull(),
  liquidity: t.bigint().notNull(),
  /** slot0's protocol fee (ProtocolFeeUpdated; 0 from Initialize): a pool with one is quoted by the V4Quoter. */
  protocolFee: t.integer().notNull().default(0),
  /** priceX96 = sqrtPriceX96² / 2^96: currency1 atoms per currency0 atom, times 2^96. */
  priceX96: t.bigint().notNull(),
  /** Σ priceX96 × seconds from the pool's first observation up to `timestamp`. */
  cumulativeX96: t.bigint().notNull(),
  swaps: t.integer().notNull(),
  block: t.bigint().notNull(),
  timestamp: t.bigint().notNull(),
}));

/**
 * One row per pool event (initialize, swap, liquidity), in chain order. `cumulativeX96` is the
 * accumulator at this row's timestamp using the price before it, so the time-weighted mean over
 * [a, b] is (cum(b) - cum(a)) / (b - a) with cum(x) = cum_row + price_row × (x - ts_row) of the
 * last row at or before x: one query, exact in integers, unaffected by rows sharing a timestamp.
 */
export const poolObservation = onchainTable(
  "pool_observation",
  (t) => ({
    id: t.text().primaryKey(),
    poolId: t.hex().notNull(),
    kind: t.text().notNull(),
    block: t.bigint().notNull(),
    logIndex: t.integer().notNull(),
    timestamp: t.bigint().notNull(),
    sqrtPriceX96: t.bigint().notNull(),
    tick: t.integer().notNull(),
    liquidity: t.bigint().notNull(),
    priceX96: t.bigint().notNull(),
    cumulativeX96: t.bigint().notNull(),
    amount0: t.bigint(),
    amount1: t.bigint(),
    txHash: t.hex().notNull(),
  }),
  (table) => ({ byPoolTime: index().on(table.poolId, table.timestamp, table.block, table.logIndex) }),
);

/**
 * A pool's initialised ticks, from ModifyLiquidity (Pool.updateTick): net and gross liquidity. A tick
 * whose gross returns to zero is cleared on chain and deleted here, so the rows are the chain's
 * tick bitmap; with the pool row they are the state the local quotes swap through (lib/localQuote).
 */
export const poolTick = onchainTable(
  "pool_tick",
  (t) => ({
    id: t.text().primaryKey(),
    poolId: t.hex().notNull(),
    tick: t.integer().notNull(),
    liquidityNet: t.bigint().notNull(),
    liquidityGross: t.bigint().notNull(),
  }),
  (table) => ({ byPool: index().on(table.poolId, table.tick) }),
);

/** Launchpad curve tokens and their state after the last trade. */
export const curveToken = onchainTable("curve_token", (t) => ({
  token: t.hex().primaryKey(),
  creator: t.hex().notNull(),
  name: t.text().notNull(),
  symbol: t.text().notNull(),
  feeMode: t.integer().notNull(),
  virtualEth: t.bigint().notNull(),
  virtualToken: t.bigint().notNull(),
  graduated: t.boolean().notNull(),
  trades: t.integer().notNull(),
  launchedAt: t.bigint().notNull(),
  block: t.bigint().notNull(),
  timestamp: t.bigint().notNull(),
}));

export const curveTrade = onchainTable(
  "curve_trade",
  (t) => ({
    id: t.text().primaryKey(),
    token: t.hex().notNull(),
    trader: t.hex().notNull(),
    isBuy: t.boolean().notNull(),
    ethAmount: t.bigint().notNull(),
    tokenAmount: t.bigint().notNull(),
    fee: t.bigint().notNull(),
    virtualEth: t.bigint().notNull(),
    virtualToken: t.bigint().notNull(),
    block: t.bigint().notNull(),
    timestamp: t.bigint().notNull(),
    txHash: t.hex().notNull(),
  }),
  (table) => ({ byToken: index().on(table.token, table.timestamp) }),
);

/** Oracle feeds: the latest round (mark and its age are one row). */
export const feed = onchainTable("feed", (t) => ({
  address: t.hex().primaryKey(),
  roundId: t.bigint().notNull(),
  answer: t.bigint().notNull(),
  updatedAt: t.bigint().notNull(),
  block: t.bigint().notNull(),
}));

export const feedRound = onchainTable(
  "feed_round",
  (t) => ({
    feed: t.hex().notNull(),
    roundId: t.bigint().notNull(),
    answer: t.bigint().notNull(),
    updatedAt: t.bigint().notNull(),
    block: t.bigint().notNull(),
    timestamp: t.bigint().notNull(),
    txHash: t.hex().notNull(),
  }),
  (table) => ({
    pk: primaryKey({ columns: [table.feed, table.roundId] }),
    byFeedTime: index().on(table.feed, table.updatedAt),
  }),
);

/**
 * ERC-20 value moving into (`in`) or out of (`out`) the platform fee wallet, from Transfer logs.
 * source: `trade` when paid inside a router or delegation execution, else `outside`; method `log`.
 * Native ETH has no log: ETH fees of our trades are in the relay watcher's outcomes (app store),
 * other ETH reaching the wallet is found by the treasury's weekly balance reconciliation.
 */
export const feeTransfer = onchainTable(
  "fee_transfer",
  (t) => ({
    id: t.text().primaryKey(),
    direction: t.text().notNull(),
    token: t.hex().notNull(),
    amount: t.bigint().notNull(),
    from: t.hex().notNull(),
    to: t.hex().notNull(),
    source: t.text().notNull(),
    method: t.text().notNull(),
    txHash: t.hex().notNull(),
    block: t.bigint().notNull(),
    timestamp: t.bigint().notNull(),
  }),
  (table) => ({ byTime: index().on(table.timestamp), byTx: index().on(table.txHash) }),
);
