import { erc20Abi, getAddress, zeroAddress, type Address, type Hex, type PublicClient } from "viem";
import { fencedRead } from "../../lib/chain.js";
import type { SqlIndexedReads } from "../ports/indexed.js";
import type { Week } from "./week.js";
import { lc } from "../../lib/address.js";

/** The week's first block (timestamp >= start) and last (timestamp < end); null when no block fell in it. */
export type WeekBlocks = { first: number | null; last: number | null };

/** Binary search over block headers: 2 log2(head) reads, once per closed week. */
export async function weekBlocks(chain: PublicClient, week: Week, head: number): Promise<WeekBlocks> {
  const seen = new Map<number, number>();
  const ts = async (n: number) => {
    if (!seen.has(n)) seen.set(n, Number((await chain.getBlock({ blockNumber: BigInt(n) })).timestamp));
    return seen.get(n)!;
  };
  /** The lowest block with timestamp >= t, or head + 1. */
  const lowerBound = async (t: number) => {
    let lo = 0;
    let hi = head + 1;
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      if ((await ts(mid)) >= t) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  };
  const first = await lowerBound(week.start);
  const last = (await lowerBound(week.end)) - 1;
  return first <= last ? { first, last } : { first: null, last: null };
}

/** What reached the platform wallet for one token in a week: from trades, and from anywhere else. */
export type Flow = { received: bigint; trades: Set<string>; outside: bigint; outsideTxs: Set<string> };
export const newFlow = (): Flow => ({ received: 0n, trades: new Set(), outside: 0n, outsideTxs: new Set() });

/**
 * ERC-20 flows from the indexer's Transfer logs to the wallet: `trade` when the transaction went
 * to the router or the DelegationManager, else `outside`. The wallet paying itself is not income.
 */
export async function erc20Flows(indexed: SqlIndexedReads, platform: Address, week: Week): Promise<Map<Address, Flow>> {
  const flows = new Map<Address, Flow>();
  for (const t of await indexed.feeTransfersBetween(week.start, week.end)) {
    if (t.direction !== "in" || lc(t.from) === lc(platform)) continue;
    const token = getAddress(t.token);
    const f = flows.get(token) ?? newFlow();
    if (t.source === "trade") {
      f.received += t.amount;
      f.trades.add(lc(t.txHash));
    } else {
      f.outside += t.amount;
      f.outsideTxs.add(lc(t.txHash));
    }
    flows.set(token, f);
  }
  return flows;
}

export type LedgerFee = { txHash: Hex; feeTxHash: Hex | null; token: Address; amount: bigint };
export type EthMethod = "trace" | "balance";
export type EthFound = EthMethod | "ledger";
type TraceRow = {
  type: string;
  error?: string;
  transactionHash: Hex;
  traceAddress?: number[];
  action: { from?: Address; to?: Address; value?: Hex; callType?: string };
};

/** Blocks per trace_filter call to start with; halved while the node refuses the range (anvil takes 300). */
const TRACE_CHUNK_BLOCKS = 5_000;
/**
 * The range each node client last answered: a node that limits ranges is asked no wider on later passes (on anvil each
 * pass began with five refused calls). It only narrows: a range refused once for another reason costs more calls
 * later, never a wrong answer.
 */
const traceSteps = new WeakMap<PublicClient, number>();

/** Whether the node answers trace_filter (Arbitrum Nitro and anvil do; many public RPCs do not). */
export async function nodeTraces(chain: PublicClient): Promise<boolean> {
  try {
    await chain.request({
      method: "trace_filter" as never,
      params: [{ fromBlock: "0x0", toBlock: "0x0", toAddress: [zeroAddress] }] as never,
    });
    return true;
  } catch {
    return false;
  }
}

const rpcHex = (n: number) => `0x${n.toString(16)}`;

/**
 * Transactions in [first, last] with a call to `to`, by trace_filter in ranges that halve while the node
 * refuses them.
 */
async function txsCalling(chain: PublicClient, to: Address, first: number, last: number): Promise<Set<string>> {
  const hashes = new Set<string>();
  let step = traceSteps.get(chain) ?? TRACE_CHUNK_BLOCKS;
  for (let from = first; from <= last; ) {
    const until = Math.min(last, from + step - 1);
    let rows: TraceRow[];
    try {
      rows = (await chain.request({
        method: "trace_filter" as never,
        params: [{ fromBlock: rpcHex(from), toBlock: rpcHex(until), toAddress: [to] }] as never,
      })) as TraceRow[];
    } catch (err) {
      if (step === 1) throw err;
      step = Math.max(1, Math.floor(step / 2));
      continue;
    }
    traceSteps.set(chain, step);
    for (const r of rows) hashes.add(lc(r.transactionHash));
    from = until + 1;
  }
  return hashes;
}

