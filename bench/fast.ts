/**
 * Fast-mode benchmark (issue 14): live/fast ETH -> USDG against the service in its own process
 * (bench/httpServer.ts) with the real indexer on PostgreSQL and a counting RPC proxy in front of
 * anvil (the relay's eth_sendRawTransaction goes through it too). The client builds each
 * transaction from the pinned route table as an SDK would and signs it locally (not timed); every
 * call relays a real trade. Measured in the same run: fast with simulation, fast with
 * `simulate: false`, prepare + submit for the same trade, and 16 agents trading fast at once.
 */
import { parseEther } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { poolRouteOf } from "../api/fast/rebuild.js";
import { buildRouterSwap } from "../api/trading/index.js";
import { loadConfig } from "../lib/config.js";
import { bpsOf } from "../lib/fees.js";
import type { FastPair } from "../lib/fastRoutes.js";
import { quoteExactInputSingle } from "../lib/quoter.js";
import { summarize, type Row } from "./stats.js";
import { withServedChain } from "./servedChain.js";

type Account = ReturnType<typeof privateKeyToAccount>;

export async function benchFast(opts: { trades: number; seconds: number; agents: number }): Promise<Row[]> {
  return withServedChain(async ({ anvil, test, pub, proxy, api }) => {
    const newAgent = async () => {
      const a = privateKeyToAccount(generatePrivateKey());
      await test.setBalance({ address: a.address, value: parseEther("1000") });
      return { a, key: await api.signIn(a), nonce: 0 };
    };
    const first = await newAgent();
    const terms = (await api.get("/live/fast/terms", first.key)).json;
    if (!terms.routes) throw new Error(`fast/terms: ${JSON.stringify(terms).slice(0, 300)}`);
    const pair = terms.routes.pairs.find((p: FastPair) => p.token_in === "ETH" && p.token_out === "USDG") as FastPair;
    const amountIn = parseEther("0.001");
    const fee = terms.fee.bps as number;
    const hop = pair.hops[0]!;
    const config = loadConfig({ ANVIL_PORT: String(anvil.port) });
    const c = {
      router: config.contracts.universalRouter,
      quoter: config.contracts.v4Quoter,
      weth: config.tokens.WETH!.address,
    };
    let minOut = 0n;
    // An SDK's minimum: the pinned pool's quote after the fee, less 2 % (refreshed as the pool moves).
    const refreshMin = async () => {
      const out = await quoteExactInputSingle(
        pub,
        c.quoter,
        {
          currency0: hop.currency0,
          currency1: hop.currency1,
          fee: hop.fee,
          tickSpacing: hop.tick_spacing,
          hooks: hop.hooks,
        },
        hop.zero_for_one,
        amountIn - bpsOf(amountIn, fee),
      );
      minOut = (out * 98n) / 100n;
    };
    await refreshMin();
    const baseFee = BigInt(terms.base_fee_wei);
    const body = async (ag: { a: Account; nonce: number }, simulate: boolean) => {
      const deadline = Math.floor(Date.now() / 1000) + 30;
      const data = buildRouterSwap({
        chainId: 4663,
        router: c.router,
        route: poolRouteOf(pair),
        tokenIn: pair.address_in,
        tokenOut: pair.address_out,
        weth: c.weth,
        amountIn,
        amountOutMin: minOut,
        fee: { side: "input", bps: fee, recipient: terms.fee.recipient, amount: bpsOf(amountIn, fee) },
        deadline,
        permit: null,
      }).data;
      const raw = await ag.a.signTransaction({
        type: "eip1559",
        chainId: 4663,
        to: c.router,
        data,
        value: amountIn,
        nonce: ag.nonce,
        gas: BigInt(pair.gas_floor + 60_000),
        maxFeePerGas: baseFee * 4n + 10n,
        maxPriorityFeePerGas: 1n,
      });
      return {
        raw_tx: raw,
        token_in: "ETH",
        token_out: "USDG",
        amount_in: amountIn.toString(),
        min_out: minOut.toString(),
        deadline,
        fee_bps: fee,
        simulate,
      };
    };
    const stages: Record<string, number[]> = {};
    const fastRun = async (ag: { a: Account; key: string; nonce: number }, n: number, simulate: boolean) => {
      ag.nonce = await pub.getTransactionCount({ address: ag.a.address, blockTag: "pending" });
      for (const k of Object.keys(stages)) delete stages[k];
      const ms: number[] = [];
      for (let i = 0; i < n; i++) {
        if (i % 25 === 0) await refreshMin();
        const b = await body(ag, simulate);
        const t0 = performance.now();
        const r = await api.post("/live/fast", b, ag.key);
        ms.push(performance.now() - t0);
        if (r.status !== 200) throw new Error(`fast: ${r.status} ${JSON.stringify(r.json).slice(0, 400)}`);
        for (const [k, v] of Object.entries(r.json.timings as Record<string, number>)) (stages[k] ??= []).push(v);
        ag.nonce++;
      }
      return ms;
    };
    await fastRun(first, 10, true); // warm: marks, pools, key, volume
    proxy.reset();
    const withSim = await fastRun(first, opts.trades, true);
    const simCounts = { ...proxy.counts, methods: { ...proxy.counts.methods } };
    const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
    const simStages = Object.entries(stages)
      .map(([k, v]) => `${k} ${median(v).toFixed(1)}`)
      .join(", ");
    proxy.reset();
    const noSim = await fastRun(first, opts.trades, false);
    const noSimCounts = { ...proxy.counts, methods: { ...proxy.counts.methods } };
    const noSimStages = Object.entries(stages)
      .map(([k, v]) => `${k} ${median(v).toFixed(1)}`)
      .join(", ");

    // prepare + submit for the same trade, the same agent.
    const prepareSubmit: number[] = [];
    proxy.reset();
    for (let i = 0; i < opts.trades; i++) {
      const t0 = performance.now();
      const p = await api.post(
        "/live/prepare",
        { wallet: first.a.address, token_in: "ETH", token_out: "USDG", amount_in: amountIn.toString() },
        first.key,
      );
      const t1 = performance.now();
      if (p.status !== 200 || !p.json.ready)
        throw new Error(`prepare: ${p.status} ${JSON.stringify(p.json).slice(0, 300)}`);
      const nonce = await pub.getTransactionCount({ address: first.a.address, blockTag: "pending" });
      const raw = await first.a.signTransaction({
        type: "eip1559",
        chainId: 4663,
        to: p.json.tx.to,
        data: p.json.tx.data,
        value: BigInt(p.json.tx.value),
        nonce,
        gas: 400_000n,
        maxFeePerGas: baseFee * 4n + 10n,
        maxPriorityFeePerGas: 1n,
      });
      const t2 = performance.now();
      const sub = await api.post("/live/submit", { raw_tx: raw }, first.key);
      if (sub.status !== 200) throw new Error(`submit: ${sub.status} ${JSON.stringify(sub.json).slice(0, 300)}`);
      prepareSubmit.push(t1 - t0 + (performance.now() - t2));
    }
    const psTrips = proxy.counts.trips / opts.trades;

    // Agents trading fast at once, each back to back.
    const agents = await Promise.all(Array.from({ length: opts.agents }, () => newAgent()));
    for (const ag of agents) ag.nonce = await pub.getTransactionCount({ address: ag.a.address, blockTag: "pending" });
    const until = performance.now() + opts.seconds * 1000;
    const concurrent: number[] = [];
    let failures = 0;
    await Promise.all(
      agents.map(async (ag) => {
        while (performance.now() < until) {
          const b = await body(ag, true);
          const t0 = performance.now();
          const r = await api.post("/live/fast", b, ag.key);
          if (r.status !== 200) failures++;
          else concurrent.push(performance.now() - t0), ag.nonce++;
        }
      }),
    );
    const all = (k: typeof simCounts) =>
      Object.entries(k.methods)
        .map(([m, n]) => `${m} ${(n / opts.trades).toFixed(2)}`)
        .join(", ");
    // The request's own calls (the relay watcher's receipt and block polls run beside it and are listed, not counted).
    const tripsBeforeRelay = (k: typeof simCounts) =>
      ["eth_call", "eth_simulateV1", "eth_getBlockByNumber", "eth_getStorageAt"].reduce(
        (n, m) => n + (k.methods[m] ?? 0),
        0,
      ) / opts.trades;
    const one = (name: string, unit: string, v: number, n = 1): Row => ({
      name,
      unit,
      n,
      p50: v,
      p99: v,
      min: v,
      max: v,
      mean: v,
    });
    return [
      summarize(
        `live/fast ETH->USDG with simulation, relayed (latency, client side; server p50 stages: ${simStages})`,
        withSim,
        "ms",
      ),
      one(
        `live/fast with simulation: chain RPC calls per trade, the relay watcher's included [${all(simCounts)}]; ` +
          `before the relay`,
        "request trips before the relay",
        tripsBeforeRelay(simCounts),
        opts.trades,
      ),
      summarize(
        `live/fast ETH->USDG with simulate false, relayed (latency, client side; server p50 stages: ${noSimStages})`,
        noSim,
        "ms",
      ),
      one(
        `live/fast simulate false: chain RPC calls per trade [${all(noSimCounts)}]; before the relay`,
        "request trips before the relay",
        tripsBeforeRelay(noSimCounts),
        opts.trades,
      ),
      summarize(
        "live/prepare + live/submit for the same trade (sum of the two calls, client side)",
        prepareSubmit,
        "ms",
      ),
      one(
        "live/prepare + live/submit: chain RPC round trips per trade (relay included)",
        "trips",
        psTrips,
        opts.trades,
      ),
      summarize(`live/fast with simulation, ${opts.agents} agents at once (latency)`, concurrent, "ms"),
      one(
        `live/fast, ${opts.agents} agents: relayed trades per second over ${opts.seconds} s (${failures} refused)`,
        "trades/s",
        concurrent.length / opts.seconds,
        concurrent.length,
      ),
    ];
  });
}
