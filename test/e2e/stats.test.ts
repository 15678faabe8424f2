import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serveApi, type Api } from "../helpers/api.js";
import { startStack, type Stack } from "../helpers/stack.js";
import { RateLimiter } from "../../api/http/rateLimit.js";
import { sqlIndexedReads } from "../../api/ports/indexed.js";
import { freePort } from "../../devnet/anvil.js";

let store: Stack["store"];
let api: Api;
let now = Date.now();
const clock = () => now;

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ clock, limiter: new RateLimiter(clock, 1000, false) });
  ({ store, api } = stack);
}, 120_000);
afterAll(() => stack?.stop());

describe("GET /api/v1/stats", () => {
  it("reports marks, mids, spreads and $1,000 buy/sell prices for the core assets", async () => {
    const res = await api.call("GET", "/api/v1/stats");
    expect(res.status).toBe(200);
    const s = res.json;
    expect(s.status).toBe("ok");
    expect(s.prices).toMatchObject({ ref_size_usd: 1000 });
    expect(s.block.number).toBeGreaterThan(0);
    expect(s.fee_bps).toEqual({ major_max: 25, major_min: 10, other: 50, shield_add: 10 });
    expect(s.relay).toBe(true);
    expect(s.latency_ms.rpc).toBeGreaterThan(0);
    expect(s.latency_ms.ref_quotes).toBeGreaterThan(0);
    expect(s.latency_ms.sequencer).toBeGreaterThan(0);
    expect(s.assets.map((a: any) => a.symbol).sort()).toEqual(["ETH", "NVDA", "ORBIO", "TSLA", "USDG", "WBTC", "WETH"]);
    // What the quoter can use among ETH (WETH wraps into it), USDG, WBTC, ORBIO, TSLA, NVDA: five
    // pools against USDG, and the ten pairs of the other five two hops through USDG.
    expect(s.routes).toBe(15);
    const bySymbol = Object.fromEntries(s.assets.map((a: any) => [a.symbol, a]));
    expect(bySymbol.USDG).toMatchObject({ mark_source: "oracle", buy: null, sell: null, routes: 5, stale: false });
    expect(bySymbol.USDG.mark).toBeCloseTo(1, 3);
    expect(bySymbol.WETH).toMatchObject({ mark: bySymbol.ETH.mark, mid: bySymbol.ETH.mid, routes: 5 });
    expect(bySymbol.TSLA.routes).toBe(5);
    const expectMark: Record<string, number> = { ETH: 3000, WETH: 3000, WBTC: 60000, TSLA: 250, NVDA: 130, ORBIO: 0.5 };
    for (const a of s.assets.filter((x: any) => x.symbol !== "USDG")) {
      expect(a.mark, a.symbol).toBeCloseTo(expectMark[a.symbol]!, 1);
      expect(a.mark_source, a.symbol).toBe(a.symbol === "ORBIO" ? "pool-mid" : "oracle");
      expect(a.kind, a.symbol).toBe(a.symbol === "TSLA" || a.symbol === "NVDA" ? "stock" : "crypto");
      expect(a.mid / expectMark[a.symbol]!, a.symbol).toBeCloseTo(1, 3);
      expect(a.buy.price).toBeGreaterThan(a.sell.price);
      expect(a.buy.vs_mark_bps).toBeGreaterThan(0);
      expect(a.sell.vs_mark_bps).toBeLessThan(0);
      expect(a.spread_bps).toBeGreaterThan(0);
      expect(a.spread_bps).toBeLessThan(150);
      expect(a.buy.venue).toMatch(/^uniswap-v4:\d+$/);
      expect(a.stale).toBe(false);
    }
  });

  it("is rebuilt at most every 5 s and shared", async () => {
    const first = (await api.call("GET", "/api/v1/stats")).json;
    now += 3000;
    const second = (await api.call("GET", "/api/v1/stats")).json;
    expect(second.generated_at).toBe(first.generated_at);
    expect(second.cached_s).toBe(first.cached_s + 3);
    now += 2500;
    // Due now: the instance's loop rebuilds it (within its 500 ms look), no reader does.
    let third = (await api.call("GET", "/api/v1/stats")).json;
    for (let i = 0; i < 100 && third.generated_at === first.generated_at; i++) {
      await new Promise((r) => setTimeout(r, 100));
      third = (await api.call("GET", "/api/v1/stats")).json;
    }
    expect(third.generated_at).toBeGreaterThan(first.generated_at);
    expect(third.cached_s).toBe(0);
  });

  it(
    "readers never start a recompute: past its age, a flood of reads gets the last answer at once and no build " +
      "starts (issue 26 point 4)",
    async () => {
      const counter = await buildCounter();
      let at = Date.now();
      // A loop that, after its first build, does not look again for an hour: only a reader could start a build.
      const quiet = await serveApi({
        rpcUrl: stack.dn.anvil.rpcUrl,
        db: store.db,
        indexed: stack.ix.liveReads().reads,
        clock: () => at,
        limiter: new RateLimiter(() => at, 1000, false),
        config: { sequencerUrl: counter.url },
        stats: { pollMs: 3_600_000 },
      });
      try {
        const first = (await quiet.call("GET", "/api/v1/stats")).json;
        expect(first.status).toBe("ok");
        expect(counter.builds()).toBe(1);
        at += 60_000;
        const flood = await Promise.all(Array.from({ length: 50 }, () => quiet.call("GET", "/api/v1/stats")));
        for (const r of flood) {
          expect(r.status).toBe(200);
          expect(r.json.generated_at).toBe(first.generated_at);
          expect(r.json.cached_s).toBeGreaterThanOrEqual(60);
        }
        expect(counter.builds()).toBe(1);
      } finally {
        await quiet.close();
        await counter.close();
      }
    },
  );

  it("a flood of reads starts at most one build per 5 s: the loop's", async () => {
    const counter = await buildCounter();
    const busy = await serveApi({
      rpcUrl: stack.dn.anvil.rpcUrl,
      db: store.db,
      indexed: stack.ix.liveReads().reads,
      limiter: new RateLimiter(Date.now, 1000, false),
      config: { sequencerUrl: counter.url },
    });
    try {
      const t0 = Date.now();
      let reads = 0;
      while (Date.now() - t0 < 7_000) {
        const batch = await Promise.all(Array.from({ length: 20 }, () => busy.call("GET", "/api/v1/stats")));
        for (const r of batch) expect(r.status).toBe(200);
        reads += batch.length;
      }
      const elapsedS = (Date.now() - t0) / 1000;
      expect(reads).toBeGreaterThan(100);
      expect(counter.builds()).toBeGreaterThanOrEqual(1);
      // The first build, then one per 5 s of the flood at most (plus one a slow machine may straddle).
      expect(counter.builds()).toBeLessThanOrEqual(Math.floor(elapsedS / 5) + 2);
    } finally {
      await busy.close();
      await counter.close();
    }
  });

  it("answers 200 with nulls for what cannot be read", async () => {
    const broken = await serveApi({
      rpcUrl: `http://127.0.0.1:${await freePort()}`,
      db: store.db,
      indexed: sqlIndexedReads(async () => {
        throw new Error("indexer gone");
      }),
      limiter: new RateLimiter(Date.now, 100, false),
    });
    const res = await broken.call("GET", "/api/v1/stats");
    await broken.close();
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ status: "degraded", block: null, prices: null, relay: false });
    for (const a of res.json.assets)
      expect(a).toMatchObject({ mark: null, mid: null, buy: null, sell: null, spread_bps: null });
  });
});

/** A stand-in sequencer that only counts eth_chainId: each stats build asks it once (api/server/stats.ts). */
async function buildCounter() {
  let n = 0;
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const msg = JSON.parse(body || "{}");
      if (msg.method === "eth_chainId") n++;
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ jsonrpc: "2.0", id: msg.id ?? null, result: "0x1237" }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    builds: () => n,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}
