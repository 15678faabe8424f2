/**
 * Native ETH moves among the league's addresses (issue 29, point 1): ETH leaves no log, so the
 * moves are read from the node's call traces (`debug_traceBlockByNumber` with `callTracer`: an
 * Arbitrum Nitro node answers it, anvil too; `trace_filter` is not a Nitro API), over only the
 * blocks where an address's state changed.
 *
 * Which blocks: an address's nonce only grows, and an address without code cannot lose ETH
 * without sending a transaction (which moves its nonce; setting code moves it too). So between
 * two blocks with the same nonce and balance nothing came in or went out; where they differ, the
 * interval is halved until each change is one block (`eth_getTransactionCount` and `eth_getBalance`
 * at past blocks: an archive node). Each such block is traced once and every value-carrying call
 * that did not revert, nested ones included, is kept when it touches one of the addresses.
 *
 * Limit: an address with code (an EIP-7702 delegation) can send ETH in another account's
 * transaction; ETH that comes in and goes out again between two probes without its nonce moving
 * is not seen. The probes are the range's ends and the halvings, so a move inside a range whose
 * ends look alike is missed.
 */
import type { Hex, PublicClient, SignedAuthorization } from "viem";
import { lc } from "../address.js";
import { RPC_BATCH_SIZE } from "../chain.js";
import { recoverAuthorizationAddress } from "../secp.js";
import type { ChainTransfer } from "./chain.js";

/** The token named for native ETH in a link's evidence (ETH's configured address). */
export const NATIVE_TOKEN = "0x0000000000000000000000000000000000000000";

/** A callTracer frame (geth's shape; Nitro and anvil answer it). */
export type CallFrame = {
  type: string;
  from: string;
  to?: string;
  value?: string;
  error?: string;
  calls?: CallFrame[];
};

/** Frames whose `value` is not moved: a delegatecall shows its caller's, a staticcall none, a callcode its own. */
const NO_MOVE = new Set(["DELEGATECALL", "STATICCALL", "CALLCODE"]);

/**
 * The ETH a transaction's trace moved to or from `addresses`, in call order: every frame with a
 * value above zero whose frame and parents did not revert (a reverted frame moved nothing, nor did
 * its children). Native transfers sort before the transaction's logs (`log_index` below zero).
 */
export function nativeMovesOf(
  frame: CallFrame,
  at: { tx_hash: string; block: number; tx_index: number },
  addresses: Set<string>,
): ChainTransfer[] {
  const out: ChainTransfer[] = [];
  let seq = 0;
  const walk = (f: CallFrame) => {
    if (f.error) return;
    const value = f.value ? BigInt(f.value) : 0n;
    const [from, to] = [lc(f.from), lc(f.to ?? NATIVE_TOKEN)];
    if (value > 0n && !NO_MOVE.has(f.type.toUpperCase()) && from !== to && (addresses.has(from) || addresses.has(to)))
      out.push({ from, to, token: NATIVE_TOKEN, amount: value, ...at, log_index: -1_000_000 + seq });
    seq++;
    for (const c of f.calls ?? []) walk(c);
  };
  walk(frame);
  return out;
}

/** The node cannot answer what native links need (no tracer, or no past state): the rule is flagged, never passed. */
export class NativeUnreadable extends Error {}
/** Why, in the rule's reason: the same words whoever reads (the service, `league:verify`), whatever the node said. */
export const NATIVE_UNREADABLE =
  "the node does not answer debug_traceBlockByNumber (callTracer) or past balances: native ETH links were not read";

/** Whether `err` says the node lacks the method or the past state (as opposed to a failed request, retried). */
export function cannotAnswer(err: unknown): boolean {
  const seen: unknown[] = [];
  for (let e = err as { code?: unknown; cause?: unknown } | undefined; e && !seen.includes(e); e = e.cause as never) {
    seen.push(e);
    if (e.code === -32601 || e.code === -32004) return true;
  }
  return /does not exist|not available|not supported|method not found|missing trie node|historical state|pruned/i.test(
    String((err as Error)?.message ?? err),
  );
}

