import { LRUCache } from "lru-cache";
import type { PublicClient } from "viem";
import { onClock } from "../../lib/cacheClock.js";
import type { PoolBook } from "../../lib/localQuote.js";
import type { SqlIndexedReads } from "../ports/indexed.js";

/**
 * The chain's head and the indexer's pool book are each re-read at most this often per instance:
 * under load a quote reads neither (issue 31 point 2: no round trip for hookless routes); a quiet
 * instance reads both afresh for its next quote.
 */
export const BOOK_TTL_MS = 100;
/**
 * How far the book may trail the chain's head and still answer quotes: none on the devnet (it mines
 * a block per transaction, and a test's own trade must be seen by its next quote), two blocks on a
 * chain of ~10 blocks a second (the indexer polls every 100 ms). Past it, the V4Quoter answers.
 */
export const BOOK_MAX_LAG_BLOCKS = { devnet: 0, chain: 2 } as const;

/** The chain's head as last read: its number, time (unix s) and base fee. */
export type BookHead = { block: number; time: number; baseFee: bigint };
/** A fresh book and the head it was judged against. */
export type FreshBook = { book: PoolBook; head: BookHead };

export type BookDeps = {
  indexed: Pick<SqlIndexedReads, "poolBook">;
  chain: PublicClient;
  clock: () => number;
  devnet: boolean;
};

/**
 * The pool book to quote from (lib/localQuote), with the head it was judged against, when it is
 * fresh: the indexer's head at most BOOK_MAX_LAG_BLOCKS behind the chain's head as last read. null
 * when the indexer is further behind, has no checkpoint yet, or either read fails: then every route
 * goes to the V4Quoter, as before.
 */
export function createBookReader(d: BookDeps) {
  const fresh = { ttl: BOOK_TTL_MS, ...onClock(d.clock) };
  const heads = new LRUCache<"head", BookHead>({
    max: 1,
    ...fresh,
    fetchMethod: async () => {
      const b = await d.chain.getBlock({ blockTag: "latest" });
      return { block: Number(b.number), time: Number(b.timestamp), baseFee: b.baseFeePerGas ?? 0n };
    },
  });
  const books = new LRUCache<"book", { book: PoolBook | null }>({
    max: 1,
    ...fresh,
    fetchMethod: async () => ({ book: await d.indexed.poolBook() }),
  });
  const maxLag = d.devnet ? BOOK_MAX_LAG_BLOCKS.devnet : BOOK_MAX_LAG_BLOCKS.chain;
  return async function book(): Promise<FreshBook | null> {
    try {
      const [head, first] = await Promise.all([heads.fetch("head"), books.fetch("book")]);
      let b = first?.book ?? null;
      // A book read before the head moved may have caught up since: read it again once.
      if (b && head && b.block < head.block - maxLag) b = (await books.fetch("book", { forceRefresh: true }))!.book;
      return b && head && b.block >= head.block - maxLag ? { book: b, head } : null;
    } catch {
      return null;
    }
  };
}
