import type { ChildProcess } from "node:child_process";
import { createTestClient, http, type PublicClient } from "viem";
import { startAnvil } from "../devnet/anvil.js";
import { devnetChain } from "../devnet/deploy.js";
import { startRpcProxy } from "../devnet/rpcProxy.js";
import { ensureSnapshot, SNAPSHOT_FILE } from "../devnet/snapshot.js";
import { startIndexer } from "../test/helpers/indexer.js";
import { apiClient, server } from "./http.js";
import { publicClient } from "../lib/chain.js";

/**
 * What the trading-path benchmarks run against: a private devnet from the snapshot, the real
 * indexer on PostgreSQL caught up, a counting RPC proxy in front of anvil, and the service in its
 * own process reading the chain through the proxy. `run` gets it all; everything stops after.
 * `serve(env)` starts another service process on the same chain and indexer (e.g. another backend), through the
 * proxy, or with `{ direct: true }` reading anvil itself: the proxy is a hop of its own (about 0.5 ms a round trip
 * here), which a service's own time beside the node alone must not carry. `onCall` sees each JSON-RPC call the proxy
 * forwards, `onTrip` each round trip's calls together.
 */
export async function withServedChain<T>(
  run: (s: ServedChain) => Promise<T>,
  opts: {
    onCall?: (m: { method: string; params?: unknown }) => void;
    onTrip?: (calls: { method: string; params?: unknown }[]) => void;
  } = {},
): Promise<T> {
  await ensureSnapshot();
  const anvil = await startAnvil({ loadState: SNAPSHOT_FILE });
  const chain = devnetChain(anvil.rpcUrl);
  const test = createTestClient({ chain, transport: http(anvil.rpcUrl), mode: "anvil" });
  const pub = publicClient({
    chain,
    transport: http(anvil.rpcUrl),
    pollingInterval: 50,
    cacheTime: 0,
  });
  const ix = await startIndexer({ anvilPort: anvil.port, backend: "postgres" });
  const proxy = await startRpcProxy(anvil.rpcUrl, {
    onCall: (m) => opts.onCall?.(m),
    onTrip: (calls) => opts.onTrip?.(calls),
  });
  const children: ChildProcess[] = [];
  const serve = async (env: Record<string, string> = {}, how: { direct?: boolean } = {}) => {
    const s = await server("app", how.direct ? anvil.port : proxy.port, {
      BENCH_VIEWS: ix.viewsSchema,
      BENCH_DATABASE_URL: ix.databaseUrl!,
      ...env,
    });
    children.push(s.child);
    return apiClient(s.port);
  };
  try {
    await ix.waitFor(Number(await pub.getBlockNumber()), 180_000);
    const api = await serve();
    return await run({ anvil, chain, test, pub, proxy, api, serve });
  } finally {
    for (const child of children) await new Promise((res) => (child.once("exit", res), child.kill("SIGTERM")));
    await proxy.close();
    await ix.cleanup();
    await anvil.stop();
  }
}

export type ServedChain = {
  anvil: Awaited<ReturnType<typeof startAnvil>>;
  chain: ReturnType<typeof devnetChain>;
  test: ReturnType<typeof createTestClient>;
  pub: PublicClient;
  proxy: Awaited<ReturnType<typeof startRpcProxy>>;
  api: ReturnType<typeof apiClient>;
  serve: (env?: Record<string, string>, how?: { direct?: boolean }) => Promise<ReturnType<typeof apiClient>>;
};
