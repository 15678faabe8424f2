import { ponder } from "ponder:registry";
import { feed, feedRound } from "ponder:schema";

ponder.on("Feed:AnswerUpdated", async ({ event, context }) => {
  const { current, roundId, updatedAt } = event.args;
  const address = event.log.address;
  await context.db
    .insert(feedRound)
    .values({
      feed: address,
      roundId,
      answer: current,
      updatedAt,
      block: event.block.number,
      timestamp: event.block.timestamp,
      txHash: event.transaction.hash,
    })
    .onConflictDoUpdate({ answer: current, updatedAt, block: event.block.number });
  await context.db
    .insert(feed)
    .values({ address, roundId, answer: current, updatedAt, block: event.block.number })
    .onConflictDoUpdate((row) =>
      roundId >= row.roundId ? { roundId, answer: current, updatedAt, block: event.block.number } : {},
    );
});
