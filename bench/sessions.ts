/**
 * Sessions benchmark (issue 13): live/session/trade ETH -> USDG, the co-signer in process,
 * against the service in its own process (bench/httpServer.ts) with the real indexer on
 * PostgreSQL. A counting proxy between the service and anvil measures the chain RPC round trips
 * per trade (goal: p50 under 40 ms, at most 4 round trips). The session is granted, signed and
 * set up as an agent would; the trades are co-signed, not sent.
 */
import { createWalletClient, http, parseEther, serializeSignature } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { single, summarize, type Row } from "./stats.js";
import { withServedChain } from "./servedChain.js";
import { ratioRows, replay, tripRecorder } from "./nodeAlone.js";

export async function benchSessions(opts: { trades: number }): Promise<Row[]> {
  const record = tripRecorder();
  return withServedChain(
    async ({ anvil, chain, test, pub, proxy, api }) => {
      const { post, signIn } = api;
      const wallet = privateKeyToAccount(generatePrivateKey());
      const executor = privateKeyToAccount(generatePrivateKey());
      await test.setBalance({ address: wallet.address, value: parseEther("100") });
      const walletKey = await signIn(wallet);
      const executorKey = await signIn(executor);
      const start = await post(
        "/live/session/grant",
        {
          wallet: wallet.address,
          executor: executor.address,
          max_trade_usd: 10,
          max_day_usd: 1_000,
          max_trades: 10_000,
          expires_in_s: 86_400,
        },
        walletKey,
      );
      if (start.status !== 200) throw new Error(`grant: ${JSON.stringify(start.json)}`);
      const td = start.json.sign.delegation.typed_data;
      const a = start.json.sign.authorization;
      const auth = await wallet.signAuthorization({
        contractAddress: a.contract_address,
        chainId: a.chain_id,
        nonce: a.nonce,
      });
      const on = await post(
        "/live/session/grant",
        {
          session_id: start.json.session_id,
          delegation_signature: await wallet.signTypedData({
            ...td,
            message: { ...td.message, salt: BigInt(td.message.salt) },
          }),
          authorization_signature: serializeSignature(auth),
        },
        walletKey,
      );
      if (on.status !== 200) throw new Error(`switch-on: ${JSON.stringify(on.json)}`);
      await pub.waitForTransactionReceipt({
        hash: await createWalletClient({ chain, transport: http(anvil.rpcUrl), account: wallet }).sendTransaction({
          to: wallet.address,
          data: "0x",
          authorizationList: [auth],
        }),
      });

      const body = { session_id: start.json.session_id, token_in: "ETH", token_out: "USDG", notional_usd: 1 };
      const stages: Record<string, number[]> = {};
      const timed = async (n: number) => {
        const ms: number[] = [];
        for (let i = 0; i < n; i++) {
          const t0 = performance.now();
          const r = await post("/live/session/trade", body, executorKey);
          ms.push(performance.now() - t0);
          if (r.status !== 200 || !r.json.simulated_ok)
            throw new Error(`${r.status} ${JSON.stringify(r.json).slice(0, 400)}`);
          for (const [k, v] of Object.entries(r.json.timings as Record<string, number>)) (stages[k] ??= []).push(v);
        }
        return ms;
      };
      await timed(10); // warm: token records, marks, pools, the co-signer's nonce
      proxy.reset();
      for (const k of Object.keys(stages)) delete stages[k];
      const ms = await timed(opts.trades);
      const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
      const breakdown = Object.entries(stages)
        .map(([k, v]) => `${k} ${median(v).toFixed(1)}`)
        .join(", ");
      const tripsPerTrade = proxy.counts.trips / opts.trades;
      const calls = proxy.counts.calls / opts.trades;
      const methods = Object.entries(proxy.counts.methods)
        .map(([m, n]) => `${m} ${(n / opts.trades).toFixed(2)}`)
        .join(", ");
      // Issue 31 point 1: one more trade's round trips, straight to anvil
      // (co-signing and the store are the service's own work).
      const trips = await record.during(() => post("/live/session/trade", body, executorKey));
      await replay(anvil.rpcUrl, trips, 10); // warm
      const nodeMs = await replay(anvil.rpcUrl, trips, opts.trades);
      return [
        summarize(
          `live/session/trade ETH->USDG: build, co-sign (row lock), simulate the redeem from the executor, store the ` +
            `plan (latency; server-side p50 stages: ${breakdown})`,
          ms,
          "ms",
        ),
        single(
          `live/session/trade: chain RPC round trips per trade [${methods}]`,
          `trips (${calls.toFixed(2)} calls)`,
          tripsPerTrade,
          opts.trades,
        ),
        summarize(
          `node alone for live/session/trade: its ${trips.length} round trips ` +
            `(${trips.map((t) => t.map((c) => c.method).join("+")).join(", ")}), one at a time`,
          nodeMs,
          "ms",
        ),
        ...ratioRows("live/session/trade", ms, nodeMs),
      ];
    },
    { onTrip: record.onTrip },
  );
}