/**
 * ETH that reached `platform` by call value in [first, last], per transaction. Each transaction is
 * traced whole: a call counts only when neither it nor any call above it reverted (trace_filter
 * marks only the call that failed, not the calls under it that it undid).
 */
export async function tracedEthIn(
  chain: PublicClient,
  platform: Address,
  blocks: WeekBlocks,
): Promise<Map<string, bigint>> {
  const byTx = new Map<string, bigint>();
  if (blocks.first === null || blocks.last === null) return byTx;
  for (const hash of await txsCalling(chain, platform, blocks.first, blocks.last)) {
    const rows = (await chain.request({ method: "trace_transaction" as never, params: [hash] as never })) as TraceRow[];
    const failed = rows.filter((r) => r.error).map((r) => (r.traceAddress ?? []).join(","));
    const undone = (r: TraceRow) => {
      const at = r.traceAddress ?? [];
      return failed.some((f) => f === "" || at.join(",") === f || at.join(",").startsWith(`${f},`));
    };
    let sum = 0n;
    for (const r of rows) {
      const value = r.action.value ? BigInt(r.action.value) : 0n;
      if (
        r.type !== "call" ||
        value === 0n ||
        lc(r.action.to ?? "") !== lc(platform) ||
        lc(r.action.from ?? "") === lc(platform)
      )
        continue;
      if ((r.action.callType && r.action.callType !== "call") || undone(r)) continue;
      sum += value;
    }
    if (sum > 0n) byTx.set(hash, sum);
  }
  return byTx;
}

/**
 * The wallet's ETH balance change over the week's blocks (0 for a week without blocks); null when
 * the node keeps no state that old (not an archive node; anvil before its loaded state).
 * eth_getBalance itself, not a multicall: the multicall contract may be younger than the week.
 */
export async function ethBalanceChange(
  chain: PublicClient,
  platform: Address,
  blocks: WeekBlocks,
): Promise<bigint | null> {
  if (blocks.first === null || blocks.last === null) return 0n;
  const at = (n: number) =>
    chain.request({ method: "eth_getBalance", params: [platform, `0x${n.toString(16)}`] }).then(BigInt);
  try {
    // Block 0 holds no transactions: its state is the genesis allocation, not the week's income.
    return (await at(blocks.last)) - (await at(Math.max(0, blocks.first - 1)));
  } catch {
    return null;
  }
}

/** ETH the wallet's own transactions in the week spent: value sent plus gas, from their receipts. */
export async function ethSpentBy(chain: PublicClient, hashes: Hex[]): Promise<bigint> {
  let spent = 0n;
  for (const hash of hashes) {
    const [tx, receipt] = await Promise.all([chain.getTransaction({ hash }), chain.getTransactionReceipt({ hash })]);
    spent += receipt.gasUsed * receipt.effectiveGasPrice + (receipt.status === "success" ? tx.value : 0n);
  }
  return spent;
}

/**
 * Symbol and decimals of a token outside config, read from the token itself on the fenced reader
 * (gas-capped, lib/chain.ts): "?" and 18 when it will not say (reverts, runs out of gas), so an
 * unreadable token is recorded and carried, never failing the pass. A node that does not answer
 * throws: that is no third party's doing, and the pass is tried again.
 */
export async function tokenFacts(reader: PublicClient, token: Address): Promise<{ symbol: string; decimals: number }> {
  const [s, dec] = await Promise.all([
    fencedRead(reader, { address: token, abi: erc20Abi, functionName: "symbol" }),
    fencedRead(reader, { address: token, abi: erc20Abi, functionName: "decimals" }),
  ]);
  const symbol = s.status === "success" ? s.result : "?";
  const decimals = dec.status === "success" ? dec.result : 18;
  // A token may claim any uint8 and more; past 36 its amounts are shown in atoms (decimals 0).
  const d = Number(decimals);
  return { symbol: String(symbol).slice(0, 64), decimals: Number.isInteger(d) && d >= 0 && d <= 36 ? d : 0 };
}
