import { ponder } from "ponder:registry";
import { pool } from "ponder:schema";

ponder.on("PoolManager:Initialize", async ({ event, context }) => {
  await context.db.insert(pool).values({
    id: event.args.id,
    currency0: event.args.currency0,
    currency1: event.args.currency1,
    fee: event.args.fee,
    tickSpacing: event.args.tickSpacing,
    hooks: event.args.hooks,
    sqrtPriceX96: event.args.sqrtPriceX96,
    tick: event.args.tick,
    liquidity: 0n,
    block: event.block.number,
    timestamp: event.block.timestamp,
  });
});

ponder.on("PoolManager:Swap", async ({ event, context }) => {
  await context.db.update(pool, { id: event.args.id }).set({
    sqrtPriceX96: event.args.sqrtPriceX96,
    tick: event.args.tick,
    liquidity: event.args.liquidity,
    block: event.block.number,
    timestamp: event.block.timestamp,
  });
});
