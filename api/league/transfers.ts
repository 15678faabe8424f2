import { zeroAddress, type PublicClient } from "viem";
import type { Config } from "../../lib/config.js";
import { transfersOf, type ChainTransfer } from "../../lib/league/chain.js";
import {
  NATIVE_MAX_FAILURES,
  NATIVE_UNREADABLE,
  NativeUnreadable,
  cannotAnswer,
  chainOrder,
  changedBlocksAcross,
  skippedReason,
  tracedBlockMoves,
  type NativeSkips,
} from "../../lib/league/native.js";
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
 * blocks after that (from `startBlock` for an address seen the first time). The last REORG_DEPTH blocks are
 * not kept for good: an address read in full keeps a tip (liveTips: the block it was read to, that block's hash,
 * the transfers above what is kept), and the next read asks only for the blocks after the tip while its hash
 * is unchanged (issue 29 point 6), from what is kept otherwise (a reorganisation). A read at a block below
 * what is kept answers from what is kept, cut at that block. A failed read throws (never a partial
 * answer): the caller's pass fails and is retried.
 */
export function createTransferLog(d: Pick<Common, "config" | "chain"> & { reader?: PublicClient }) {
  const tokens = linkTokens(d.config);
  const start = BigInt(d.config.startBlock);
  /** Address → the last block whose transfers touching it are all in `byAddress`. */
  const through = new Map<string, bigint>();
  const byAddress = new Map<string, Map<string, ChainTransfer>>();
  const times = new Map<number, Promise<number>>();
  /** Address → what its last read kept at the block it read to (issue 29 point 6: the next read starts there). */
  const tips = new Map<string, Tip>();
  const k: Tips = { tips, through, floor: start - 1n, keep: (t) => keep(t) };

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
    const keepUntil = toBlock - REORG_DEPTH;
    const hashOf = blockHashes(d.chain);
    // Where each address was read through: its tip where that block is still on the chain, else what is kept.
    const readTo = new Map(through);
    for (const [a, tip] of await liveTips(k, uniq, toBlock, hashOf)) readTo.set(a, tip.block);
    const out = new Map<string, ChainTransfer>();
    for (const [from, group] of unreadGroups(uniq, readTo, start, toBlock)) {
      const fresh = await transfersOf(d.chain, group, from, toBlock, tokens);
      for (const t of fresh) {
        out.set(keyOf(t), t);
        if (BigInt(t.block) <= keepUntil) keep(t);
      }
      // Everything from `from` to `toBlock` was read: kept up to `keepUntil` (never below what was kept).
      if (keepUntil >= from - 1n) for (const a of group) through.set(a, keepUntil);
      newTips(k, group, { toBlock, hash: await hashOf(toBlock), moves: fresh });
    }
    for (const a of uniq) {
      for (const t of byAddress.get(a)?.values() ?? []) if (BigInt(t.block) <= toBlock) out.set(keyOf(t), t);
      const tip = tips.get(a);
      if (tip && tip.block <= toBlock) for (const t of tip.moves) out.set(keyOf(t), t);
    }
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

/** Blocks traced at once. */
const PARALLEL = 4;
/**
 * Blocks one step of the native scan covers (the halving, then the traces of its changed blocks);
 * progress is kept after each.
 */
export const NATIVE_STEP_BLOCKS = 10_000n;
/** Blocks one read scans at most, all addresses together: the rest is scanned by the next reads (the next passes). */
export const NATIVE_BLOCKS_PER_READ = 200_000n;

/**
 * One try of the native scan: a pass's reads given the same try share its block budget, and a step or block that
 * fails counts one failure for the try however many of its reads meet it (a pass that reads again for more
 * addresses must not skip a block after fewer passes). A read given none is its own try.
 */
export type NativeTry = {
  budget: { left: bigint };
  /**
   * The failure keys this try has counted: kept on the try, not beside each key, so another try's read in between
   * (the settler's decision shares the log) cannot make this one count again (review, helper-38).
   */
  counted: Set<string>;
};
export const nativeTry = (): NativeTry => ({ budget: { left: NATIVE_BLOCKS_PER_READ }, counted: new Set() });

/** A native read's answer: the moves, and why they are not complete (rule LINKS flags either, never a pass). */
export type NativeRead = {
  transfers: ChainTransfer[];
  /** Final for this read: the node cannot trace, or blocks were skipped after failing NATIVE_MAX_FAILURES times. */
  unreadable: string | null;
  /** Not read through the block yet (the per-read bound, or a failure to try again): a decision waits for it. */
  behind: string | null;
  /** What was skipped (published with the season's books, so `league:verify` skips the same). */
  skipped: NativeSkips;
};

/**
 * The native ETH moves touching the league's addresses (lib/league/native: traces of the blocks
 * where an address's nonce or balance changed), read once like the logs: each address keeps its
 * moves and the last block they cover, and a read scans only the blocks after that: after its tip (the block
 * read to in full, guarded by that block's hash, with each address's nonce and balance there, so the next read
 * probes only the new end), or, when the tip's block was reorganised away, the last REORG_DEPTH again (issue 29
 * point 6). Bounded (issue 29 review, finding 2): one read scans at most
 * NATIVE_BLOCKS_PER_READ blocks in steps of NATIVE_STEP_BLOCKS, keeping its progress after each
 * step, and answers `behind` for the rest; a step or block that fails is tried again by the next
 * read (`behind`), and after NATIVE_MAX_FAILURES failures in a row it is skipped and answered as
 * `unreadable`, so one bad block neither stalls the scan nor passes silently. A node that cannot
 * trace or answer past balances answers `unreadable` and no move.
 */
function nativeLog(d: Pick<Common, "chain"> & { reader?: PublicClient }, start: bigint) {
  const st: NativeState = {
    reader: d.reader,
    through: new Map(),
    byAddress: new Map(),
    failures: new Map(),
    skipped: new Map(),
    tips: new Map(),
  };
  return async (addresses: string[], toBlock: bigint, attempt: NativeTry = nativeTry()): Promise<NativeRead> => {
    const uniq = [...new Set(addresses.map(lc))];
    const out = new Map<string, ChainTransfer>();
    const behind: string[] = [];
    const hashOf = blockHashes(d.chain);
    // Where each address was read through: its tip where that block is still on the chain, else what is kept.
    const readTo = new Map(st.through);
    const before = new Map<string, string>();
    const k: Tips = { tips: st.tips, through: st.through, floor: start - 1n, keep: (t) => keepNative(st, t) };
    for (const [a, tip] of await liveTips(k, uniq, toBlock, hashOf)) {
      readTo.set(a, tip.block);
      before.set(a, tip.state);
    }
    try {
      for (const [from, group] of unreadGroups(uniq, readTo, start, toBlock)) {
        const scan: GroupScan = { from, toBlock, attempt, before, after: null, moves: [] };
        const why = await scanGroup(d.chain, st, group, scan, out);
        if (why) behind.push(why);
        else newTips(k, group, { toBlock, hash: await hashOf(toBlock), moves: scan.moves, states: scan.after });
      }
    } catch (err) {
      if (err instanceof NativeUnreadable)
        return { transfers: [], unreadable: NATIVE_UNREADABLE, behind: null, skipped: { blocks: [], ranges: [] } };
      throw err;
    }
    for (const a of uniq) {
      for (const t of st.byAddress.get(a)?.values() ?? []) if (BigInt(t.block) <= toBlock) out.set(nativeKey(t), t);
      const tip = st.tips.get(a);
      if (tip && tip.block <= toBlock) for (const t of tip.moves) out.set(nativeKey(t), t);
    }
    const skips = skipsOf(st, new Set(uniq), toBlock);
    return {
      transfers: [...out.values()].sort(chainOrder),
      unreadable: skips.blocks.length || skips.ranges.length ? skippedReason(skips) : null,
      behind: behind.length ? behind.join("; ") : null,
      skipped: skips,
    };
  };
}

/** Each block's hash, read once per native read (null where the node did not answer: no tip is used or kept). */
function blockHashes(chain: PublicClient) {
  const memo = new Map<bigint, Promise<string | null>>();
  return (block: bigint) => {
    let h = memo.get(block);
    if (!h) {
      h = Promise.resolve()
        .then(() => chain.getBlock({ blockNumber: block }))
        .then(
          (b) => b.hash ?? null,
          () => null,
        );
      memo.set(block, h);
    }
    return h;
  };
}

/** What a read kept at the block it read `addresses` to in full, and how a move it found is kept once deep. */
type Tips = {
  tips: Map<string, Tip>;
  through: Map<string, bigint>;
  /** The block before the first one read (an address never read counts as read through it). */
  floor: bigint;
  keep: (t: ChainTransfer) => void;
};

/**
 * The tips of `addresses` a read at `toBlock` starts from: those whose block is still on the chain (the same
 * hash: a reorganisation below it changes it, and the tip is dropped, so the address is read again from what is
 * kept, as before tips). A tip's moves that are now REORG_DEPTH below `toBlock` are kept like any move read
 * that deep, and the address counts as read through there. A tip above `toBlock` (a read at an older block) is
 * left for the reads it serves.
 */
async function liveTips(k: Tips, addresses: string[], toBlock: bigint, hashOf: (b: bigint) => Promise<unknown>) {
  const keepUntil = toBlock - REORG_DEPTH;
  const live = new Map<string, Tip>();
  for (const a of addresses) {
    const tip = k.tips.get(a);
    if (!tip || tip.block > toBlock) continue;
    if ((await hashOf(tip.block)) !== tip.hash) {
      k.tips.delete(a);
      continue;
    }
    for (const t of tip.moves) if (BigInt(t.block) <= keepUntil) k.keep(t);
    tip.moves = tip.moves.filter((t) => BigInt(t.block) > keepUntil);
    const deep = keepUntil < tip.block ? keepUntil : tip.block;
    if (deep > (k.through.get(a) ?? k.floor)) k.through.set(a, deep);
    live.set(a, tip);
  }
  return live;
}

/**
 * After `group` was read through `toBlock` in full: each address's tip at `toBlock` (the block's hash, its state
 * there when `states` has it, the moves above what is kept: those of its tip before and those just read).
 */
function newTips(
  k: Tips,
  group: string[],
  o: { toBlock: bigint; hash: string | null; moves: ChainTransfer[]; states?: Map<string, string> | null },
) {
  const keepUntil = o.toBlock - REORG_DEPTH;
  for (const a of group) {
    const old = k.tips.get(a);
    if (old && old.block > o.toBlock) continue;
    const state = o.states === undefined ? "" : o.states?.get(a);
    if (!o.hash || state === undefined) {
      k.tips.delete(a);
      continue;
    }
    // A tip still present at or below `toBlock` was found live by this read (a dead one was dropped).
    const moves = [
      ...(old?.moves ?? []),
      ...o.moves.filter((t) => BigInt(t.block) > keepUntil && (t.from === a || t.to === a)),
    ];
    k.tips.set(a, { block: o.toBlock, hash: o.hash, state, moves });
  }
}

/** A move read at least REORG_DEPTH below the head: kept for both its ends. */
function keepNative(st: NativeState, t: ChainTransfer) {
  for (const a of [t.from, t.to]) {
    if (!st.byAddress.has(a)) st.byAddress.set(a, new Map());
    st.byAddress.get(a)!.set(nativeKey(t), t);
  }
}

const nativeKey = (t: ChainTransfer) => `${t.block}:${t.tx_index}:${t.log_index}`;

type NativeState = {
  /** Where given, the nonce probes go through it as JSON-RPC batches (lib/chain createBatchReader). */
  reader: PublicClient | undefined;
  /** Address → the last block whose native moves touching it are all in `byAddress`. */
  through: Map<string, bigint>;
  byAddress: Map<string, Map<string, ChainTransfer>>;
  /** A step (`state:<from>:<addresses>`) or block (`block:<n>`) → its failures in a row (one per try). */
  failures: Map<string, number>;
  /** What was skipped after failing too often, by its failure key. */
  skipped: Map<string, Skip>;
  /** Address → what its last full read kept at the block it read to (issue 29 point 6: the next read starts after). */
  tips: Map<string, Tip>;
};

/**
 * An address read in full through `block`: that block's hash (the guard: a reorganisation below it changes it), the
 * address's state there (`nonce:balance`, the next read's starting probe), and its moves above what is kept.
 */
type Tip = { block: bigint; hash: string; state: string; moves: ChainTransfer[] };
/** The logs' tips have no state (`state` is empty). */

/**
 * One group's read: from where, to where, within the read's budget; the states known at `from - 1` (tips), and
 * what it found: the states at `toBlock` (null unless its last step read them) and every move read.
 */
type GroupScan = {
  from: bigint;
  toBlock: bigint;
  attempt: NativeTry;
  before: Map<string, string>;
  after: Map<string, string> | null;
  moves: ChainTransfer[];
};

/** The skips that touch a read of `addresses` up to `toBlock`. */
function skipsOf(st: NativeState, addresses: Set<string>, toBlock: bigint): NativeSkips {
  const out: NativeSkips = { blocks: [], ranges: [] };
  for (const k of st.skipped.values()) {
    if (!k.addresses.some((a) => addresses.has(a))) continue;
    if (k.block !== undefined && BigInt(k.block) <= toBlock) out.blocks.push(k.block);
    else if (k.block === undefined && BigInt(k.from!) <= toBlock)
      out.ranges.push({ from: k.from!, to: k.to!, addresses: k.addresses });
  }
  out.blocks.sort((a, b) => a - b);
  return out;
}

/**
 * Scans one group of addresses from `from` in steps, keeping each step's moves and progress, until
 * `toBlock` or the read's budget; answers why it stopped short (null: read through `toBlock`).
 */
async function scanGroup(
  chain: PublicClient,
  st: NativeState,
  group: string[],
  o: GroupScan,
  out: Map<string, ChainTransfer>,
): Promise<string | null> {
  const keepUntil = o.toBlock - REORG_DEPTH;
  // The states known at the step's start: a tip's, then each step's end.
  let before = o.before;
  for (let lo = o.from; lo <= o.toBlock; ) {
    if (o.attempt.budget.left <= 0n)
      return (
        `native ETH moves of ${group.length} address(es) read through block ${lo - 1n} of ${o.toBlock} (at ` +
        `most ${NATIVE_BLOCKS_PER_READ} blocks per read; the rest next pass)`
      );
    const hi = lo + NATIVE_STEP_BLOCKS - 1n < o.toBlock ? lo + NATIVE_STEP_BLOCKS - 1n : o.toBlock;
    const step = await nativeStep(chain, st, group, lo, hi, before);
    before = step.failed ? new Map() : (step.after ?? new Map());
    if (hi === o.toBlock) o.after = step.after;
    for (const t of step.moves) {
      out.set(nativeKey(t), t);
      o.moves.push(t);
      if (BigInt(t.block) <= keepUntil) keepNative(st, t);
    }
    const kept = step.through < keepUntil ? step.through : keepUntil;
    if (kept >= lo - 1n) for (const a of group) st.through.set(a, kept);
    o.attempt.budget.left -= step.through - lo + 1n;
    if (!step.failed) {
      clearFailures(st.failures, step.traced, stateKey(lo, group));
      lo = hi + 1n;
      continue;
    }
    const { key, what, resume, skip, err } = step.failed;
    // Once per try (a count cleared by another group's trace of the block within the try starts again at this one).
    const was = st.failures.get(key) ?? 0;
    const n = o.attempt.counted.has(key) ? Math.max(was, 1) : was + 1;
    o.attempt.counted.add(key);
    st.failures.set(key, n);
    const said = (err as Error)?.message?.split("\n")[0] ?? String(err);
    if (n < NATIVE_MAX_FAILURES)
      return (
        `native ETH moves: ${what} could not be read (${n} of ${NATIVE_MAX_FAILURES} tries; read again next ` +
        `pass): ${said}`
      );
    // Skipped: flagged (never a pass), and the scan goes on past it.
    st.failures.delete(key);
    st.skipped.set(key, skip);
    if (resume - 1n <= keepUntil) for (const a of group) st.through.set(a, resume - 1n);
    lo = resume;
  }
  return null;
}

/**
 * A step read in full clears the failures counted on what it read (the blocks it traced, and its own state read):
 * "in a row" means in a row, so a node that fails now and then never adds up to a skip (each skip flags LINKS). Only
 * what it read: another group's step over the same range traces other blocks, and says nothing of a block that failed
 * (it cleared that block's count at every read, so the block was never skipped and the read never through).
 */
function clearFailures(failures: NativeState["failures"], traced: bigint[], state: string) {
  for (const b of traced) failures.delete(`block:${b}`);
  failures.delete(state);
}

/** The failure key of a group's state read in the step from `lo`. */
const stateKey = (lo: bigint, group: string[]) => `state:${lo}:${[...group].sort().join()}`;

type StepFailure = {
  key: string;
  what: string;
  resume: bigint;
  skip: Skip;
  err: unknown;
};
/** A skipped block (its trace failed) or range (the addresses' state could not be read), and the addresses it hid. */
type Skip = { block?: number; from?: number; to?: number; addresses: string[] };

/**
 * One step: the blocks in [lo, hi] where the group's state changed, then their traces in order.
 * Answers the moves read, the last block read in full, and the failure that ended it early.
 */
async function nativeStep(
  chain: PublicClient,
  st: NativeState,
  group: string[],
  lo: bigint,
  hi: bigint,
  before: Map<string, string>,
) {
  const set = new Set(group);
  const moves: ChainTransfer[] = [];
  let after: Map<string, string> | null = null;
  const fail = (err: unknown, f: Omit<StepFailure, "err">) => {
    if (cannotAnswer(err)) throw new NativeUnreadable(NATIVE_UNREADABLE, { cause: err });
    return { moves, through: lo - 1n, after, failed: { ...f, err } as StepFailure, traced: [] as bigint[] };
  };
  let blocks: bigint[];
  try {
    ({ blocks, after } = await changedBlocksAcross(chain, group, lo, hi, before, st.reader));
  } catch (err) {
    const key = stateKey(lo, group);
    const skip = { from: Number(lo), to: Number(hi), addresses: [...group].sort() };
    return fail(err, {
      key,
      what: `the state of ${group.length} address(es) in blocks ${lo}-${hi}`,
      resume: hi + 1n,
      skip,
    });
  }
  // A block skipped already is not traced again: the addresses it now hides are added to it.
  const todo = blocks.filter((b) => {
    const known = st.skipped.get(`block:${b}`);
    if (known) known.addresses = [...new Set([...known.addresses, ...group])].sort();
    return !known;
  });
  for (let i = 0; i < todo.length; i += PARALLEL) {
    const batch = todo.slice(i, i + PARALLEL);
    const traced = await Promise.allSettled(batch.map((b) => tracedBlockMoves(chain, b, set)));
    // In block order: the first failure ends the step there (what came after it is read again).
    for (const [j, t] of traced.entries()) {
      if (t.status === "fulfilled") moves.push(...t.value);
      else {
        const b = batch[j]!;
        const what = `the trace of block ${b}`;
        const skip = { block: Number(b), addresses: [...group].sort() };
        return { ...fail(t.reason, { key: `block:${b}`, what, resume: b + 1n, skip }), through: b - 1n };
      }
    }
  }
  return { moves, through: hi, after, failed: null as StepFailure | null, traced: todo };
}

/** Addresses grouped by the first block not yet kept for them (those already read through `toBlock` left out). */
function unreadGroups(addresses: string[], through: Map<string, bigint>, start: bigint, toBlock: bigint) {
  const groups = new Map<bigint, string[]>();
  for (const a of addresses) {
    const from = (through.get(a) ?? start - 1n) + 1n;
    if (from > toBlock) continue;
    // Pushed, not copied: a pass's thousands of addresses mostly share one `from` (a copy each was quadratic).
    const group = groups.get(from);
    if (group) group.push(a);
    else groups.set(from, [a]);
  }
  return groups;
}
