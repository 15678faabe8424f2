import { zeroAddress, type PublicClient } from "viem";
import { lc } from "./address.js";
import type { Config, TokenEntry } from "./config.js";
import { quoteExactInputSingle } from "./quoter.js";
import { poolId, type PoolKey } from "./v4.js";
import { quoteFromBook, type PoolBook } from "./localQuote.js";

/** A paper book: atoms (decimal strings) by lower-case token address. */
export type PaperBook = Record<string, string>;

/**
 * The configured hookless pool of the pair, where paper orders fill (hosted paper agents and the
 * league's practice board alike); null when the pair has none.
 */
export function paperPool(config: Pick<Config, "pools">, tin: TokenEntry, tout: TokenEntry): PoolKey | null {
  const pool = config.pools.find(
    (p) =>
      (lc(p.currency0) === lc(tin.address) && lc(p.currency1) === lc(tout.address)) ||
      (lc(p.currency0) === lc(tout.address) && lc(p.currency1) === lc(tin.address)),
  );
  return pool && lc(pool.hooks) === lc(zeroAddress) ? pool : null;
}

/**
 * Fills `amountIn` of `tin` on `book` at the V4Quoter's output for `pool` at `block`, after the fee
 * a live trade would pay (`feeBps`, taken from the input): deterministic, no randomness, so anyone
 * re-asking the quoter at that block gets the same fill. The one paper fill: hosted paper ticks and
 * the practice board's account orders both use it. Moves the book (the input out, the output in).
 * With the indexer's pool book `pools` at `block` the amount is computed from it (lib/localQuote,
 * equal to the wei to the quoter's at that block); a pool it cannot compute goes to the quoter.
 */
export async function fillAtQuote(
  chain: PublicClient,
  config: Pick<Config, "contracts">,
  f: { pool: PoolKey; tin: TokenEntry; tout: TokenEntry; amountIn: bigint; feeBps: number; block: bigint },
  book: PaperBook,
  pools: PoolBook | null = null,
): Promise<{ amountOut: bigint; feeAtoms: bigint }> {
  const held = BigInt(book[lc(f.tin.address)] ?? "0");
  if (f.amountIn <= 0n || f.amountIn > held) throw new RangeError(`a paper fill of ${f.amountIn} from ${held} held`);
  const feeAtoms = (f.amountIn * BigInt(f.feeBps)) / 10_000n;
  const zeroForOne = lc(f.pool.currency0) === lc(f.tin.address);
  const local =
    pools && BigInt(pools.block) === f.block
      ? await quoteFromBook(pools, [{ id: poolId(f.pool), zeroForOne }], f.amountIn - feeAtoms)
      : null;
  const amountOut =
    local?.[0] ??
    (await quoteExactInputSingle(chain, config.contracts.v4Quoter, f.pool, zeroForOne, f.amountIn - feeAtoms, f.block));
  book[lc(f.tin.address)] = (held - f.amountIn).toString();
  book[lc(f.tout.address)] = (BigInt(book[lc(f.tout.address)] ?? "0") + amountOut).toString();
  return { amountOut, feeAtoms };
}