/** Runs `f` over `items`, `n` at a time. */
async function eachLimited<T>(items: T[], n: number, f: (x: T) => Promise<void>) {
  let i = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (i < items.length) await f(items[i++]!);
    }),
  );
}

/** An address's state at a block: its nonce and balance (block -1: before the chain, nothing). */
async function stateAt(chain: PublicClient, address: string, block: bigint): Promise<string> {
  if (block < 0n) return "0:0";
  const a = address as `0x${string}`;
  const [nonce, balance] = await Promise.all([
    chain.getTransactionCount({ address: a, blockNumber: block }),
    chain.getBalance({ address: a, blockNumber: block }),
  ]);
  return `${nonce}:${balance}`;
}

/** Balances read through one Multicall3 call at most this many at a time (the eth_call's calldata and gas). */
const BALANCES_PER_CALL = 1_000;
/** Nonces asked through the batch reader at once: its batches of RPC_BATCH_SIZE, NONCE_BATCHES_AT_ONCE of them. */
const NONCE_BATCHES_AT_ONCE = 2;
export const NONCES_AT_ONCE = RPC_BATCH_SIZE * NONCE_BATCHES_AT_ONCE;
/** Reads one by one in flight at once: nonces without a batch reader (or past it), balances without Multicall3. */
const SINGLE_READS_AT_ONCE = 16;

/**
 * The nonces of `addresses` at `block`: NONCES_AT_ONCE at a time through `reader` (lib/chain createBatchReader:
 * JSON-RPC batches), else, or for those left when a batch fails for any reason, SINGLE_READS_AT_ONCE at a time
 * through `chain`: those reads decide whether the node lacks the state (a refusal of batches may be worded like
 * missing state: "batch requests are not supported").
 */
async function noncesAt(chain: PublicClient, reader: PublicClient | undefined, addresses: string[], block: bigint) {
  const one = (c: PublicClient, a: string) =>
    c.getTransactionCount({ address: a as `0x${string}`, blockNumber: block });
  const out = new Map<string, number>();
  if (reader && addresses.length > 1) {
    try {
      // NONCE_BATCHES_AT_ONCE batches in flight: all at once, a season's thousands of wallets were dozens of batches
      // of past state at the node together.
      for (let i = 0; i < addresses.length; i += NONCES_AT_ONCE) {
        const part = addresses.slice(i, i + NONCES_AT_ONCE);
        const all = await Promise.all(part.map((a) => one(reader, a)));
        for (const [j, a] of part.entries()) out.set(a, all[j]!);
      }
      return out;
    } catch {
      // The rest read one by one below: the parts the batches answered stand.
    }
  }
  const rest = addresses.filter((a) => !out.has(a));
  await eachLimited(rest, SINGLE_READS_AT_ONCE, async (a) => void out.set(a, await one(chain, a)));
  return out;
}

/**
 * Balances of `addresses` at `block` through Multicall3's getEthBalance (one eth_call per BALANCES_PER_CALL): the
 * same numbers as eth_getBalance, in a few requests instead of one per address. Null when the chain names no
 * Multicall3 or the call did not answer for another reason than missing state (the caller reads one by one).
 */
async function balancesAt(chain: PublicClient, addresses: string[], block: bigint) {
  const multicall3 = chain.chain?.contracts?.multicall3?.address;
  if (!multicall3 || typeof chain.multicall !== "function") return null;
  const out = new Map<string, bigint>();
  try {
    for (let i = 0; i < addresses.length; i += BALANCES_PER_CALL) {
      const part = addresses.slice(i, i + BALANCES_PER_CALL);
      const res = await chain.multicall({
        contracts: part.map((a) => ({ ...GET_ETH_BALANCE, address: multicall3, args: [a as `0x${string}`] }) as const),
        blockNumber: block,
        allowFailure: false,
        batchSize: 0,
      });
      for (const [j, a] of part.entries()) out.set(a, res[j] as bigint);
    }
  } catch (err) {
    // A node without the past state says so here too: that is final (NativeUnreadable), not a reason to retry.
    if (cannotAnswer(err)) throw err;
    return null;
  }
  return out;
}

