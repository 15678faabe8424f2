import { LRUCache } from "lru-cache";
import type { Hex, PublicClient } from "viem";
import { onClock } from "../../lib/cacheClock.js";
import { lc } from "../../lib/address.js";
import { preloadSwapMath, type BookPool, type PoolBook } from "../../lib/localQuote.js";
import type { SqlIndexedReads } from "../ports/indexed.js";

/**
 * The chain's head, and the pools a quote reads from the indexer's book, are each re-read at most this often per
 * instance: under load a quote reads neither (issue 31 point 2: no round trip for hookless routes). So a local
 * quote answers from a state up to this old plus the indexer's lag behind the head (below), like any quote a moment
 * old; a plan is never built on it (api/trading/evaluate.ts).
 */
export const BOOK_TTL_MS = 100;
/**
 * How far the book may trail the chain's head as last read and still answer quotes: none on the devnet (it mines a
 * block per transaction), two blocks on a chain of ~10 blocks a second (the indexer polls every 100 ms). Past it, the
 * V4Quoter answers.
 */
export const BOOK_MAX_LAG_BLOCKS = { devnet: 0, chain: 2 } as const;

/** The chain's head as last read: its number, time (unix s) and base fee. */
export type BookHead = { block: number; time: number; baseFee: bigint };
/** A fresh book of the pools asked for (those the indexer holds) and the head it was judged against. */
export type FreshBook = { book: PoolBook; head: BookHead };

export type BookDeps = {
  indexed: Pick<SqlIndexedReads, "poolBook">;
  chain: PublicClient;
  clock: () => number;
  devnet: boolean;
};

/** Pools read at one checkpoint (null: not in the indexer's book), and when they were read. */
type Kept = { book: PoolBook; held: Map<string, boolean>; readAt: number };

/**
 * The pools `ids` to quote from (lib/localQuote), with the head they were judged against, when fresh: read at one
 * indexer checkpoint at most BOOK_MAX_LAG_BLOCKS behind the chain's head as last read. Only the pools asked for are
 * read (a quote's routes, a fill's pool), each kept for BOOK_TTL_MS while the checkpoint holds; pools read at a newer
 * checkpoint replace them all, so a book never mixes two blocks. null when the indexer is further behind, has no
 * checkpoint yet, or a read fails: then every route goes to the V4Quoter, as before.
 */
export function createBookReader(d: BookDeps) {
  preloadSwapMath();
  const heads = new LRUCache<"head", BookHead>({
    max: 1,
    ttl: BOOK_TTL_MS,
    ...onClock(d.clock),
    fetchMethod: async () => {
      const b = await d.chain.getBlock({ blockTag: "latest" });
      return { block: Number(b.number), time: Number(b.timestamp), baseFee: b.baseFeePerGas ?? 0n };
    },
  });
  const maxLag = d.devnet ? BOOK_MAX_LAG_BLOCKS.devnet : BOOK_MAX_LAG_BLOCKS.chain;
  let kept: Kept | null = null;
  const read = async (ids: readonly Hex[]): Promise<Kept | null> => {
    const book = await d.indexed.poolBook(ids);
    return book && { book, held: new Map(ids.map((id) => [lc(id), book.pools.has(lc(id))])), readAt: d.clock() };
  };
  /** `ids` read at one checkpoint: from `kept` where it holds them and is young, the rest read and added to it. */
  const poolsOf = async (ids: readonly Hex[]): Promise<Kept | null> => {
    const k = kept && d.clock() - kept.readAt < BOOK_TTL_MS ? kept : null;
    const missing = ids.filter((id) => !k?.held.has(lc(id)));
    if (k && !missing.length) return k;
    const got = await read(k ? missing : ids);
    if (!got) return null;
    if (k && got.book.block === k.book.block) {
      for (const [id, p] of got.book.pools) k.book.pools.set(id, p);
      for (const [id, h] of got.held) k.held.set(id, h);
      return k;
    }
    // A new checkpoint: what was kept is of another block; the pools asked for are read again together.
    kept = k ? await read(ids) : got;
    return kept;
  };
  return async function book(ids: readonly Hex[]): Promise<FreshBook | null> {
    try {
      const [head, k] = await Promise.all([heads.fetch("head"), poolsOf(ids)]);
      if (!head || !k || k.book.block < head.block - maxLag) return null;
      const pools = new Map<string, BookPool>();
      for (const id of ids) {
        const p = k.book.pools.get(lc(id));
        if (p) pools.set(lc(id), p);
      }
      return { book: { block: k.book.block, timestamp: k.book.timestamp, pools }, head };
    } catch {
      return null;
    }
  };
}
