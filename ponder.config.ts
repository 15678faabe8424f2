import { join } from "node:path";
import { createConfig } from "ponder";
import { loadConfig } from "./lib/config";
import { poolManagerAbi } from "./abis/uniswapV4";

// Same config as the API: chain, RPC and addresses from env + universe file.
const config = loadConfig();

export default createConfig({
  database: config.databaseUrl
    ? { kind: "postgres", connectionString: config.databaseUrl }
    : { kind: "pglite", directory: join(config.dataDir, "ponder") },
  chains: {
    robinhood: {
      id: config.chainId,
      rpc: config.rpcUrl,
      // 100 ms: block-to-readable latency is about half of this plus handler time.
      pollingInterval: 100,
      // A devnet can be reset to its snapshot; never trust a cache across that.
      disableCache: config.devnet,
    },
  },
  contracts: {
    PoolManager: {
      chain: "robinhood",
      abi: poolManagerAbi,
      address: config.contracts.poolManager,
      startBlock: config.startBlock,
    },
  },
});
