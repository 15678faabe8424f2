import {
  createPublicClient,
  custom,
  decodeFunctionResult,
  defineChain,
  encodeFunctionData,
  http,
  HttpRequestError,
  TimeoutError,
  type Abi,
  type ContractFunctionParameters,
  type Hex,
  type Address,
  type Chain,
  type ContractFunctionArgs,
  type ContractFunctionName,
  type ContractFunctionReturnType,
  type EIP1193RequestFn,
  type HttpTransport,
  type PublicClient,
  type PublicClientConfig,
  type StateOverride,
  type Tokens,
  type Transport,
} from "viem";
import PQueue from "p-queue";
import { CAPPED_AGGREGATOR, CAPPED_AGGREGATOR_RUNTIME, cappedAggregatorAbi } from "./cappedAggregator.js";
import type { Config } from "./config.js";
import { nodeFetch } from "./nodeFetch.js";

export function chain4663(
  config: Pick<Config, "chainId" | "rpcUrl"> & { contracts: Pick<Config["contracts"], "multicall3"> },
): Chain {
  return defineChain({
    id: config.chainId,
    name: "Robinhood Chain",
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [config.rpcUrl] } },
    contracts: { multicall3: { address: config.contracts.multicall3 } },
  });
}

/** One RPC call waits at most this long. */
export const CALL_TIMEOUT_MS = 2_000;
/** Once the probe found the node silent, calls fail at once for this long, except one probe per PROBE_EVERY_MS. */
export const SILENT_MS = 5_000;
export const PROBE_EVERY_MS = 1_000;
/**
 * The probe (eth_blockNumber, which any live node answers in milliseconds however busy its
 * calls keep it) waits this long. Only a probe that goes unanswered opens the breaker: a call
 * that was slow because of what it ran (a heavy eth_call, a token burning gas) never does.
 */
export const PROBE_TIMEOUT_MS = 1_500;

/** The node did not answer a recent call: failing now instead of waiting out another timeout. */
export class NodeSilent extends Error {
  constructor(sinceMs: number) {
    super(`the chain node did not answer a call ${Math.round(sinceMs)} ms ago; not waiting on it again yet`);
    this.name = "NodeSilent";
  }
}

/**
 * Whether `err` (or any error it wraps) says the node did not answer: NodeSilent, viem's call timeout, or an HTTP
 * failure reaching it.
 */
export function chainUnreachable(err: unknown): boolean {
  for (
    let e = err as { name?: string; cause?: unknown } | undefined, depth = 0;
    e && depth < 8;
    e = e.cause as typeof e, depth++
  ) {
    if (e instanceof NodeSilent || e instanceof TimeoutError || e instanceof HttpRequestError) return true;
  }
  return false;
}

/**
 * An HTTP transport with a budget: each call at most CALL_TIMEOUT_MS. A call that times out
 * makes one probe (shared by every call timing out meanwhile); when the probe is not answered
 * either, the calls of the next SILENT_MS fail at once (one probe a second finds the node back).
 * A request that makes several calls in a row (prepare makes a handful) so refuses within about
 * one timeout and one probe, not one timeout per call: a stalled node costs 3.5 s, not 20. A
 * heavy call on a live node costs only its own caller.
 */
export function budgetedHttp(
  url: string,
  opts: { timeoutMs?: number; probeTimeoutMs?: number; now?: () => number } = {},
): Transport {
  const timeoutMs = opts.timeoutMs ?? CALL_TIMEOUT_MS;
  const now = opts.now ?? Date.now;
  let silentSince = 0;
  let lastProbe = 0;
  let probing: Promise<boolean> | null = null;
  return (params) => {
    const inner = rpcHttp(url, { timeout: timeoutMs })({ ...params, retryCount: 0 });
    const probeInner = rpcHttp(url, { timeout: opts.probeTimeoutMs ?? PROBE_TIMEOUT_MS })({
      ...params,
      retryCount: 0,
    });
    /** True when the node answers the probe (any answer, an error included, is an answer). */
    const probe = (): Promise<boolean> =>
      (probing ??= probeInner
        .request({ method: "eth_blockNumber" })
        .then(
          () => true,
          (err: Error) => !chainUnreachable(err),
        )
        .then((alive) => {
          lastProbe = now();
          // Each unanswered probe starts the silence again: the breaker stays open while the node does not answer.
          silentSince = alive ? 0 : lastProbe;
          return alive;
        })
        .finally(() => (probing = null)));
    const request = async (args: Parameters<EIP1193RequestFn>[0]): Promise<unknown> => {
      const t = now();
      if (silentSince && t - silentSince < SILENT_MS) {
        if (t - lastProbe < PROBE_EVERY_MS || !(await probe())) throw new NodeSilent(now() - silentSince);
      }
      try {
        return await inner.request(args);
      } catch (err) {
        // Slow is not silent: only an unanswered probe opens the breaker.
        if ((err as Error).name === "TimeoutError") await probe();
        throw err;
      }
    };
    return custom({ request: request as EIP1193RequestFn }, { retryCount: 1, retryDelay: 50 })(params);
  };
}

