/**
 * Trading benchmark: live/quote and live/prepare (ETH -> USDG through the real Universal Router
 * and V4Quoter) against the service in its own process (bench/httpServer.ts), with the real
 * indexer on PostgreSQL. A counting proxy between the service and anvil measures the chain RPC
 * round trips each request costs. Then 16 agents prepare concurrently for a while.
 *
 * Issue 31 point 1: beside each, the node alone (bench/nodeAlone.ts): the route's own round trips, as
 * the proxy saw them for one request, sent straight to the same anvil one pass at a time, and from 16
 * agents for the same seconds; each route as a ratio to it.
 */
import type { ChildProcess } from "node:child_process";
import { createTestClient, http, parseEther, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { startAnvil } from "../devnet/anvil.js";
import { startRpcProxy } from "../devnet/rpcProxy.js";
import { devnetChain } from "../devnet/deploy.js";
import { ensureSnapshot, SNAPSHOT_FILE } from "../devnet/snapshot.js";
import { startIndexer } from "../test/helpers/indexer.js";
import { single, summarize, type Row } from "./stats.js";
import { apiClient, server } from "./http.js";
import { ratioRows, replay, replayConcurrent, tripRecorder, valueRow } from "./nodeAlone.js";

export async function benchTrading(opts: { requests: number; seconds: number; agents: number }): Promise<Row[]> {
  await ensureSnapshot();
  const anvil = await startAnvil({ loadState: SNAPSHOT_FILE });
  const test = createTestClient({ chain: devnetChain(anvil.rpcUrl), transport: http(anvil.rpcUrl), mode: "anvil" });
  const ix = await startIndexer({ anvilPort: anvil.port, backend: "postgres" });
  const record = tripRecorder();
  const proxy = await startRpcProxy(anvil.rpcUrl, { onTrip: record.onTrip });
  let child: ChildProcess | null = null;
  try {
    await ix.waitFor(
      Number(
        await fetch(anvil.rpcUrl, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] }),
        }).then(async (r) => ((await r.json()) as { result: string }).result),
      ),
      180_000,
    );
    const s = await server("app", proxy.port, { BENCH_VIEWS: ix.viewsSchema, BENCH_DATABASE_URL: ix.databaseUrl! });
    child = s.child;
    const { post, signIn } = apiClient(s.port);
    const agents: { address: Address; key: string }[] = [];
    for (let i = 0; i < opts.agents; i++) {
      const a = privateKeyToAccount(generatePrivateKey());
      await test.setBalance({ address: a.address, value: parseEther("100") });
      agents.push({ address: a.address, key: await signIn(a) });
    }
    const quoteBody = { token_in: "ETH", token_out: "USDG", amount_in: parseEther("0.05").toString() };
    const prepareBody = (a: { address: Address }) => ({ wallet: a.address, ...quoteBody });
    const timed = async (n: number, f: () => Promise<{ status: number; json: any }>) => {
      const ms: number[] = [];
      for (let i = 0; i < n; i++) {
        const t0 = performance.now();
        const r = await f();
        ms.push(performance.now() - t0);
        if (r.status !== 200) throw new Error(`${r.status} ${JSON.stringify(r.json).slice(0, 300)}`);
      }
      return ms;
    };
    const a0 = agents[0]!;
    // Warm caches (token records, marks, pools, key) before measuring.
    await timed(20, () => post("/live/quote", quoteBody, a0.key));
    proxy.reset();
    const quoteMs = await timed(opts.requests, () => post("/live/quote", quoteBody, a0.key));
    const quoteTrips = proxy.counts.trips / opts.requests;
    const quoteCalls = proxy.counts.calls / opts.requests;
    await timed(20, () => post("/live/prepare", prepareBody(a0), a0.key));
    proxy.reset();
    const prepareMs = await timed(opts.requests, () => post("/live/prepare", prepareBody(a0), a0.key));
    const prepareTrips = proxy.counts.trips / opts.requests;
    const prepareCalls = proxy.counts.calls / opts.requests;
    const methods = Object.entries(proxy.counts.methods)
      .map(([m, n]) => `${m} ${(n / opts.requests).toFixed(2)}`)
      .join(", ");

    // The node alone: one request's round trips, replayed straight to anvil.
    const quoteTripList = await record.during(() => post("/live/quote", quoteBody, a0.key));
    const prepareTripList = await record.during(() => post("/live/prepare", prepareBody(a0), a0.key));
    await replay(anvil.rpcUrl, prepareTripList, 20); // warm
    const nodeQuoteMs = await replay(anvil.rpcUrl, quoteTripList, opts.requests);
    const nodePrepareMs = await replay(anvil.rpcUrl, prepareTripList, opts.requests);
    const nodePerSecond = await replayConcurrent(anvil.rpcUrl, prepareTripList, opts.agents, opts.seconds);

    // 16 agents, each preparing back to back.
    const until = performance.now() + opts.seconds * 1000;
    const concurrentMs: number[] = [];
    let failures = 0;
    await Promise.all(
      agents.map(async (a) => {
        while (performance.now() < until) {
          const t0 = performance.now();
          const r = await post("/live/prepare", prepareBody(a), a.key);
          if (r.status !== 200) failures++;
          else concurrentMs.push(performance.now() - t0);
        }
      }),
    );
    if (failures) throw new Error(`${failures} concurrent prepares failed`);
    const perSecond = concurrentMs.length / opts.seconds;
    return [
      summarize("live/quote ETH->USDG, warm caches, one agent (latency)", quoteMs, "ms"),
      single(
        "live/quote: chain RPC round trips per request (calls inside them)",
        `trips (${quoteCalls.toFixed(2)} calls)`,
        quoteTrips,
        opts.requests,
      ),
      summarize("live/prepare ETH->USDG incl. simulation and stored plan, one agent (latency)", prepareMs, "ms"),
      single(
        `live/prepare: chain RPC round trips per request [${methods}]`,
        `trips (${prepareCalls.toFixed(2)} calls)`,
        prepareTrips,
        opts.requests,
      ),
      summarize(`live/prepare, ${opts.agents} concurrent agents (latency)`, concurrentMs, "ms"),
      single(
        `live/prepare, ${opts.agents} concurrent agents: throughput over ${opts.seconds} s`,
        "prepares/s",
        perSecond,
        concurrentMs.length,
      ),
      summarize(
        `node alone for live/quote: its ${quoteTripList.length} round trip(s), one at a time`,
        nodeQuoteMs,
        "ms",
      ),
      ...ratioRows("live/quote", quoteMs, nodeQuoteMs),
      summarize(
        `node alone for live/prepare: its ${prepareTripList.length} round trips ` +
          `(${prepareTripList.map((t) => t.map((c) => c.method).join("+")).join(", ")}), one at a time`,
        nodePrepareMs,
        "ms",
      ),
      ...ratioRows("live/prepare", prepareMs, nodePrepareMs),
      valueRow(
        `node alone for live/prepare, ${opts.agents} agents: passes over its round trips per second`,
        "prepares/s",
        nodePerSecond,
        opts.agents,
      ),
      valueRow(
        `live/prepare at ${opts.agents} agents as a share of the node alone's throughput (goal >= 0.70)`,
        "x",
        perSecond / nodePerSecond,
        concurrentMs.length,
      ),
    ];
  } finally {
    if (child) await new Promise((res) => (child!.once("exit", res), child!.kill("SIGTERM")));
    await proxy.close();
    await ix.cleanup();
    await anvil.stop();
  }
}
