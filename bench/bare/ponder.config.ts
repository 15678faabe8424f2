// The bare anchor of the indexer benchmark: the service's chain and log sources (the target shape
// of ../../ponder.config.ts, issue 11: log sources only, no block or account source), with empty
// handlers (./src/index.ts).
import { join } from "node:path";
import { createConfig } from "ponder";
import { erc20Abi } from "../../abis/erc20";
import { launchpadAbi, priceFeedAbi } from "../../abis/fixtures";
import { poolManagerAbi } from "../../abis/uniswapV4";
import { loadConfig } from "../../lib/config";

const config = loadConfig();
const startBlock = config.startBlock;
const feeds = [...new Set(Object.values(config.tokens).flatMap((t) => (t.feed ? [t.feed] : [])))];

export default createConfig({
  database: config.databaseUrl
    ? { kind: "postgres", connectionString: config.databaseUrl }
    : { kind: "pglite", directory: join(config.dataDir, "ponder") },
  chains: {
    robinhood: { id: config.chainId, rpc: config.rpcUrl, pollingInterval: 100, disableCache: config.devnet },
  },
  contracts: {
    PoolManager: { chain: "robinhood", abi: poolManagerAbi, address: config.contracts.poolManager, startBlock },
    Feed: { chain: "robinhood", abi: priceFeedAbi, address: feeds, startBlock },
    Launchpad: { chain: "robinhood", abi: launchpadAbi, address: config.contracts.launchpad, startBlock },
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
