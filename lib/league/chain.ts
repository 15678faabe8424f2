/**
 * What the league reads from the chain's logs, with topic lists and never a block scan (SPEC
 * "League", issue 18): transfers among entrants' addresses (cluster links), and, for
 * `npm run league:verify`, feed rounds and the partner pool's price history as a MarkReader.
 */
import { getAbiItem, getAddress, pad, type Address, type Hex, type PublicClient } from "viem";
import { priceFeedAbi, sanctionsListAbi, partnerAgentVaultAbi } from "../../abis/fixtures.js";
import { poolManagerAbi } from "../../abis/uniswapV4.js";
import { accumulate, priceX96FromSqrt } from "../twap.js";
import { TRANSFER_TOPIC } from "../tradeOutcome.js";
import { seriesMarkReader, type MarkReader, type Observation, type TimedRound } from "./valuation.js";
import { lc } from "../address.js";

/** A token transfer between two addresses (an ERC-20 Transfer log). */
export type ChainTransfer = {
  from: string;
  to: string;
  token: string;
  amount: bigint;
  tx_hash: string;
  block: number;
  /** The transaction's index in its block (orders a block's ETH moves and logs). */
  tx_index: number;
  /** The log's index; below zero for a native ETH move (its call's place in the trace, before the logs). */
  log_index: number;
};

/**
 * Calldata per Multicall3 call of the league's screening reads (about 450 isSanctioned or getAgent calls, a few
 * million gas): viem's default of 1 KB made 3,000 addresses over a hundred eth_calls per pass.
 */
export const SCREEN_BATCH_BYTES = 16_384;

/** Topic lists stay short enough for any node (public RPCs cap request sizes). */
const TOPIC_CHUNK = 200;
/** Topic-list reads in flight at once. */
const CHUNKS_AT_ONCE = 4;
/**
 * A range of at most this many blocks is read with one request for every Transfer log of the tokens, filtered here
 * (a pass of the standings reads a few new blocks: one request instead of two per TOPIC_CHUNK addresses); its logs
 * stay far under the 10,000 that public RPCs answer at most, and a read they refuse falls back to the topic lists.
 */
export const WHOLE_READ_BLOCKS = 256n;
/**
 * A whole read that answers this many logs or more is not trusted to be all of them (some RPC front-ends cut an
 * answer at their cap without an error): the topic lists are read instead, asking only for the league's addresses.
 */
export const WHOLE_READ_MAX_LOGS = 1_000;

type RawLog = {
  address: string;
  topics: string[];
  data: string;
  transactionHash: string;
  blockNumber: string;
  transactionIndex: string;
  logIndex: string;
};

/**
 * Every transfer of a value of `tokens` (the configured ones only: any contract can log a
 * Transfer, so an unknown emitter could link strangers or flood the read) into or out of
 * `addresses` from `fromBlock` to `toBlock`: over a short range (WHOLE_READ_BLOCKS) every Transfer of the tokens,
 * filtered here; else, or when that read fails or answers WHOLE_READ_MAX_LOGS or more, two getLogs per chunk of
 * addresses (topic1 = from in the list, topic2 = to in the list). Deduplicated, zero amounts dropped, ordered by
 * block and log.
 */
export async function transfersOf(
  chain: PublicClient,
  addresses: string[],
  fromBlock: bigint,
  toBlock: bigint,
  tokens: string[],
): Promise<ChainTransfer[]> {
  const uniq = [...new Set(addresses.map(lc))].sort();
  const emitters = [...new Set(tokens.map(lc))].filter((a) => a !== "0x0000000000000000000000000000000000000000");
  if (!emitters.length || !uniq.length) return [];
  const logs = (topics: unknown[]) =>
    chain.request({
      method: "eth_getLogs",
      params: [
        {
          address: emitters as never,
          fromBlock: `0x${fromBlock.toString(16)}`,
          toBlock: `0x${toBlock.toString(16)}`,
          topics: topics as never,
        },
      ],
    }) as Promise<RawLog[]>;
  const seen = new Map<string, ChainTransfer>();
  const take = (l: RawLog, touching?: Set<string>) => {
    const t = transferOf(l, emitters);
    if (t && (!touching || touching.has(t.from) || touching.has(t.to))) seen.set(`${t.block}:${t.log_index}`, t);
  };
  const whole = toBlock - fromBlock < WHOLE_READ_BLOCKS ? await logs([TRANSFER_TOPIC]).catch(() => null) : null;
  if (whole && whole.length < WHOLE_READ_MAX_LOGS) {
    const touching = new Set(uniq);
    for (const l of whole) take(l, touching);
  } else {
    const reads: unknown[][] = [];
    for (let i = 0; i < uniq.length; i += TOPIC_CHUNK) {
      const topics = uniq.slice(i, i + TOPIC_CHUNK).map((a) => pad(a as Hex));
      reads.push([TRANSFER_TOPIC, topics], [TRANSFER_TOPIC, null, topics]);
    }
    for (let i = 0; i < reads.length; i += CHUNKS_AT_ONCE)
      for (const got of await Promise.all(reads.slice(i, i + CHUNKS_AT_ONCE).map(logs))) for (const l of got) take(l);
  }
  return [...seen.values()].sort((a, b) => a.block - b.block || a.log_index - b.log_index);
}