/** Multicall3's getEthBalance(address): the balance at the call's block. */
const GET_ETH_BALANCE = {
  abi: [
    {
      type: "function",
      name: "getEthBalance",
      stateMutability: "view",
      inputs: [{ name: "addr", type: "address" }],
      outputs: [{ name: "balance", type: "uint256" }],
    },
  ],
  functionName: "getEthBalance",
} as const;

/**
 * The state (`nonce:balance`, as stateAt) of each of `addresses` at `block`: balances in one Multicall3 call (see
 * balancesAt; one eth_getBalance each where it cannot answer), nonces through `reader`'s batches (see noncesAt).
 */
export async function statesAt(
  chain: PublicClient,
  addresses: string[],
  block: bigint,
  reader?: PublicClient,
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (block < 0n) {
    for (const a of addresses) out.set(a, "0:0");
    return out;
  }
  const [balances, nonces] = await Promise.all([
    balancesOf(chain, addresses, block),
    noncesAt(chain, reader, addresses, block),
  ]);
  for (const a of addresses) out.set(a, `${nonces.get(a)}:${balances.get(a)}`);
  return out;
}

/**
 * Runtime code for eth_call's state override: for each 32-byte word of calldata (an address), its BALANCE and its
 * EXTCODEHASH, as two words of the answer. A loop of 42 bytes: PUSH1 0; loop: while calldatasize > i { a =
 * calldataload(i); mstore(2i, balance(a)); mstore(2i + 32, extcodehash(a)); i += 32 }; return(0, 2 * calldatasize).
 */
const BALANCE_AND_CODE: Hex = "0x60005b80361115602257803580318260011b523f8160011b602001526020016002565b3660011b6000f3";
/** Where the override puts it: an address with no code or key of its own on any chain we read. */
const PROBE_ADDRESS: Hex = "0x000000000000000000000000000000000050be01";
/** EXTCODEHASH of an account without code: keccak256 of nothing (0 when the account does not exist). */
const NO_CODE = "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470";

/**
 * Each address's balance at `block` and whether it has code there (a contract, or an EIP-7702 delegation), in one
 * eth_call per BALANCES_PER_CALL with BALANCE_AND_CODE put at PROBE_ADDRESS. Null where the call fails for any
 * reason (a node without state overrides, or without the past state): the caller probes every nonce, as before, and
 * those probes tell a node without the state.
 */
async function balancesAndCodeAt(chain: PublicClient, addresses: string[], block: bigint) {
  const out = new Map<string, { balance: bigint; code: boolean }>();
  try {
    for (let i = 0; i < addresses.length; i += BALANCES_PER_CALL) {
      const part = addresses.slice(i, i + BALANCES_PER_CALL);
      const { data } = await chain.call({
        to: PROBE_ADDRESS,
        data: `0x${part.map((a) => a.slice(2).toLowerCase().padStart(64, "0")).join("")}`,
        blockNumber: block,
        stateOverride: [{ address: PROBE_ADDRESS, code: BALANCE_AND_CODE }],
      });
      if (!data || data.length !== 2 + part.length * 128) return null;
      for (const [j, a] of part.entries()) {
        const at = 2 + j * 128;
        const hash = data.slice(at + 64, at + 128);
        out.set(a, { balance: BigInt(`0x${data.slice(at, at + 64)}`), code: !/^0+$/.test(hash) && hash !== NO_CODE });
      }
    }
  } catch {
    // Whatever it says (a node without overrides may word it like missing state), the probes decide: statesAt.
    return null;
  }
  return out;
}

/**
 * The transaction types whose only nonce moves are the sender's and its EIP-7702 authorities': legacy, EIP-2930,
 * EIP-1559, EIP-4844, EIP-7702, and Arbitrum Nitro's internal transaction (0x6a), first in every block of chain 4663:
 * ArbOS's own, from its address, moving no account's nonce. Arbitrum's other types (deposits, retryables: 0x64-0x69)
 * probe every nonce.
 */