/**
 * Gas an eth_call into code the service does not control may burn: name, symbol, decimals and balanceOf of any honest
 * ERC-20 (proxied or not) take under 30k.
 */
export const UNTRUSTED_GAS = 150_000n;
/**
 * viem's HTTP transport, its requests made with node:http (lib/nodeFetch.ts: written in the same event-loop turn, under
 * half of fetch's CPU a call), never retried by itself: every transport of the service to a node is made here.
 */
export function rpcHttp(url: string, opts: { timeout: number; batch?: { batchSize: number } }): HttpTransport {
  return http(url, { ...opts, retryCount: 0, fetchFn: nodeFetch as unknown as typeof fetch });
}

/**
 * viem's createPublicClient, typed as `PublicClient` from the start. Casting a chain-specific client to it (`as
 * PublicClient`) made the type checker relate the two client types, 1.5-3.5 s per cast: a third of `tsc`'s time.
 */
export const publicClient = (c: PublicClientConfig<Transport, Chain | undefined>): PublicClient =>
  createPublicClient<Transport, Chain | undefined, undefined, undefined, Tokens | undefined>(c);

/** One read of untrusted code waits at most this long (it cannot burn more than UNTRUSTED_GAS). */
export const UNTRUSTED_TIMEOUT_MS = 1_500;

/**
 * The reader of contracts the service did not deploy or pin (tokens anyone can create): plain
 * HTTP with its own timeout, no retries and no breaker, so whatever such a contract does costs its
 * own read and nothing else. Call it through `fencedRead`, which adds the gas cap.
 */
export function createUntrustedReader(config: Pick<Config, "chainId" | "rpcUrl" | "contracts">): PublicClient {
  return publicClient({
    chain: chain4663(config),
    transport: rpcHttp(config.rpcUrl, { timeout: UNTRUSTED_TIMEOUT_MS }),
  });
}

export type Fenced<T> = { status: "success"; result: T } | { status: "failure"; error: string };

/**
 * One view call into untrusted code with an explicit gas cap: its result, or `failure` when the
 * contract reverted, ran out of gas or answered something that does not decode. A node that does
 * not answer is not the contract's doing: that throws (chainUnreachable is true of it).
 */
export async function fencedRead<
  const abi extends Abi,
  fn extends ContractFunctionName<abi, "pure" | "view">,
  const args extends ContractFunctionArgs<abi, "pure" | "view", fn>,
>(
  reader: PublicClient,
  p: { address: Address; abi: abi; functionName: fn; args?: args; gas?: bigint; stateOverride?: StateOverride },
): Promise<Fenced<ContractFunctionReturnType<abi, "pure" | "view", fn, args>>> {
  const data = encodeFunctionData({ abi: p.abi, functionName: p.functionName, args: p.args } as never);
  try {
    const { data: out } = await reader.call({
      to: p.address,
      data,
      gas: p.gas ?? UNTRUSTED_GAS,
      stateOverride: p.stateOverride,
    });
    if (!out) return { status: "failure", error: "no data returned" };
    return {
      status: "success",
      result: decodeFunctionResult({ abi: p.abi, functionName: p.functionName, args: p.args, data: out } as never),
    };
  } catch (err) {
    if (chainUnreachable(err)) throw err;
    return {
      status: "failure",
      error: ((err as { shortMessage?: string }).shortMessage ?? (err as Error).message).split("\n")[0]!.slice(0, 160),
    };
  }
}

/** Gas a capped batch allows besides its calls' own budgets: the aggregator's loop, calldata and answer. */
export const MULTICALL_BASE_GAS = 300_000n;
/** And per call: a cold account access, the call itself, and its (capped) answer in memory twice. */
export const MULTICALL_PER_CALL_GAS = 15_000n;

/** One call of a capped batch, with the gas it may burn (default UNTRUSTED_GAS). */
export type BudgetedCall = ContractFunctionParameters & { gas?: bigint };

export type CappedResult =
  | { status: "success"; result: unknown; error?: undefined }
  | { status: "failure"; error: Error; result?: undefined };

/** The gas cap of a capped batch: its calls' budgets plus the aggregator's own. */
export function cappedBatchGas(contracts: readonly BudgetedCall[]): bigint {
  return contracts.reduce((sum, c) => sum + (c.gas ?? UNTRUSTED_GAS) + MULTICALL_PER_CALL_GAS, MULTICALL_BASE_GAS);
}

/**
 * A batch of view calls as one eth_call (one block) that carries a gas cap, each call with its own
 * budget (`gas`, default UNTRUSTED_GAS): the cap is the budgets' sum plus the aggregator's own.
 * Multicall3 cannot do this (aggregate3 hands each call all but 1/64 of the gas left: two burning
 * calls in a row leave the batch too little to answer at all), so the batch runs through
 * CappedAggregator, whose code the eth_call itself places by state override: a call into code the
 * service does not control (an address-named token's balanceOf) fails on its own when it burns
 * its budget, and costs the node at most that much gas. Order still helps: calls that must answer
 * first.
 */
