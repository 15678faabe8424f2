import { ponder } from "ponder:registry";
import { pool, poolObservation, poolTick } from "ponder:schema";
import { accumulate, priceX96FromSqrt } from "../lib/twap";

ponder.on("PoolManager:Initialize", async ({ event, context }) => {
  const { id, sqrtPriceX96, tick } = event.args;
  const priceX96 = priceX96FromSqrt(sqrtPriceX96);
  const ts = event.block.timestamp;
  await context.db.insert(pool).values({
    id,
    currency0: event.args.currency0,
    currency1: event.args.currency1,
    fee: event.args.fee,
    tickSpacing: event.args.tickSpacing,
    hooks: event.args.hooks,
    sqrtPriceX96,
    tick,
    liquidity: 0n,
    priceX96,
    cumulativeX96: 0n,
    swaps: 0,
    block: event.block.number,
    timestamp: ts,
  });
  await context.db.insert(poolObservation).values({
    id: `${id}-${event.block.number}-${event.log.logIndex}`,
    poolId: id,
    kind: "initialize",
    block: event.block.number,
    logIndex: event.log.logIndex,
    timestamp: ts,
    sqrtPriceX96,
    tick,
    liquidity: 0n,
    priceX96,
    cumulativeX96: 0n,
    txHash: event.transaction.hash,
  });
});

ponder.on("PoolManager:Swap", async ({ event, context }) => {
  const { id, sqrtPriceX96, tick, liquidity, amount0, amount1 } = event.args;
  const ts = event.block.timestamp;
  const priceX96 = priceX96FromSqrt(sqrtPriceX96);
  // One read-modify-write of the pool row; its result carries the accumulator for the observation.
  const updated = await context.db
    .update(pool, { id })
    .set((prev) => ({
      sqrtPriceX96,
      tick,
      liquidity,
      priceX96,
      cumulativeX96: accumulate(prev, ts),
      swaps: prev.swaps + 1,
      block: event.block.number,
      timestamp: ts,
    }))
    .catch((err: Error) => {
      // A pool initialised before our start block is not ours to follow; anything else is fatal.
      if (err.name === "RecordNotFoundError") return null;
      throw err;
    });
  if (!updated) return;
  await context.db.insert(poolObservation).values({
    id: `${id}-${event.block.number}-${event.log.logIndex}`,
    poolId: id,
    kind: "swap",
    block: event.block.number,
    logIndex: event.log.logIndex,
    timestamp: ts,
    sqrtPriceX96,
    tick,
    liquidity,
    priceX96,
    cumulativeX96: updated.cumulativeX96,
    amount0,
    amount1,
    txHash: event.transaction.hash,
  });
});

ponder.on("PoolManager:ModifyLiquidity", async ({ event, context }) => {
  const { id, tickLower, tickUpper, liquidityDelta } = event.args;
  const prev = await context.db.find(pool, { id });
  if (!prev) return;
  const ts = event.block.timestamp;
  // In-range positions change the active liquidity; the price does not move.
  const inRange = tickLower <= prev.tick && prev.tick < tickUpper;
  const liquidity = inRange ? prev.liquidity + liquidityDelta : prev.liquidity;
  const cumulativeX96 = accumulate(prev, ts);
  await context.db.update(pool, { id }).set({ liquidity, cumulativeX96, block: event.block.number, timestamp: ts });
  if (liquidityDelta !== 0n) {
    await updateTick(context.db, id, tickLower, liquidityDelta, liquidityDelta);
    await updateTick(context.db, id, tickUpper, -liquidityDelta, liquidityDelta);
  }
  await context.db.insert(poolObservation).values({
    id: `${id}-${event.block.number}-${event.log.logIndex}`,
    poolId: id,
    kind: "liquidity",
    block: event.block.number,
    logIndex: event.log.logIndex,
    timestamp: ts,
    sqrtPriceX96: prev.sqrtPriceX96,
    tick: prev.tick,
    liquidity,
    priceX96: prev.priceX96,
    cumulativeX96,
    txHash: event.transaction.hash,
  });
});

type Db = Parameters<Parameters<typeof ponder.on<"PoolManager:ModifyLiquidity">>[1]>[0]["context"]["db"];

/** Pool.updateTick's bookkeeping: gross by |delta|, net by the side's sign; a tick back to zero gross is cleared. */
async function updateTick(db: Db, poolId: `0x${string}`, tick: number, netDelta: bigint, delta: bigint) {
  const id = `${poolId}-${tick}`;
  const prev = await db.find(poolTick, { id });
  const gross = (prev?.liquidityGross ?? 0n) + delta;
  if (gross === 0n) {
    if (prev) await db.delete(poolTick, { id });
    return;
  }
  const liquidityNet = (prev?.liquidityNet ?? 0n) + netDelta;
  if (prev) await db.update(poolTick, { id }).set({ liquidityNet, liquidityGross: gross });
  else await db.insert(poolTick).values({ id, poolId, tick, liquidityNet, liquidityGross: gross });
}

ponder.on("PoolManager:ProtocolFeeUpdated", async ({ event, context }) => {
  const { id, protocolFee } = event.args;
  const prev = await context.db.find(pool, { id });
  if (prev) await context.db.update(pool, { id }).set({ protocolFee });
});