const PLAIN_TYPES = new Set(["0x0", "0x1", "0x2", "0x3", "0x4", "0x6a"]);
/** At most this many blocks are read for their senders; a longer range probes every nonce (fewer requests). */
const SENDER_BLOCKS_MAX = 32n;

/**
 * The accounts whose nonce a transaction in [from, to] can have moved without having code: each sender and each
 * EIP-7702 authority (recovered from its signature), and the hash of block `to` as read. Null when a block holds a
 * transaction of another type (an Arbitrum deposit or retry: the caller probes every nonce), an EIP-7702 transaction
 * without its authorizations (a node that left them out), or an authorization whose signer cannot be recovered.
 */
async function nonceMoversIn(chain: PublicClient, from: bigint, to: bigint) {
  const blocks: bigint[] = [];
  for (let b = from; b <= to; b++) blocks.push(b);
  const movers = new Set<string>();
  let plain = true;
  let hash: string | null = null;
  await eachLimited(blocks, PARALLEL, async (b) => {
    const block = await chain.getBlock({ blockNumber: b, includeTransactions: true });
    if (b === to) hash = block.hash;
    for (const tx of block.transactions) {
      // The type as the node sent it: viem names only the types it knows.
      if (!PLAIN_TYPES.has(tx.typeHex ?? "")) plain = false;
      movers.add(lc(tx.from));
      const auths = (tx as { authorizationList?: SignedAuthorization[] }).authorizationList;
      if (tx.typeHex === "0x4" && !auths?.length) plain = false;
      for (const auth of auths ?? []) {
        const signer = await recoverAuthorizationAddress({ authorization: auth }).catch(() => null);
        if (signer) movers.add(lc(signer));
        else plain = false;
      }
    }
  });
  return plain && hash ? { movers, hash: hash as string } : null;
}

/**
 * The state (`nonce:balance`) of each of `addresses` at `to`, where `before` has each one's state at `from - 1`: an
 * account's nonce moves only when it sends a transaction, signs an EIP-7702 authorization that a transaction carries,
 * creates a contract (it has code: a contract, or an EIP-7702 delegation), or is itself created (from nonce 0 to 1,
 * even with empty code); it never falls (SELFDESTRUCT removes an account only in the transaction that created it:
 * EIP-6780, in force on every chain with EIP-7702). So only the senders and authorities of the blocks in between
 * (nonceMoversIn), the accounts with code at `to` (balancesAndCodeAt, with every balance), those at nonce 0 before
 * and those not in `before` are probed; the others keep their nonce. Every nonce is probed (statesAt) over more than
 * SENDER_BLOCKS_MAX blocks, or where the node takes no state override or a block holds another type of transaction.
 */
export async function statesAfter(
  chain: PublicClient,
  addresses: string[],
  from: bigint,
  to: bigint,
  before: Map<string, string>,
  reader?: PublicClient,
): Promise<Map<string, string>> {
  if (to - from + 1n > SENDER_BLOCKS_MAX || !addresses.some((a) => before.has(a)))
    return statesAt(chain, addresses, to, reader);
  const [found, read] = await Promise.all([
    balancesAndCodeAt(chain, addresses, to),
    nonceMoversIn(chain, from, to).catch(() => null),
  ]);
  if (!found || !read) return statesAt(chain, addresses, to, reader);
  const movers = read.movers;
  const nonceBefore = (a: string) => before.get(a)?.split(":")[0];
  const probe = addresses.filter((a) => {
    const n = nonceBefore(a);
    return n === undefined || n === "0" || movers.has(a) || found.get(a)!.code;
  });
  const nonces = probe.length ? await noncesAt(chain, reader, probe, to) : new Map<string, number>();
  // The blocks read are still the chain's (a reorganisation meanwhile: the senders were another fork's).
  if ((await chain.getBlock({ blockNumber: to }).catch(() => null))?.hash !== read.hash)
    return statesAt(chain, addresses, to, reader);
  const out = new Map<string, string>();
  for (const a of addresses) {
    const nonce = nonces.get(a) ?? Number(nonceBefore(a));
    out.set(a, `${nonce}:${found.get(a)!.balance}`);
  }
  return out;
}

