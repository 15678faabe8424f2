/**
 * Blocks after which what the chain shows is taken as final: Ponder 0.16's default finality for
 * chains it does not know (chain 4663 among them). One depth for every worker that acts on an
 * outcome (the relay watcher, the treasury's week closer, league payouts, the indexer's checkpoint):
 * a reorg above it could swap what mined, so nothing irreversible is done on a shallower receipt.
 */
export const FINALITY_BLOCKS = 30;

/** Whether what mined in `block` is `depth` blocks below `head` or deeper (final at that depth). */
export const isFinal = (head: bigint, block: bigint, depth = FINALITY_BLOCKS): boolean => head - block >= BigInt(depth);