export async function cappedMulticall(
  chain: PublicClient,
  p: { contracts: readonly BudgetedCall[]; blockNumber?: bigint },
): Promise<CappedResult[]> {
  const calls = p.contracts.map((c) => ({
    target: c.address,
    gas: c.gas ?? UNTRUSTED_GAS,
    callData: encodeFunctionData({ abi: c.abi, functionName: c.functionName, args: c.args } as never),
  }));
  const { data } = await chain.call({
    to: CAPPED_AGGREGATOR,
    data: encodeFunctionData({ abi: cappedAggregatorAbi, functionName: "aggregate", args: [calls] }),
    gas: cappedBatchGas(p.contracts),
    blockNumber: p.blockNumber,
    stateOverride: [{ address: CAPPED_AGGREGATOR, code: CAPPED_AGGREGATOR_RUNTIME }],
  });
  if (!data) throw new Error("the capped batch answered no data");
  const out = decodeFunctionResult({ abi: cappedAggregatorAbi, functionName: "aggregate", data }) as readonly {
    success: boolean;
    returnData: Hex;
  }[];
  return p.contracts.map((c, i): CappedResult => {
    const r = out[i];
    if (!r?.success)
      return {
        status: "failure",
        error: new Error(
          r
            ? `the call reverted or ran out of its gas budget (${r.returnData.slice(0, 74)})`
            : "no answer in the batch",
        ),
      };
    try {
      return {
        status: "success",
        result: decodeFunctionResult({
          abi: c.abi,
          functionName: c.functionName,
          args: c.args,
          data: r.returnData,
        } as never),
      };
    } catch (err) {
      return { status: "failure", error: err as Error };
    }
  });
}

/** JSON-RPC calls one batch carries at most: far under Nitro's default limit (1,000), within what public RPCs take. */
export const RPC_BATCH_SIZE = 100;

/**
 * A reader that sends the calls made at once as JSON-RPC batches of RPC_BATCH_SIZE, one HTTP request each: for
 * per-address reads that no contract answers in bulk (eth_getTransactionCount), so that 3,000 of them cost 30
 * requests, not 3,000 (the league's native scan, issue 29 point 6). A node that refuses a batch answers each call
 * with that refusal: callers read one by one through their usual client then.
 */
export function createBatchReader(config: Parameters<typeof chain4663>[0]): PublicClient {
  return publicClient({
    chain: chain4663(config),
    transport: rpcHttp(config.rpcUrl, { batch: { batchSize: RPC_BATCH_SIZE }, timeout: CALL_TIMEOUT_MS }),
  });
}

/**
 * `client` with at most `n` of its requests at the node at once, the rest queued in order, for a worker whose reads can
 * come by the thousand (a season's first standings read every entrant's history): queued behind its own earlier
 * reads, never in front of the callers' calls on `client`, whose budget and breaker it keeps.
 */
export function withInFlightCap(client: PublicClient, n: number, maxWaiting = MAX_WAITING): PublicClient {
  const queue = new PQueue({ concurrency: n });
  // `client.request` itself, with the call's options (a raw transaction's retryCount 0 stays 0): no retry of its own.
  const request = ((args: unknown, options?: unknown) => {
    if (queue.size >= maxWaiting) return Promise.reject(new ReadsBackedUp(queue.size));
    return queue.add(() => client.request(args as never, options as never));
  }) as EIP1193RequestFn;
  const transport: Transport = () => ({
    config: { key: "inFlightCap", name: "In-flight cap", type: "inFlightCap", request, retryCount: 0, retryDelay: 0 },
    request,
    value: undefined,
  });
  return publicClient({
    chain: client.chain,
    transport,
    pollingInterval: client.pollingInterval,
    batch: client.batch,
  });
}

/**
 * Calls waiting behind a worker's cap past which new ones fail at once: a node slow enough that the worker's passes
 * fail while their reads still wait must not grow the queue without end (a failed pass's waiting reads still run).
 */
export const MAX_WAITING = 10_000;

/** A worker's capped reads are this far behind: the call is refused rather than queued. */
export class ReadsBackedUp extends Error {
  constructor(waiting: number) {
    super(`${waiting} chain reads of this worker are already waiting; try again once they have drained`);
    this.name = "ReadsBackedUp";
  }
}

/**
 * The API's own chain client: separate from Ponder's, whose requests queue behind the indexer's
 * sync. Receipts are polled every 100 ms (viem's 4 s default is far slower than the chain).
 */
export function createChainClient(config: Pick<Config, "chainId" | "rpcUrl" | "contracts">): PublicClient {
  return publicClient({
    chain: chain4663(config),
    transport: budgetedHttp(config.rpcUrl),
    pollingInterval: 100,
    batch: { multicall: true },
  });
}
