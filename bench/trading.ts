/**
 * Trading benchmark: live/quote and live/prepare (ETH -> USDG through the real Universal Router
 * and V4Quoter) against the service in its own process (bench/httpServer.ts), with the real
 * indexer on PostgreSQL. A counting proxy between the service and anvil measures the chain RPC
 * round trips each request costs. Then 16 agents prepare concurrently for a while.
 *
 * Issue 31 point 2: a second service process with LOCAL_QUOTES=off (every route through the V4Quoter) is measured
 * in the same run, one agent each, and both report their server side's own ms from their request logs.
 *
 * Issue 31 point 1: beside each, the node alone (bench/nodeAlone.ts): the route's own round trips, as
 * the proxy saw them for one request, sent straight to the same anvil one pass at a time, and from 16
 * agents for the same seconds; each route as a ratio to it.
 */
import type { ChildProcess } from "node:child_process";
import { createTestClient, http, parseEther, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { startAnvil } from "../devnet/anvil.js";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startRpcProxy } from "../devnet/rpcProxy.js";
import { devnetChain } from "../devnet/deploy.js";
import { ensureSnapshot, SNAPSHOT_FILE } from "../devnet/snapshot.js";
import { startIndexer } from "../test/helpers/indexer.js";
import { single, summarize, type Row } from "./stats.js";
import { apiClient, server } from "./http.js";
import { ratioRows, replay, replayConcurrent, tripRecorder, valueRow } from "./nodeAlone.js";

const QUOTE_BODY = { token_in: "ETH", token_out: "USDG", amount_in: parseEther("0.05").toString() };
const prepareBody = (a: { address: Address }) => ({ wallet: a.address, ...QUOTE_BODY });
/** Warm-up requests before each measured series (token records, marks, pools, key). */
const WARM = 20;

/** A request log file for one bench server process. */
const tempLog = (name: string) => join(tmpdir(), `bench-trading-${process.pid}-${name}.log`);

type Post = ReturnType<typeof apiClient>["post"];
type RpcProxy = Awaited<ReturnType<typeof startRpcProxy>>;

/** `n` sequential calls of `f`, each answered 200: their client-side ms. */
async function timed(n: number, f: () => Promise<{ status: number; json: any }>) {
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const r = await f();
    ms.push(performance.now() - t0);
    if (r.status !== 200) throw new Error(`${r.status} ${JSON.stringify(r.json).slice(0, 300)}`);
  }
  return ms;
}

/**
 * One agent's quotes then prepares (each series after WARM warm-ups) on one service process: client ms, and the chain
 * round trips per request the proxy counted.
 */
async function singleAgent(post: Post, proxy: RpcProxy, a: { address: Address; key: string }, n: number) {
  await timed(WARM, () => post("/live/quote", QUOTE_BODY, a.key));
  proxy.reset();
  const quoteMs = await timed(n, () => post("/live/quote", QUOTE_BODY, a.key));
  const quote = { trips: proxy.counts.trips / n, calls: proxy.counts.calls / n };
  await timed(WARM, () => post("/live/prepare", prepareBody(a), a.key));
  proxy.reset();
  const prepareMs = await timed(n, () => post("/live/prepare", prepareBody(a), a.key));
  const prepare = { trips: proxy.counts.trips / n, calls: proxy.counts.calls / n };
  const methods = Object.entries(proxy.counts.methods)
    .map(([m, k]) => `${m} ${(k / n).toFixed(2)}`)
    .join(", ");
  return { quoteMs, quote, prepareMs, prepare, methods };
}

/**
 * The server side's own ms of the measured series (singleAgent's order: WARM, then `n`) of `route`, from a stopped
 * server's request log (api/http/requestLog: from the request's start to its answer, inside the process).
 */
function serverMs(log: string, route: string, n: number): number[] {
  const lines = readFileSync(log, "utf8").split("\n").filter(Boolean);
  const ms = lines
    .map((l) => JSON.parse(l) as { route?: string; ms?: number; msg?: string })
    .filter((r) => r.msg === "request" && r.route?.endsWith(route))
    .map((r) => r.ms!);
  return ms.slice(WARM, WARM + n);
}

type Trips = { trips: number; calls: number };

/**
 * One route, one agent, with local quotes on (the service) and off (the V4Quoter, the baseline) in the same run:
 * client and server-side latency, the round trips, and the ratio of the p50s.
 */
function routeRows(route: string, on: Trips, off: Trips, n: number, ms: Record<"on" | "off", [number[], number[]]>) {
  const p50 = (xs: number[]) => summarize("", xs, "ms").p50;
  return [
    summarize(`${route}, one agent, local quotes on: client (latency)`, ms.on[0], "ms"),
    summarize(`${route}, one agent, local quotes on: server side`, ms.on[1], "ms"),
    single(
      `${route}, local quotes on: chain RPC round trips per request`,
      `trips (${on.calls.toFixed(2)} calls)`,
      on.trips,
      n,
    ),
    summarize(`${route}, one agent, local quotes off (V4Quoter): client (latency)`, ms.off[0], "ms"),
    summarize(`${route}, one agent, local quotes off (V4Quoter): server side`, ms.off[1], "ms"),
    single(
      `${route}, local quotes off: chain RPC round trips per request`,
      `trips (${off.calls.toFixed(2)} calls)`,
      off.trips,
      n,
    ),
    valueRow(`${route}: server side p50, on / off`, "x", p50(ms.on[1]) / p50(ms.off[1]), n),
  ];
}