/** A Transfer log of one of `emitters` as a transfer; null when it is not one (not three topics, odd data, zero). */
function transferOf(l: RawLog, emitters: string[]): ChainTransfer | null {
  if (l.topics.length !== 3 || l.topics[0]!.toLowerCase() !== TRANSFER_TOPIC) return null;
  if (!emitters.includes(lc(l.address))) return null;
  if (!/^0x[0-9a-fA-F]{1,64}$/.test(l.data)) return null;
  const amount = BigInt(l.data);
  if (amount === 0n) return null;
  return {
    from: lc(`0x${l.topics[1]!.slice(-40)}`),
    to: lc(`0x${l.topics[2]!.slice(-40)}`),
    token: lc(l.address),
    amount,
    tx_hash: l.transactionHash,
    block: Number(l.blockNumber),
    tx_index: Number(l.transactionIndex),
    log_index: Number(l.logIndex),
  };
}

/** Whether each address is on the sanctions list at `block`; null where the list could not be read. */
export async function sanctionedAt(
  chain: PublicClient,
  list: Address,
  addresses: string[],
  block: bigint,
): Promise<Map<string, boolean | null>> {
  const uniq = [...new Set(addresses.map(lc))];
  const out = new Map<string, boolean | null>();
  const res = await chain
    .multicall({
      contracts: uniq.map(
        (a) => ({ address: list, abi: sanctionsListAbi, functionName: "isSanctioned", args: [getAddress(a)] }) as const,
      ),
      blockNumber: block,
      allowFailure: true,
      batchSize: SCREEN_BATCH_BYTES,
    })
    .catch(() => uniq.map(() => ({ status: "failure" as const, result: undefined })));
  for (const [i, a] of uniq.entries()) out.set(a, res[i]!.status === "success" ? (res[i]!.result as boolean) : null);
  return out;
}

/** The vault's agent wallet per agent id at `block` (where a prize goes); null where unreadable. */
export async function vaultWalletsAt(
  chain: PublicClient,
  vault: Address,
  ids: number[],
  block: bigint,
): Promise<Map<number, string | null>> {
  const out = new Map<number, string | null>();
  const res = await chain
    .multicall({
      contracts: ids.map(
        (id) => ({ address: vault, abi: partnerAgentVaultAbi, functionName: "getAgent", args: [BigInt(id)] }) as const,
      ),
      blockNumber: block,
      allowFailure: true,
      batchSize: SCREEN_BATCH_BYTES,
    })
    .catch(() => ids.map(() => ({ status: "failure" as const, result: undefined })));
  for (const [i, id] of ids.entries())
    out.set(id, res[i]!.status === "success" ? lc((res[i]!.result as { agentWallet: string }).agentWallet) : null);
  return out;
}

/**
 * Marks from the chain's own logs, as the indexer builds them: feed rounds from AnswerUpdated,
 * the pool's price history from Initialize and Swap (the same integer accumulator, lib/twap), so
 * a TWAP read here equals the indexer's to the last bit.
 */
export function chainMarkReader(
  chain: PublicClient,
  o: { poolManager: Address; fromBlock: bigint; toBlock: bigint },
): MarkReader {
  const times = new Map<bigint, Promise<number>>();
  const timeOf = (block: bigint) => {
    if (!times.has(block))
      times.set(
        block,
        chain.getBlock({ blockNumber: block }).then((b) => Number(b.timestamp)),
      );
    return times.get(block)!;
  };
  return seriesMarkReader({
    async rounds(feed) {
      const logs = await chain.getLogs({
        address: getAddress(feed),
        event: getAbiItem({ abi: priceFeedAbi, name: "AnswerUpdated" }),
        fromBlock: o.fromBlock,
        toBlock: o.toBlock,
      });
      const out: TimedRound[] = [];
      for (const l of logs)
        out.push({
          round_id: l.args.roundId!.toString(),
          answer: l.args.current!,
          updated_at: Number(l.args.updatedAt!),
          block: Number(l.blockNumber),
          ts: await timeOf(l.blockNumber!),
        });
      // Chain order, the latest round last within a block (the indexer's order: block, then round id).
      return out.sort((a, b) => a.block - b.block || (BigInt(a.round_id) < BigInt(b.round_id) ? -1 : 1));
    },
    async observations(poolId) {
      const [init, swaps] = await Promise.all([
        chain.getLogs({
          address: o.poolManager,
          event: getAbiItem({ abi: poolManagerAbi, name: "Initialize" }),
          args: { id: poolId as Hex },
          fromBlock: o.fromBlock,
          toBlock: o.toBlock,
        }),
        chain.getLogs({
          address: o.poolManager,
          event: getAbiItem({ abi: poolManagerAbi, name: "Swap" }),
          args: { id: poolId as Hex },
          fromBlock: o.fromBlock,
          toBlock: o.toBlock,
        }),
      ]);
      const logs = [...init, ...swaps].sort(
        (a, b) => Number(a.blockNumber! - b.blockNumber!) || a.logIndex! - b.logIndex!,
      );
      const out: Observation[] = [];
      for (const l of logs) {
        const ts = await timeOf(l.blockNumber!);
        const prev = out.at(-1);
        if (!prev && l.eventName !== "Initialize") continue;
        const cumulativeX96 = prev
          ? accumulate(
              { priceX96: prev.priceX96, cumulativeX96: prev.cumulativeX96, timestamp: BigInt(prev.ts) },
              BigInt(ts),
            )
          : 0n;
        out.push({
          ts,
          block: Number(l.blockNumber),
          log: l.logIndex!,
          priceX96: priceX96FromSqrt(l.args.sqrtPriceX96!),
          cumulativeX96,
        });
      }
      return out;
    },
  });
}
