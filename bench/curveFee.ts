/**
 * Curve two_step fee check (issue 25 §1): live/submit with raw_txs [fee_transfer, swap] now sends
 * the fee, waits for its receipt and checks it before it sends the swap. Measured: the submit's
 * latency and the part spent waiting for and checking the fee (timings.fee_wait_ms), on anvil
 * with automine (each transaction mined on arrival: the floor, RPC reads only). On the chain the
 * wait is at most one block (the sequencer's) plus one poll interval (50 ms).
 */
import { parseEther } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { RateLimiter } from "../api/http/rateLimit.js";
import { freshenMarket, startStack } from "../test/helpers/stack.js";
import { summarize, type Row } from "./stats.js";

export async function benchCurveFee(opts: { trades: number }): Promise<Row[]> {
  // PGlite, as npm start embeds it (and as every earlier figure of this bench was measured).
  const stack = await startStack({
    store: "pglite",
    before: freshenMarket,
    limiter: new RateLimiter(Date.now, 10_000, false),
  });
  try {
    const { dn, agent } = stack;
    const a = privateKeyToAccount(generatePrivateKey());
    await dn.test.setBalance({ address: a.address, value: parseEther("1000") });
    const key = await agent.signIn(a);
    const token = (dn.universe.devnet!.fixtures as Record<string, `0x${string}`>).launchToken!;
    const total: number[] = [];
    const wait: number[] = [];
    for (let i = 0; i < opts.trades; i++) {
      const p = (
        await agent.post(
          "/live/prepare",
          {
            wallet: a.address,
            token_in: "ETH",
            token_out: token,
            amount_in: parseEther("0.001").toString(),
            accept_risks: ["NO_INDEPENDENT_MARK"],
          },
          key,
        )
      ).json;
      const raws = [await agent.sign(a, p.steps[0].tx), await agent.sign(a, p.steps[1].tx, { nonceOffset: 1 })];
      const t0 = performance.now();
      const s = await agent.post("/live/submit", { raw_txs: raws }, key);
      total.push(performance.now() - t0);
      if (s.status !== 200) throw new Error(`${s.status} ${JSON.stringify(s.json).slice(0, 300)}`);
      wait.push(s.json.timings.fee_wait_ms);
      await dn.mined(s.json.tx_hash);
    }
    return [
      summarize("live/submit curve two_step raw_txs [fee, swap], fee receipt awaited (latency)", total, "ms"),
      summarize("live/submit curve two_step: fee receipt wait and check (timings.fee_wait_ms)", wait, "ms"),
    ];
  } finally {
    await stack.stop();
  }
}
