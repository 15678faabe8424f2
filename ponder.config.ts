import { join } from "node:path";
import { erc20Abi } from "./abis/erc20";
import { launchpadAbi, priceFeedAbi } from "./abis/fixtures";
import { poolManagerAbi } from "./abis/uniswapV4";
import { loadConfig } from "./lib/config";
import { ponder } from "./lib/ponderNative";

// Same config as the API: chain, RPC and addresses from env + universe file.
const config = loadConfig();
const startBlock = config.startBlock;
/**
 * The node's URL as Ponder's RPC client is given it. Ponder 0.16 paces each URL it is given from 20 requests a
 * second, raised 5 % a second while answers come back (node_modules/ponder/dist/esm/rpc/index.js,
 * INITIAL_MAX_RPS): right for a provider with a rate limit, but a devnet's anvil has none, and at 20 a second the
 * 30 unfinalised blocks an indexer reads one by one at start took 4 s, and each burst of blocks a test mines
 * waited the same way. The devnet is named under ten URLs (a query anvil ignores), each paced on its own.
 */
const DEVNET_LANES = 10;
const indexerRpc = config.devnet
  ? Array.from(
      { length: DEVNET_LANES },
      (_, i) => `${config.rpcUrl}${config.rpcUrl.includes("?") ? "&" : "?"}lane=${i}`,
    )
  : config.rpcUrl;
const feeds = [...new Set(Object.values(config.tokens).flatMap((t) => (t.feed ? [t.feed] : [])))];

export default ponder.createConfig({
  database: config.databaseUrl
    ? { kind: "postgres", connectionString: config.databaseUrl }
    : { kind: "pglite", directory: join(config.dataDir, "ponder") },
  chains: {
    robinhood: {
      id: config.chainId,
      rpc: indexerRpc,
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
