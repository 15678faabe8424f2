import { zeroAddress } from "viem";
import type { Config } from "../../lib/config.js";
import { transfersOf, type ChainTransfer } from "../../lib/league/chain.js";
import { NATIVE_UNREADABLE, NativeUnreadable, chainOrder, nativeTransfersOf } from "../../lib/league/native.js";
import { lc } from "../../lib/address.js";
import type { Common } from "../ports/common.js";

/**
 * Blocks this close to the newest block read are read again next time, never kept: a reorg of the
 * chain's tip changes nothing remembered. Far above any reorg of chain 4663 (an L2 whose blocks are
 * final once its sequencer posts them); a few dozen extra blocks per read are cheap.
 */
export const REORG_DEPTH = 64n;

const keyOf = (t: ChainTransfer) => `${t.block}:${t.log_index}`;

/** The tokens whose Transfer logs link owners: every configured ERC-20 (native ETH moves are read from traces). */
export const linkTokens = (config: Config) =>
  Object.values(config.tokens)
    .filter((t) => !t.native && t.address !== zeroAddress)
    .map((t) => lc(t.address));

/**
 * The league's Transfer logs (cluster links, the reserve's gains), read once: each address keeps
 * the transfers read for it and the last block they cover, and a read asks the chain only for the
 * blocks after that (from `startBlock` for an address seen the first time). A read at a block below
 * what is kept answers from what is kept, cut at that block. A failed read throws (never a partial
 * answer): the caller's pass fails and is retried.
 */
export function createTransferLog(d: Pick<Common, "config" | "chain">) {
  const tokens = linkTokens(d.config);
  const start = BigInt(d.config.startBlock);
  /** Address → the last block whose transfers touching it are all in `byAddress`. */
  const through = new Map<string, bigint>();
  const byAddress = new Map<string, Map<string, ChainTransfer>>();
  const times = new Map<number, Promise<number>>();

  function keep(t: ChainTransfer) {
    for (const a of [t.from, t.to]) {
      let m = byAddress.get(a);
      if (!m) byAddress.set(a, (m = new Map()));
      m.set(keyOf(t), t);
    }
  }

  /**
   * Every transfer of a link token into or out of `addresses` from the start block to `toBlock` (ordered by
   * block, then log).
   */
  async function read(addresses: string[], toBlock: bigint): Promise<ChainTransfer[]> {
    const uniq = [...new Set(addresses.map(lc))];
    const groups = unreadGroups(uniq, through, start, toBlock);
    const keepUntil = toBlock - REORG_DEPTH;
    const out = new Map<string, ChainTransfer>();
    for (const [from, group] of groups) {
      const fresh = await transfersOf(d.chain, group, from, toBlock, tokens);
      for (const t of fresh) {
        out.set(keyOf(t), t);
        if (BigInt(t.block) <= keepUntil) keep(t);
      }
      // Everything from `from` to `toBlock` was read: kept up to `keepUntil` (never below what was kept).
      if (keepUntil >= from - 1n) for (const a of group) through.set(a, keepUntil);
    }
    for (const a of uniq)
      for (const t of byAddress.get(a)?.values() ?? []) if (BigInt(t.block) <= toBlock) out.set(keyOf(t), t);
    return [...out.values()].sort((a, b) => a.block - b.block || a.log_index - b.log_index);
  }

  const native = nativeLog(d, BigInt(d.config.nativeFromBlock));
  return {
    read,
    native,
    /** A block's timestamp, read once per block (the reserve's gains are counted by block time). */
    blockTime(block: number): Promise<number> {
      let t = times.get(block);
      if (!t) {
        t = d.chain.getBlock({ blockNumber: BigInt(block) }).then((b) => Number(b.timestamp));
        times.set(block, t);
        t.catch(() => times.delete(block));
      }
      return t;
    },
  };
}

export type TransferLog = ReturnType<typeof createTransferLog>;

/**
 * The native ETH moves touching the league's addresses (lib/league/native: traces of the blocks
 * where an address's nonce or balance changed), read once like the logs: each address keeps its
 * moves and the last block they cover, and a read scans only the blocks after that (the last
 * REORG_DEPTH again). A node that cannot trace or answer past balances answers `unreadable` and no
 * move (rule LINKS flags); any other failure throws (the pass is retried).
 */
function nativeLog(d: Pick<Common, "chain">, start: bigint) {
  const through = new Map<string, bigint>();
  const byAddress = new Map<string, Map<string, ChainTransfer>>();
  const keyOf = (t: ChainTransfer) => `${t.block}:${t.tx_index}:${t.log_index}`;
  return async (
    addresses: string[],
    toBlock: bigint,
  ): Promise<{ transfers: ChainTransfer[]; unreadable: string | null }> => {
    const uniq = [...new Set(addresses.map(lc))];
    const groups = unreadGroups(uniq, through, start, toBlock);
    const keepUntil = toBlock - REORG_DEPTH;
    const out = new Map<string, ChainTransfer>();
    for (const [from, group] of groups) {
      let fresh: ChainTransfer[];
      try {
        fresh = await nativeTransfersOf(d.chain, group, from, toBlock);
      } catch (err) {
        if (err instanceof NativeUnreadable) return { transfers: [], unreadable: NATIVE_UNREADABLE };
        throw err;
      }
      for (const t of fresh) {
        out.set(keyOf(t), t);
        if (BigInt(t.block) > keepUntil) continue;
        for (const a of [t.from, t.to]) {
          if (!byAddress.has(a)) byAddress.set(a, new Map());
          byAddress.get(a)!.set(keyOf(t), t);
        }
      }
      if (keepUntil >= from - 1n) for (const a of group) through.set(a, keepUntil);
    }
    for (const a of uniq)
      for (const t of byAddress.get(a)?.values() ?? []) if (BigInt(t.block) <= toBlock) out.set(keyOf(t), t);
    return { transfers: [...out.values()].sort(chainOrder), unreadable: null };
  };
}

/** Addresses grouped by the first block not yet kept for them (those already read through `toBlock` left out). */
function unreadGroups(addresses: string[], through: Map<string, bigint>, start: bigint, toBlock: bigint) {
  const groups = new Map<bigint, string[]>();
  for (const a of addresses) {
    const from = (through.get(a) ?? start - 1n) + 1n;
    if (from <= toBlock) groups.set(from, [...(groups.get(from) ?? []), a]);
  }
  return groups;
}
