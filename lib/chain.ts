import { createPublicClient, defineChain, http, type Chain, type PublicClient } from "viem";
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

/**
 * The API's own chain client: separate from Ponder's, whose requests queue behind the indexer's
 * sync. Receipts are polled every 100 ms (viem's 4 s default is far slower than the chain).
 */
export function createChainClient(config: Pick<Config, "chainId" | "rpcUrl" | "contracts">): PublicClient {
  return createPublicClient({
    chain: chain4663(config),
    transport: http(config.rpcUrl, { timeout: 10_000, retryCount: 1 }),
    pollingInterval: 100,
    batch: { multicall: true },
  }) as PublicClient;
}
