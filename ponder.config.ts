import { join } from "node:path";
import { createConfig } from "ponder";
import { erc20Abi } from "./abis/erc20";
import { launchpadAbi, priceFeedAbi } from "./abis/fixtures";
import { poolManagerAbi } from "./abis/uniswapV4";
import { loadConfig } from "./lib/config";

// Same config as the API: chain, RPC and addresses from env + universe file.
const config = loadConfig();
const startBlock = config.startBlock;
const feeds = [...new Set(Object.values(config.tokens).flatMap((t) => (t.feed ? [t.feed] : [])))];

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
    PoolManager: { chain: "robinhood", abi: poolManagerAbi, address: config.contracts.poolManager, startBlock },
    Feed: { chain: "robinhood", abi: priceFeedAbi, address: feeds, startBlock },
    Launchpad: { chain: "robinhood", abi: launchpadAbi, address: config.contracts.launchpad, startBlock },
    // ERC-20 transfers into and out of the platform fee wallet, on any token. Two sources: Ponder
    // 0.16 keeps only one filter per event name when given a list.
    // Log sources only: a block or account source makes Ponder fetch every block (~10 a second on
    // chain 4663). Outcomes of the trades we relay come from the relay watcher's receipts.
    PlatformTokenIn: {
      chain: "robinhood",
      abi: erc20Abi,
      filter: { event: "Transfer", args: { to: config.feeRecipient } },
      startBlock,
    },
    PlatformTokenOut: {
      chain: "robinhood",
      abi: erc20Abi,
      filter: { event: "Transfer", args: { from: config.feeRecipient } },
      startBlock,
    },
  },
});