/** The balances of `addresses` at `block`: through Multicall3 (balancesAt), else one by one (SINGLE_READS_AT_ONCE). */
async function balancesOf(chain: PublicClient, addresses: string[], block: bigint) {
  const all = addresses.length > 1 ? await balancesAt(chain, addresses, block) : null;
  if (all) return all;
  const out = new Map<string, bigint>();
  await eachLimited(addresses, SINGLE_READS_AT_ONCE, async (a) => {
    out.set(a, await chain.getBalance({ address: a as `0x${string}`, blockNumber: block }));
  });
  return out;
}

/**
 * The blocks in [from, to] where `address`'s nonce or balance changed, by halving intervals whose ends differ
 * (`ends`: its states at from - 1 and at to, when already read).
 */
export async function changedBlocks(
  chain: PublicClient,
  address: string,
  from: bigint,
  to: bigint,
  ends?: [string, string],
) {
  const out: bigint[] = [];
  const split = async (lo: bigint, slo: string, hi: bigint, shi: string): Promise<void> => {
    if (slo === shi) return;
    if (hi - lo === 1n) return void out.push(hi);
    const mid = (lo + hi) / 2n;
    const smid = await stateAt(chain, address, mid);
    await split(lo, slo, mid, smid);
    await split(mid, smid, hi, shi);
  };
  if (from <= to) {
    const [a, b] = ends ?? (await Promise.all([stateAt(chain, address, from - 1n), stateAt(chain, address, to)]));
    await split(from - 1n, a, to, b);
  }
  return out;
}

type TracedTx = { txHash?: string; result?: CallFrame; error?: string };

/** The ETH moves in `block` touching `addresses` (one debug_traceBlockByNumber with callTracer). */
export async function tracedBlockMoves(chain: PublicClient, block: bigint, addresses: Set<string>) {
  const rows = (await chain.request({
    method: "debug_traceBlockByNumber" as never,
    params: [`0x${block.toString(16)}`, { tracer: "callTracer" }] as never,
  })) as TracedTx[];
  // Older nodes leave out the hash: the block's transactions are in the trace's order.
  const hashes = rows.some((r) => !r.txHash) ? (await chain.getBlock({ blockNumber: block })).transactions : [];
  const out: ChainTransfer[] = [];
  for (const [i, r] of rows.entries()) {
    if (!r.result) throw new Error(`block ${block}: transaction ${i} was not traced (${r.error ?? "no result"})`);
    const tx_hash = r.txHash ?? (hashes[i] as string | undefined);
    if (!tx_hash) throw new Error(`block ${block}: transaction ${i} has no hash`);
    out.push(...nativeMovesOf(r.result, { tx_hash: lc(tx_hash), block: Number(block), tx_index: i }, addresses));
  }
  return out;
}

/** At most this many addresses scanned, or blocks traced, at once. */
const PARALLEL = 4;

/**
 * The blocks in [from, to] where any of `addresses` changed nonce or balance, in order, and each address's state
 * at `to` (a kept scan starts the next one from it). The ends are read for all addresses at once (statesAt; those
 * in `before` are known at from - 1); only an address whose ends differ is halved (PARALLEL at once).
 */
