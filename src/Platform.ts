import { ponder, type IndexingFunctionArgs } from "ponder:registry";
import { feeTransfer } from "ponder:schema";
import { zeroAddress, type Address } from "viem";
import { loadConfig } from "../lib/config";

const config = loadConfig();
const tradeTargets = new Set([config.contracts.universalRouter, config.contracts.delegationManager].map((a) => a.toLowerCase()));
/** A transfer inside a router or delegation execution is a trade's fee; anything else is outside. */
const sourceOf = (txTo: Address | null) => (txTo && tradeTargets.has(txTo.toLowerCase()) ? "trade" : "outside");

function bookTransfer(direction: "in" | "out") {
  return async ({ event, context }: IndexingFunctionArgs<"PlatformTokenIn:Transfer">) => {
  const { from, to, value } = event.args;
  if (value === 0n) return;
  const base = {
    token: event.log.address,
    amount: value,
    from,
    to,
    source: sourceOf(event.transaction.to),
    method: "log",
    txHash: event.transaction.hash,
    block: event.block.number,
    timestamp: event.block.timestamp,
  };
  // A self-transfer matches both sources: booked once in each direction.
  await context.db.insert(feeTransfer).values({ id: `${event.transaction.hash}-${event.log.logIndex}-${direction}`, direction, ...base }).onConflictDoNothing();
  };
}

ponder.on("PlatformTokenIn:Transfer", bookTransfer("in"));
ponder.on("PlatformTokenOut:Transfer", bookTransfer("out"));

// Top-level ETH transfers: someone sends ETH to the platform wallet (outside any trade), or the
// platform wallet pays out (to the operations / buybacks / treasury buckets).
function bookEth(direction: "in" | "out") {
  return async ({ event, context }: IndexingFunctionArgs<"Platform:transaction:to">) => {
    const { value, hash, from, to } = event.transaction;
    if (value === 0n || !to) return;
    await context.db
      .insert(feeTransfer)
      .values({
        id: `${hash}-tx-${direction}`,
        direction,
        token: zeroAddress,
        amount: value,
        from,
        to,
        source: direction === "in" ? "outside" : sourceOf(to),
        method: "transaction",
        txHash: hash,
        block: event.block.number,
        timestamp: event.block.timestamp,
      })
      .onConflictDoNothing();
  };
}

ponder.on("Platform:transaction:to", bookEth("in"));
ponder.on("Platform:transaction:from", bookEth("out"));
