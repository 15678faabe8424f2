import { ponder } from "ponder:registry";
import { curveToken, curveTrade } from "ponder:schema";

ponder.on("Launchpad:TokenLaunched", async ({ event, context }) => {
  const { token, creator, name, symbol, feeMode, virtualEth, virtualToken } = event.args;
  await context.db.insert(curveToken).values({
    token,
    creator,
    name,
    symbol,
    feeMode,
    virtualEth,
    virtualToken,
    graduated: false,
    trades: 0,
    launchedAt: event.block.timestamp,
    block: event.block.number,
    timestamp: event.block.timestamp,
  });
});

ponder.on("Launchpad:Trade", async ({ event, context }) => {
  const { token, trader, isBuy, ethAmount, tokenAmount, fee, virtualEth, virtualToken } = event.args;
  await context.db.insert(curveTrade).values({
    id: `${event.transaction.hash}-${event.log.logIndex}`,
    token,
    trader,
    isBuy,
    ethAmount,
    tokenAmount,
    fee,
    virtualEth,
    virtualToken,
    block: event.block.number,
    timestamp: event.block.timestamp,
    txHash: event.transaction.hash,
  });
  const prev = await context.db.find(curveToken, { token });
  if (prev) {
    await context.db.update(curveToken, { token }).set({
      virtualEth,
      virtualToken,
      trades: prev.trades + 1,
      block: event.block.number,
      timestamp: event.block.timestamp,
    });
  }
});

ponder.on("Launchpad:Graduated", async ({ event, context }) => {
  const prev = await context.db.find(curveToken, { token: event.args.token });
  if (prev) await context.db.update(curveToken, { token: event.args.token }).set({ graduated: true });
});
