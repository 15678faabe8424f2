import { onchainTable } from "ponder";

/** Every v4 pool and its latest state. The indexer issue adds history, TWAPs, marks, fees, trades. */
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
  block: t.bigint().notNull(),
  timestamp: t.bigint().notNull(),
}));
