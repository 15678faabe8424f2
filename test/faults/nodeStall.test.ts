import { parseEther, parseUnits } from "viem";
import type { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RateLimiter } from "../../api/http/rateLimit.js";
import { freshenMarket, startStack, type Stack } from "../helpers/stack.js";

/**
 * Issue 12 fault 5, the API's half: the chain node stops answering (SIGSTOP, connections open and
 * silent). Every route that needs the chain refuses within 5 s (a client's 15 s timeout must not
 * fire first), and the service answers again once the node does. The indexer's half (restarting
 * a stuck Ponder) is test/faults/stall.test.ts.
 */
let stack: Stack;
let wallet: ReturnType<typeof privateKeyToAccount>;
let key: string;
beforeAll(async () => {
  stack = await startStack({ before: freshenMarket, limiter: new RateLimiter(Date.now, 10_000, false) });
  wallet = await stack.dn.freshWallet(parseEther("10"), [[stack.dn.token("USDG"), parseUnits("1000", 6)]]);
  key = await stack.agent.signIn(wallet);
}, 120_000);
afterAll(async () => {
  stack?.dn.anvil.process.kill("SIGCONT");
  await stack?.stop();
});

const timed = async <T>(fn: () => Promise<T>) => {
  const t0 = performance.now();
  const out = await fn();
  return { out, ms: performance.now() - t0 };
};

describe("a chain node that stalls", () => {
  it("gets refusals within 5 s on every chain route, then normal answers once it resumes", async () => {
    const trade = { wallet: wallet.address, token_in: "ETH", token_out: "USDG", notional_usd: 10 };
    expect((await stack.agent.post("/live/prepare", trade, key)).status).toBe(200);

    stack.dn.anvil.process.kill("SIGSTOP");
    try {
      for (const [path, body] of [
        ["/live/prepare", trade],
        ["/live/quote", { token_in: "ETH", token_out: "USDG", notional_usd: 10 }],
        ["/live/prepare", trade],
      ] as const) {
        const { out, ms } = await timed(() => stack.agent.post(path, body, key));
        expect(ms, path).toBeLessThan(5_000);
        expect([out.status, out.json.error?.code], path).toEqual([502, "RPC_UNAVAILABLE"]);
        expect(Number(out.headers.get("retry-after"))).toBeGreaterThan(0);
      }
      const portfolio = await timed(() => stack.agent.get("/me/portfolio", key));
      expect(portfolio.ms).toBeLessThan(5_000);
      expect(portfolio.out.status).toBeGreaterThanOrEqual(500);
      expect(portfolio.out.json.error.code).toMatch(/^(RPC_UNAVAILABLE|LIVE_UNAVAILABLE)$/);
      const health = await timed(() => stack.api.call("GET", "/api/v1/health"));
      expect(health.ms).toBeLessThan(5_000);
      expect([health.out.status, health.out.json.status]).toEqual([503, "down"]);
    } finally {
      stack.dn.anvil.process.kill("SIGCONT");
    }

    // The budget's probe finds the node back within about a second.
    let answered = 0;
    for (let i = 0; i < 50 && answered === 0; i++) {
      await new Promise((r) => setTimeout(r, 200));
      if ((await stack.agent.post("/live/prepare", trade, key)).status === 200) answered++;
    }
    expect(answered).toBe(1);
  }, 90_000);
});
