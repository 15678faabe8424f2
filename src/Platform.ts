import { ponder, type IndexingFunctionArgs } from "ponder:registry";
import { feeTransfer } from "ponder:schema";
import type { Address } from "viem";
import { loadConfig } from "../lib/config";

const config = loadConfig();
const tradeTargets = new Set(
  [config.contracts.universalRouter, config.contracts.delegationManager].map((a) => a.toLowerCase()),
);
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
    await context.db
      .insert(feeTransfer)
      .values({ id: `${event.transaction.hash}-${event.log.logIndex}-${direction}`, direction, ...base })
      .onConflictDoNothing();
  };
}

ponder.on("PlatformTokenIn:Transfer", bookTransfer("in"));
ponder.on("PlatformTokenOut:Transfer", bookTransfer("out"));