/** Stops a bench server and waits for its exit (its request log is flushed then). */
const stop = (c: ChildProcess | null) =>
  c && c.exitCode === null ? new Promise((res) => (c.once("exit", res), c.kill("SIGTERM"))) : Promise.resolve();

export async function benchTrading(opts: { requests: number; seconds: number; agents: number }): Promise<Row[]> {
  await ensureSnapshot();
  const anvil = await startAnvil({ loadState: SNAPSHOT_FILE });
  const test = createTestClient({ chain: devnetChain(anvil.rpcUrl), transport: http(anvil.rpcUrl), mode: "anvil" });
  const ix = await startIndexer({ anvilPort: anvil.port, backend: "postgres" });
  const record = tripRecorder();
  const proxy = await startRpcProxy(anvil.rpcUrl, { onTrip: record.onTrip });
  let child: ChildProcess | null = null;
  let offChild: ChildProcess | null = null;
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
    // Two service processes on the same proxy, indexer and anvil, measured one after the other in the same run: local
    // quotes on (the service) and off (every route through the V4Quoter, as before issue 31 point 2).
    const logs = { on: tempLog("on"), off: tempLog("off") };
    const views = { BENCH_VIEWS: ix.viewsSchema, BENCH_DATABASE_URL: ix.databaseUrl! };
    const s = await server("app", proxy.port, { ...views, BENCH_REQUEST_LOG: logs.on });
    child = s.child;
    const off = await server("app", proxy.port, { ...views, BENCH_REQUEST_LOG: logs.off, LOCAL_QUOTES: "off" });
    offChild = off.child;
    const { post, signIn } = apiClient(s.port);
    const accounts = Array.from({ length: opts.agents }, () => privateKeyToAccount(generatePrivateKey()));
    const agents: { address: Address; key: string }[] = [];
    for (const a of accounts) {
      await test.setBalance({ address: a.address, value: parseEther("100") });
      agents.push({ address: a.address, key: await signIn(a) });
    }
    const a0 = agents[0]!;
    const offApi = apiClient(off.port);
    const quoter = await singleAgent(
      offApi.post,
      proxy,
      { ...a0, key: await offApi.signIn(accounts[0]!) },
      opts.requests,
    );
    const local = await singleAgent(post, proxy, a0, opts.requests);

    // The node alone: one request's round trips, replayed straight to anvil.
    const quoteTripList = await record.during(() => post("/live/quote", QUOTE_BODY, a0.key));
    const prepareTripList = await record.during(() => post("/live/prepare", prepareBody(a0), a0.key));
    await replay(anvil.rpcUrl, prepareTripList, 20); // warm
    const nodeQuoteMs = quoteTripList.length ? await replay(anvil.rpcUrl, quoteTripList, opts.requests) : null;
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
    for (const c of [child, offChild]) await stop(c);
    const serverSide = (log: string, route: string) => serverMs(log, route, opts.requests);
    return [
      ...routeRows("live/quote ETH->USDG", local.quote, quoter.quote, opts.requests, {
        on: [local.quoteMs, serverSide(logs.on, "/live/quote")],
        off: [quoter.quoteMs, serverSide(logs.off, "/live/quote")],
      }),
      ...routeRows(
        "live/prepare ETH->USDG incl. simulation and stored plan",
        local.prepare,
        quoter.prepare,
        opts.requests,
        {
          on: [local.prepareMs, serverSide(logs.on, "/live/prepare")],
          off: [quoter.prepareMs, serverSide(logs.off, "/live/prepare")],
        },
      ),
      single(
        `live/prepare: chain RPC calls per request, local quotes on [${local.methods}]`,
        "calls",
        local.prepare.calls,
      ),
      summarize(`live/prepare, ${opts.agents} concurrent agents (latency)`, concurrentMs, "ms"),
      single(
        `live/prepare, ${opts.agents} concurrent agents: throughput over ${opts.seconds} s`,
        "prepares/s",
        perSecond,
        concurrentMs.length,
      ),
      ...(nodeQuoteMs
        ? [
            summarize(`node alone for live/quote: its ${quoteTripList.length} round trip(s)`, nodeQuoteMs, "ms"),
            ...ratioRows("live/quote", local.quoteMs, nodeQuoteMs),
          ]
        : []),
      summarize(
        `node alone for live/prepare: its ${prepareTripList.length} round trips ` +
          `(${prepareTripList.map((t) => t.map((c) => c.method).join("+")).join(", ")}), one at a time`,
        nodePrepareMs,
        "ms",
      ),
      ...ratioRows("live/prepare", local.prepareMs, nodePrepareMs),
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
    for (const c of [child, offChild]) await stop(c);
    await proxy.close();
    await ix.cleanup();
    await anvil.stop();
  }
}
