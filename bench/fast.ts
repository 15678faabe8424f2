/**
 * Fast-mode benchmark (issue 14): live/fast ETH -> USDG against the service in its own process
 * (bench/httpServer.ts) with the real indexer on PostgreSQL and a counting RPC proxy in front of
 * anvil (the relay's eth_sendRawTransaction goes through it too). The client builds each
 * transaction from the pinned route table as an SDK would and signs it locally (not timed); every
 * call relays a real trade. Measured in the same run: fast with simulation, fast with
 * `simulate: false`, prepare + submit for the same trade, and 16 agents trading fast at once.
 *
 * Issue 31 point 3: every fast run twice, against a second service process with SECP256K1_BACKEND=viem and
 * KECCAK_BACKEND=viem (recovery and keccak in viem's JavaScript) and the main one (libsecp256k1, lib/secp.ts, and
 * the Keccak team's C, lib/keccak.ts); the
 * "node alone" line sends the same JSON-RPC calls the route made (the eth_simulateV1 or eth_call the
 * proxy saw, replayed in order, then an eth_sendRawTransaction of a fresh signed swap) straight to
 * the same anvil, one at a time like the route; and recovery alone, viem against native.
 */
import { keccak256, parseEther, toHex, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { poolRouteOf } from "../api/fast/rebuild.js";
import { buildRouterSwap } from "../api/trading/index.js";
import { loadConfig } from "../lib/config.js";
import { bpsOf } from "../lib/fees.js";
import type { FastPair } from "../lib/fastRoutes.js";
import { quoteExactInputSingle } from "../lib/quoter.js";
import { loadNative, secpWith } from "../lib/secp.js";
import type { apiClient } from "./http.js";
import { single, summarize, type Row } from "./stats.js";
import { withServedChain } from "./servedChain.js";
import { sendTrip, valueRow } from "./nodeAlone.js";

type Account = ReturnType<typeof privateKeyToAccount>;
type Api = ReturnType<typeof apiClient>;
type Agent = { a: Account; key: string; nonce: number; on: Api };

export async function benchFast(opts: { trades: number; seconds: number; agents: number }): Promise<Row[]> {
  /** The chain calls the service made while `recording`, in order (the node-alone line replays them). */
  const recorded: { method: string; params?: unknown }[] = [];
  let recording = false;
  const onCall = (m: { method: string; params?: unknown }) => void (recording && recorded.push(m));
  return withServedChain(
    async ({ anvil, test, pub, proxy, api, serve }) => {
      const apiJs = await serve({ SECP256K1_BACKEND: "viem", KECCAK_BACKEND: "viem" });
      // The same service reading anvil itself, no proxy between: the figure issue 31 holds beside the node alone.
      const apiDirect = await serve({}, { direct: true });
      const newAgent = async (on: Api = api): Promise<Agent> => {
        const a = privateKeyToAccount(generatePrivateKey());
        await test.setBalance({ address: a.address, value: parseEther("1000") });
        return { a, key: await on.signIn(a), nonce: 0, on };
      };
      const first = await newAgent();
      const firstJs = await newAgent(apiJs);
      const alone = await newAgent();
      const firstDirect = await newAgent(apiDirect);
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
      const body = async (ag: Pick<Agent, "a" | "nonce">, simulate: boolean) => {
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
      const fastRun = async (ag: Agent, n: number, simulate: boolean) => {
        ag.nonce = await pub.getTransactionCount({ address: ag.a.address, blockTag: "pending" });
        for (const k of Object.keys(stages)) delete stages[k];
        const ms: number[] = [];
        for (let i = 0; i < n; i++) {
          if (i % 25 === 0) await refreshMin();
          const b = await body(ag, simulate);
          const t0 = performance.now();
          const r = await ag.on.post("/live/fast", b, ag.key);
          ms.push(performance.now() - t0);
          if (r.status !== 200) throw new Error(`fast: ${r.status} ${JSON.stringify(r.json).slice(0, 400)}`);
          for (const [k, v] of Object.entries(r.json.timings as Record<string, number>)) (stages[k] ??= []).push(v);
          ag.nonce++;
        }
        return ms;
      };
      // The node alone: the route's own chain calls, straight to anvil, one trade at a time.
      const nodeCall = (method: string, params: unknown) => sendTrip(anvil.rpcUrl, [{ method, params }]);
      const nodeAlone = async (calls: { method: string; params?: unknown }[], n: number, simulate: boolean) => {
        alone.nonce = await pub.getTransactionCount({ address: alone.a.address, blockTag: "pending" });
        const ms: number[] = [];
        for (let i = 0; i < n; i++) {
          const raw = (await body(alone, simulate)).raw_tx;
          const t0 = performance.now();
          const c = calls[i % calls.length]!;
          await nodeCall(c.method, c.params);
          await nodeCall("eth_sendRawTransaction", [raw]);
          ms.push(performance.now() - t0);
          alone.nonce++;
        }
        return ms;
      };
      const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
      const stagesNow = () =>
        Object.entries(stages)
          .map(([k, v]) => `${k} ${median(v).toFixed(1)}`)
          .join(", ");
      await fastRun(first, 10, true); // warm: marks, pools, key, volume
      await fastRun(firstJs, 10, true);
      await fastRun(firstDirect, 10, true);
      /** One mode of the route: viem's JavaScript, then the native backends, then the node alone on its calls. */
      const mode = async (simulate: boolean) => {
        proxy.reset();
        const js = await fastRun(firstJs, opts.trades, simulate);
        const jsStages = stagesNow();
        proxy.reset();
        recorded.length = 0;
        recording = true;
        const native = await fastRun(first, opts.trades, simulate);
        recording = false;
        const counts = { ...proxy.counts, methods: { ...proxy.counts.methods } };
        const nativeStages = stagesNow();
        const direct = await fastRun(firstDirect, opts.trades, simulate);
        const directStages = stagesNow();
        const calls = recorded.filter((m) => m.method === (simulate ? "eth_simulateV1" : "eth_call"));
        await nodeAlone(calls, 5, simulate); // warm
        const node = await nodeAlone(calls, opts.trades, simulate);
        return { js, jsStages, native, nativeStages, direct, directStages, counts, node };
      };
      const sim = await mode(true);
      const noSimMode = await mode(false);
      const [withSim, simCounts, simStages] = [sim.native, sim.counts, sim.nativeStages];
      const [noSim, noSimCounts, noSimStages] = [noSimMode.native, noSimMode.counts, noSimMode.nativeStages];

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

      // Agents trading fast at once, each back to back: on viem's JavaScript, then on the native backends.
      const atOnce = async (on: Api) => {
        const agents = await Promise.all(Array.from({ length: opts.agents }, () => newAgent(on)));
        for (const ag of agents)
          ag.nonce = await pub.getTransactionCount({ address: ag.a.address, blockTag: "pending" });
        const until = performance.now() + opts.seconds * 1000;
        const ms: number[] = [];
        let refused = 0;
        await Promise.all(
          agents.map(async (ag) => {
            while (performance.now() < until) {
              const b = await body(ag, true);
              const t0 = performance.now();
              const r = await on.post("/live/fast", b, ag.key);
              if (r.status !== 200) refused++;
              else ms.push(performance.now() - t0), ag.nonce++;
            }
          }),
        );
        return { ms, refused };
      };
      const concurrentJs = await atOnce(apiJs);
      const { ms: concurrent, refused: failures } = await atOnce(api);
      const micro = await recoveryAlone(first.a, 300);

      const all = (k: typeof simCounts) =>
        Object.entries(k.methods)
          .map(([m, n]) => `${m} ${(n / opts.trades).toFixed(2)}`)
          .join(", ");
      // The request's own calls (the relay watcher's receipt and block polls run beside it: listed, not counted).
      const tripsBeforeRelay = (k: typeof simCounts) =>
        ["eth_call", "eth_simulateV1", "eth_getBlockByNumber", "eth_getStorageAt"].reduce(
          (n, m) => n + (k.methods[m] ?? 0),
          0,
        ) / opts.trades;
      return [
        summarize(
          `live/fast ETH->USDG with simulation, relayed (latency, client side; server p50 stages: ${simStages})`,
          withSim,
          "ms",
        ),
        single(
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
        single(
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
        single(
          "live/prepare + live/submit: chain RPC round trips per trade (relay included)",
          "trips",
          psTrips,
          opts.trades,
        ),
        summarize(`live/fast with simulation, ${opts.agents} agents at once (latency)`, concurrent, "ms"),
        summarize(
          `live/fast with simulation, ${opts.agents} agents at once, viem's JavaScript (recovery, keccak; latency; ` +
            `${concurrentJs.ms.length / opts.seconds} trades/s, ${concurrentJs.refused} refused)`,
          concurrentJs.ms,
          "ms",
        ),
        single(
          `live/fast, ${opts.agents} agents: relayed trades per second over ${opts.seconds} s (${failures} refused)`,
          "trades/s",
          concurrent.length / opts.seconds,
          concurrent.length,
        ),
        ...issue31Rows(opts.trades, sim, noSimMode),
        summarize("recovery alone: recoverTransactionAddress of a fast swap, viem (JavaScript)", micro.viemTx, "ms"),
        summarize("recovery alone: recoverTransactionAddress of a fast swap, lib/secp (native)", micro.nativeTx, "ms"),
        summarize("recovery alone: recoverAddress (hash + signature), viem (JavaScript)", micro.viemHash, "ms"),
        summarize("recovery alone: recoverAddress (hash + signature), lib/secp (native)", micro.nativeHash, "ms"),
      ];
    },
    { onCall },
  );
}

type Mode = {
  js: number[];
  jsStages: string;
  native: number[];
  direct: number[];
  directStages: string;
  node: number[];
};

/** Issue 31's lines for the two single-agent modes: the route on each backend, the node alone, the ratio. */
function issue31Rows(trades: number, sim: Mode, noSim: Mode): Row[] {
  const p50 = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
  return [
    ["with simulation", sim],
    ["simulate false", noSim],
  ].flatMap(([label, m]) => {
    const x = m as Mode;
    const node = label === "simulate false" ? "eth_call" : "eth_simulateV1";
    const beyond = (route: number[]) => (p50(route) - p50(x.node)).toFixed(1);
    return [
      summarize(
        `live/fast ${label}, viem's JavaScript: recovery and keccak (client side; server p50 stages: ${x.jsStages})`,
        x.js,
        "ms",
      ),
      summarize(
        `live/fast ${label}, native, the service reading anvil itself, no proxy between (client side; server p50 ` +
          `stages: ${x.directStages})`,
        x.direct,
        "ms",
      ),
      summarize(
        `node alone for live/fast ${label}: its ${node} + eth_sendRawTransaction straight to anvil, one at a time`,
        x.node,
        "ms",
      ),
      valueRow(
        `live/fast ${label} (native, no proxy) as a ratio to the node alone, p50 over p50; service's own p50 time ` +
          `beyond it ${beyond(x.direct)} ms (through the counting proxy: ${beyond(x.native)} ms)`,
        "x",
        p50(x.direct) / p50(x.node),
        trades,
      ),
    ];
  });
}

/** Recovery alone in this process, one at a time: viem's JavaScript against lib/secp's binary. */
async function recoveryAlone(a: Account, n: number) {
  const native = secpWith(loadNative());
  const js = secpWith(null);
  const raws: Hex[] = [];
  const sigs: { hash: Hex; signature: Hex }[] = [];
  for (let i = 0; i < n; i++) {
    raws.push(
      await a.signTransaction({
        type: "eip1559",
        chainId: 4663,
        to: a.address,
        data: keccak256(toHex(i)),
        nonce: i,
        gas: 300_000n,
        maxFeePerGas: 10n ** 9n,
        maxPriorityFeePerGas: 1n,
      }),
    );
    const hash = keccak256(toHex(`m${i}`));
    sigs.push({ hash, signature: await a.sign({ hash }) });
  }
  const time = async (f: (i: number) => Promise<unknown>) => {
    const ms: number[] = [];
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      await f(i);
      ms.push(performance.now() - t0);
    }
    return ms;
  };
  const tx = (s: typeof js) => (i: number) => s.recoverTransactionAddress({ serializedTransaction: raws[i] as never });
  const hashed = (s: typeof js) => (i: number) => s.recoverAddress(sigs[i]!);
  await time(tx(js)), await time(tx(native)); // warm
  return {
    viemTx: await time(tx(js)),
    nativeTx: await time(tx(native)),
    viemHash: await time(hashed(js)),
    nativeHash: await time(hashed(native)),
  };
}
