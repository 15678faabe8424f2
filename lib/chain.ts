import { createPublicClient, custom, defineChain, http, type Chain, type EIP1193RequestFn, type PublicClient, type Transport } from "viem";
import type { Config } from "./config.js";

export function chain4663(config: Pick<Config, "chainId" | "rpcUrl"> & { contracts: Pick<Config["contracts"], "multicall3"> }): Chain {
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
/** After a call timed out, calls fail at once for this long, except one probe per PROBE_EVERY_MS. */
export const SILENT_MS = 5_000;
export const PROBE_EVERY_MS = 1_000;

/** The node did not answer a recent call: failing now instead of waiting out another timeout. */
export class NodeSilent extends Error {
  constructor(sinceMs: number) {
    super(`the chain node did not answer a call ${Math.round(sinceMs)} ms ago; not waiting on it again yet`);
    this.name = "NodeSilent";
  }
}

/**
 * An HTTP transport with a budget: each call at most CALL_TIMEOUT_MS, and once the node has been
 * silent, the calls of the next SILENT_MS fail at once (one probe a second finds it back). A
 * request that makes several calls in a row (prepare makes a handful) so refuses within about
 * one timeout, not one per call: a stalled node costs 2 s, not 20.
 */
export function budgetedHttp(url: string, opts: { timeoutMs?: number; now?: () => number } = {}): Transport {
  const timeoutMs = opts.timeoutMs ?? CALL_TIMEOUT_MS;
  const now = opts.now ?? Date.now;
  let silentSince = 0;
  let lastProbe = 0;
  return (params) => {
    const inner = http(url, { timeout: timeoutMs, retryCount: 0 })({ ...params, retryCount: 0 });
    const request = async (args: Parameters<EIP1193RequestFn>[0]): Promise<unknown> => {
      const t = now();
      if (silentSince && t - silentSince < SILENT_MS) {
        if (t - lastProbe < PROBE_EVERY_MS) throw new NodeSilent(t - silentSince);
        lastProbe = t;
      }
      try {
        const out = await inner.request(args);
        silentSince = 0;
        return out;
      } catch (err) {
        if ((err as Error).name === "TimeoutError") silentSince = lastProbe = now();
        throw err;
      }
    };
    return custom({ request: request as EIP1193RequestFn }, { retryCount: 1, retryDelay: 50 })(params);
  };
}

/**
 * The API's own chain client: separate from Ponder's, whose requests queue behind the indexer's
 * sync. Receipts are polled every 100 ms (viem's 4 s default is far slower than the chain).
 */
export function createChainClient(config: Pick<Config, "chainId" | "rpcUrl" | "contracts">): PublicClient {
  return createPublicClient({
    chain: chain4663(config),
    transport: budgetedHttp(config.rpcUrl),
    pollingInterval: 100,
    batch: { multicall: true },
  }) as PublicClient;
}