export async function changedBlocksAcross(
  chain: PublicClient,
  addresses: string[],
  from: bigint,
  to: bigint,
  before: Map<string, string> = new Map(),
  reader?: PublicClient,
) {
  const blocks = new Set<bigint>();
  if (from > to) return { blocks: [] as bigint[], after: new Map(before) };
  const unknown = addresses.filter((a) => !before.has(a));
  const [lo, after] = await Promise.all([
    statesAt(chain, unknown, from - 1n, reader),
    statesAfter(chain, addresses, from, to, before, reader),
  ]);
  const startOf = (a: string) => before.get(a) ?? lo.get(a)!;
  const moved = addresses.filter((a) => startOf(a) !== after.get(a));
  await eachLimited(moved, PARALLEL, async (a) => {
    for (const b of await changedBlocks(chain, a, from, to, [startOf(a), after.get(a)!])) blocks.add(b);
  });
  return { blocks: [...blocks].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)), after };
}

/** The blocks in [from, to] where any of `addresses` changed nonce or balance, in order. */
export async function changedBlocksOf(
  chain: PublicClient,
  addresses: string[],
  from: bigint,
  to: bigint,
  reader?: PublicClient,
) {
  return (await changedBlocksAcross(chain, addresses, from, to, new Map(), reader)).blocks;
}

/**
 * Every native ETH move touching `addresses` in [from, to] (per address: its changed blocks,
 * each block traced once), ordered by block, transaction and call. Throws NativeUnreadable when
 * the node cannot answer (no tracer, no past state); any other failure throws as is (retried).
 */
export async function nativeTransfersOf(
  chain: PublicClient,
  addresses: string[],
  from: bigint,
  to: bigint,
  reader?: PublicClient,
): Promise<ChainTransfer[]> {
  const uniq = [...new Set(addresses.map(lc))].sort();
  const set = new Set(uniq);
  try {
    const blocks = await changedBlocksOf(chain, uniq, from, to, reader);
    const out: ChainTransfer[] = [];
    await eachLimited(blocks, PARALLEL, async (b) => void out.push(...(await tracedBlockMoves(chain, b, set))));
    return out.sort(chainOrder);
  } catch (err) {
    if (cannotAnswer(err)) throw new NativeUnreadable(NATIVE_UNREADABLE, { cause: err });
    throw err;
  }
}

/**
 * What a bounded scan left unread after failing NATIVE_MAX_FAILURES times in a row (published with
 * the season's books): blocks whose trace failed, and ranges where the state of some addresses
 * could not be read (the blocks they changed in are unknown).
 */
export type NativeSkips = { blocks: number[]; ranges: { from: number; to: number; addresses: string[] }[] };

/** A scan step's (or block's) failures in a row before it is skipped and rule LINKS flags it. */
export const NATIVE_MAX_FAILURES = 3;

/** Rule LINKS's reason for skipped reads (the same words whoever reads: the service, `league:verify`). */
export const skippedReason = (k: NativeSkips) =>
  `native ETH moves not read after ${NATIVE_MAX_FAILURES} failed tries: ` +
  [
    ...k.blocks.map((b) => `the trace of block ${b}`),
    ...k.ranges.map((r) => `the state of ${r.addresses.length} address(es) in blocks ${r.from}-${r.to}`),
  ].join(", ");

/**
 * The moves a full read finds that the bounded scan with `skips` saw too (`league:verify` recomputes
 * the service's links): none in a skipped block, and in a skipped range only a move with an
 * endpoint among the addresses whose state was read there (its other scan traced the block).
 */
export function seenDespite(moves: ChainTransfer[], skips: NativeSkips, addresses: Set<string>): ChainTransfer[] {
  const blocks = new Set(skips.blocks);
  const skipped = (a: string, block: number) =>
    skips.ranges.some((r) => block >= r.from && block <= r.to && r.addresses.includes(a));
  return moves.filter(
    (m) => !blocks.has(m.block) && [m.from, m.to].some((a) => addresses.has(a) && !skipped(a, m.block)),
  );
}

/** Chain order: block, transaction, then the call or log within it. */
export const chainOrder = (
  a: Pick<ChainTransfer, "block" | "tx_index" | "log_index">,
  b: Pick<ChainTransfer, "block" | "tx_index" | "log_index">,
) => a.block - b.block || (a.tx_index ?? 0) - (b.tx_index ?? 0) || a.log_index - b.log_index;
