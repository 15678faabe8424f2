/**
 * SDK benchmark (issue 19): what re-deriving every answer costs an agent. One wallet trades
 * ETH -> USDG ($40) through `@pit/sdk` against the real service on a devnet with the indexer:
 * the prepared path (prepare, the calldata read back, its own quotes for QUOTE_OWN, IMPACT_OWN and
 * PRICE, sign, submit, the receipt checked), fast mode from the pinned table, and for comparison
 * the same trade prepared, signed and submitted with no check at all. Rate limits are off; every
 * trade is mined (anvil automines). Also: the pure calldata checks alone on one plan.
 */
import { parseEther } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createPitClient, readPins, verifyPlan } from "@pit/sdk";
import { RateLimiter } from "../api/http/rateLimit.js";
import { freshenMarket, startStack } from "../test/helpers/stack.js";
import { summarize, type Row } from "./stats.js";

export async function benchSdk(opts: { trades: number; checks: number }): Promise<Row[]> {
  // PGlite, as npm start embeds it (and as every earlier figure of this bench was measured).
  const stack = await startStack({
    store: "pglite",
    before: freshenMarket,
    limiter: new RateLimiter(Date.now, 10_000, false),
  });
  try {
    const account = privateKeyToAccount(generatePrivateKey());
    await stack.dn.test.setBalance({ address: account.address, value: parseEther("1000") });
    const pins = await readPins(stack.api.url);
    const pit = await createPitClient({ baseUrl: stack.api.url, rpcUrl: stack.dn.anvil.rpcUrl, account, pins });
    await pit.signIn();
    await pit.pinFastRoutes();
    const sell = { tokenIn: "ETH", tokenOut: "USDG", notionalUsd: 40 };
    const timed = async (f: () => Promise<unknown>) => {
      const out: number[] = [];
      for (let i = 0; i < opts.trades; i++) {
        const t0 = performance.now();
        await f();
        out.push(performance.now() - t0);
      }
      return out;
    };
    const sdkTrade = await timed(() => pit.trade(sell));
    const fast = await timed(async () => {
      const r = await pit.fastTrade({ ...sell, fallback: false });
      if (r.path !== "fast") throw new Error(`fast mode fell back: ${r.reason}`);
    });
    const key = pit.key!;
    const unchecked = await timed(async () => {
      const plan = await stack.agent.post(
        "/live/prepare",
        { wallet: account.address, ...{ token_in: "ETH", token_out: "USDG", notional_usd: 40 } },
        key,
      );
      const raw = await stack.agent.sign(account, plan.json.tx);
      const sent = await stack.agent.post("/live/submit", { raw_tx: raw }, key);
      await stack.dn.mined(sent.json.tx_hash);
    });
    const plan = (
      await stack.agent.post(
        "/live/prepare",
        { wallet: account.address, token_in: "ETH", token_out: "USDG", notional_usd: 40, slippage_bps: 50 },
        key,
      )
    ).json;
    const intent = {
      wallet: account.address,
      tokenIn: "ETH",
      tokenOut: "USDG",
      slippageBps: 50,
      acceptRisks: [],
      shield: false,
    };
    const pure: number[] = [];
    for (let i = 0; i < opts.checks; i++) {
      const t0 = performance.now();
      verifyPlan(plan, intent, pins);
      pure.push((performance.now() - t0) * 1000);
    }
    return [
      summarize("sdk: trade() ETH->USDG, prepare + every check + submit + receipt", sdkTrade, "ms"),
      summarize("sdk: fastTrade() ETH->USDG from the pinned table, mined", fast, "ms"),
      summarize("no SDK: prepare + sign + submit + receipt, unchecked", unchecked, "ms"),
      summarize("sdk: verifyPlan() calldata checks alone (pure)", pure, "µs"),
    ];
  } finally {
    await stack.stop();
  }
}
