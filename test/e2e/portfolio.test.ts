import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseEther, parseUnits, zeroAddress, type Address, type Hex } from "viem";
import type { privateKeyToAccount } from "viem/accounts";
import type { Devnet } from "../helpers/devnet.js";
import { serveApi, type Api } from "../helpers/api.js";
import { startStack, withTwapHistory, type Stack } from "../helpers/stack.js";
import { poolKeyOf } from "../helpers/trades.js";
import { RateLimiter } from "../../api/http/rateLimit.js";
import { sqlIndexedReads } from "../../api/ports/indexed.js";
import { startRpcProxy } from "../../devnet/rpcProxy.js";
import { erc20Abi } from "../../abis/erc20.js";
import { priceFeedAbi } from "../../abis/fixtures.js";
import { stateViewAbi } from "../../abis/uniswapV4.js";
import { priceFromX96, priceX96FromSqrt } from "../../lib/twap.js";

/** GET /me/portfolio over HTTP on the devnet, after real trades relayed by the service. */
type Account = ReturnType<typeof privateKeyToAccount>;
let dn: Devnet;
let api: Api;
let stack: Stack;
let nowMs = Date.now();
const clock = () => nowMs;
const fx = () => dn.universe.devnet!.fixtures as Record<string, Address>;

const latestTime = async () => Number((await dn.pub.getBlock()).timestamp);
const portfolio = (key: string, on: Api = api) =>
  on.call("GET", "/api/v1/me/portfolio", undefined, { authorization: `Bearer ${key}` });

/** Prepares, signs, relays and waits until the indexer has the trade mined. */
async function trade(a: Account, key: string, body: Record<string, unknown>): Promise<{ hash: Hex; amountIn: bigint }> {
  const p = await stack.agent.post("/live/prepare", { wallet: a.address, ...body }, key);
  expect(p.status, JSON.stringify(p.json)).toBe(200);
  const s = await stack.agent.post("/live/submit", { raw_tx: await stack.agent.sign(a, p.json.tx) }, key);
  expect(s.status, JSON.stringify(s.json)).toBe(200);
  await dn.mined(s.json.tx_hash);
  await stack.ix.waitFor(await dn.pub.getBlockNumber());
  for (let i = 0; i < 100; i++) {
    const t = (await stack.agent.get("/me/trades", key)).json.trades.find(
      (x: { tx_hash: string }) => x.tx_hash === s.json.tx_hash,
    );
    if (t?.status === "mined") return { hash: s.json.tx_hash, amountIn: BigInt(t.amount_in) };
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("trade never mined");
}

/** A wallet's balance of `token` at a block, read from the chain directly. */
async function balanceAt(token: Address, wallet: Address, blockNumber: bigint): Promise<bigint> {
  if (token === zeroAddress) return dn.pub.getBalance({ address: wallet, blockNumber });
  return dn.pub.readContract({ address: token, abi: erc20Abi, functionName: "balanceOf", args: [wallet], blockNumber });
}

async function priceX96At(poolId: Hex, blockNumber: bigint): Promise<bigint> {
  const [sqrt] = await dn.pub.readContract({
    address: dn.universe.contracts.stateView,
    abi: stateViewAbi,
    functionName: "getSlot0",
    args: [poolId],
    blockNumber,
  });
  return priceX96FromSqrt(sqrt);
}

let trader: Account;
let traderKey: string;
/** The trades of `trader`, in order: ETH->ORBIO, ETH->USDG, ETH->SHIFT (address-named). */
const trades: { hash: Hex; amountIn: bigint }[] = [];

beforeAll(async () => {
  stack = await startStack({ clock, before: withTwapHistory });
  ({ dn, api } = stack);
  nowMs = (await latestTime()) * 1000;
  trader = await dn.freshWallet(parseEther("10"));
  traderKey = await stack.agent.signIn(trader);
  trades.push(await trade(trader, traderKey, { token_in: "ETH", token_out: "ORBIO", notional_usd: 300 }));
  trades.push(
    await trade(trader, traderKey, { token_in: "ETH", token_out: "USDG", amount_in: parseEther("0.2").toString() }),
  );
  trades.push(
    await trade(trader, traderKey, {
      token_in: "ETH",
      token_out: fx().proxyToken!,
      notional_usd: 20,
      accept_risks: ["NO_INDEPENDENT_MARK"],
    }),
  );
}, 180_000);
afterAll(() => stack?.stop());

describe("GET /api/v1/me/portfolio", () => {
  it("holds exactly the chain's balances at the answer's block, valued at independent marks only", async () => {
    // The ORBIO pool's only swap in the window is the trader's: the TWAP follows from two chain reads.
    const pool = poolKeyOf(dn, "ORBIO", "USDG");
    const swap = await dn.pub.getTransactionReceipt({ hash: trades[0]!.hash });
    const swappedAt = Number((await dn.pub.getBlock({ blockNumber: swap.blockNumber })).timestamp);
    const p0 = await priceX96At(pool.id, swap.blockNumber - 1n);
    const p1 = await priceX96At(pool.id, swap.blockNumber);
    const now = (await latestTime()) + 120;
    nowMs = now * 1000;
    const meanX96 = (p0 * BigInt(swappedAt - (now - 1_800)) + p1 * BigInt(now - swappedAt)) / 1_800n;
    // The pool's price is currency1 per currency0; ORBIO's side depends on how the addresses sort.
    const orbioFirst = pool.currency0 === dn.token("ORBIO");
    const twap = orbioFirst ? priceFromX96(meanX96, 18, 6) : 1 / priceFromX96(meanX96, 6, 18);

    const res = await portfolio(traderKey);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    const b = res.json;
    expect(b).toMatchObject({ wallet: trader.address.toLowerCase(), cached: false, read_at: now });
    const block = BigInt(b.block);
    const byToken = Object.fromEntries(b.holdings.map((h: any) => [h.token, h]));
    for (const h of b.holdings)
      expect(BigInt(h.amount_atoms), h.token).toBe(await balanceAt(h.address, trader.address, block));
    // Every token the wallet could hold is either a row or zero on chain at that block.
    const shift = fx().proxyToken!.toLowerCase();
    expect(Object.keys(byToken).sort()).toEqual(["ETH", "ORBIO", "USDG", shift].sort());
    for (const symbol of ["WETH", "WBTC", "TSLA", "NVDA"])
      expect(await balanceAt(dn.token(symbol), trader.address, block), symbol).toBe(0n);
    expect(b.unread).toEqual([]);

    expect(byToken.ETH).toMatchObject({
      kind: "native",
      address: zeroAddress,
      decimals: 18,
      priced: true,
      price_usd: 3000,
      unpriced: null,
      mark: { source: "oracle", stale: false },
    });
    expect(byToken.USDG).toMatchObject({ kind: "core", priced: true, price_usd: 1, mark: { source: "fixed" } });
    expect(byToken.ORBIO).toMatchObject({ kind: "core", symbol: "ORBIO", priced: true, mark: { source: "twap" } });
    expect(byToken.ORBIO.price_usd / twap).toBeCloseTo(1, 9);
    expect(byToken[shift]).toMatchObject({
      kind: "token",
      symbol: "SHIFT",
      decimals: 18,
      priced: false,
      price_usd: null,
      value_usd: null,
      mark: null,
      unpriced: "NO_INDEPENDENT_MARK",
    });
    for (const h of b.holdings) expect(parseUnits(h.amount, h.decimals), h.token).toBe(BigInt(h.amount_atoms));
    for (const h of b.holdings.filter((x: any) => x.priced))
      expect(h.value_usd, h.token).toBeCloseTo(Number(h.amount) * h.price_usd, 5);
    expect(b.total_usd).toBeCloseTo(byToken.ETH.value_usd + byToken.USDG.value_usd + byToken.ORBIO.value_usd, 5);
    expect(b.priced.sort()).toEqual(["ETH", "ORBIO", "USDG"]);
    expect(b.unpriced).toEqual([{ token: shift, address: byToken[shift].address, code: "NO_INDEPENDENT_MARK" }]);

    // Volume: every trade had ETH on one side (a major), counted at ETH's mark.
    const ethIn = trades.reduce((sum, t) => sum + Number(t.amountIn) / 1e18, 0);
    expect(b.volume).toMatchObject({ window_days: 30, tier_bps: 25, posted_bps: 25 });
    expect(b.volume.volume_usd / (ethIn * 3000)).toBeCloseTo(1, 2);
    // The next tier is schedule 2's 20 bps from $100,000 (as /config publishes), the distance from the chain's volume.
    expect(b.volume.next_tier).toMatchObject({ bps: 20, min_30d_volume_usd: 100_000 });
    expect(Math.abs(b.volume.next_tier.volume_to_next_usd - (100_000 - ethIn * 3000))).toBeLessThan(
      ethIn * 3000 * 0.01,
    );
  });

  it("reuses one answer per wallet for 5 s, then reads the chain again", async () => {
    nowMs += 10_000;
    const first = (await portfolio(traderKey)).json;
    expect(first.cached).toBe(false);
    const eth = BigInt(first.holdings.find((h: any) => h.token === "ETH").amount_atoms);
    await dn.test.setBalance({ address: trader.address, value: eth + parseEther("1") });
    await dn.test.mine({ blocks: 1 });
    nowMs += 4_900;
    const again = (await portfolio(traderKey)).json;
    expect(again).toMatchObject({ cached: true, block: first.block, read_at: first.read_at });
    expect(again.holdings.find((h: any) => h.token === "ETH").amount_atoms).toBe(eth.toString());
    nowMs += 200;
    const fresh = (await portfolio(traderKey)).json;
    expect(fresh.cached).toBe(false);
    expect(fresh.block).toBeGreaterThan(first.block);
    expect(fresh.holdings.find((h: any) => h.token === "ETH").amount_atoms).toBe((eth + parseEther("1")).toString());
  });

  it("answers 429 RATE_LIMITED past the key's bucket (6, then one per 2 s)", async () => {
    let t = nowMs;
    const limited = await serveApi({
      rpcUrl: dn.anvil.rpcUrl,
      db: stack.store.db,
      indexed: stack.ix.liveReads().reads,
      clock: () => t,
      limiter: new RateLimiter(() => t, 1_000, true),
    });
    try {
      for (let i = 0; i < 6; i++) expect((await portfolio(traderKey, limited)).status, `call ${i + 1}`).toBe(200);
      const over = await portfolio(traderKey, limited);
      expect(over.status).toBe(429);
      expect(over.json.error.code).toBe("RATE_LIMITED");
      expect(Number(over.headers.get("retry-after"))).toBe(2);
      t += 2_000;
      expect((await portfolio(traderKey, limited)).status).toBe(200);
    } finally {
      await limited.close();
    }
  });

  it(
    "answers 502 RPC_UNAVAILABLE when the chain does not answer, 503 LIVE_UNAVAILABLE when marks cannot be " + "read",
    async () => {
      const proxy = await startRpcProxy(dn.anvil.rpcUrl);
      let t = nowMs;
      // The background workers that read the chain on their own (league standings, hosted ticks)
      // are off, and the treasury preview's first build is awaited: only the portfolio's calls are counted.
      const quiet = {
        league: { cacheMs: 0, settleIntervalMs: 0 },
        hostedScheduler: { intervalMs: 0 },
        treasury: { cacheMs: 0 },
      };
      const overProxy = await serveApi({
        rpcUrl: proxy.url,
        db: stack.store.db,
        indexed: stack.ix.liveReads().reads,
        clock: () => t,
        ...quiet,
      });
      const noIndexer = await serveApi({
        rpcUrl: dn.anvil.rpcUrl,
        db: stack.store.db,
        indexed: sqlIndexedReads(async () => {
          throw new Error("indexer gone");
        }),
        clock: () => t,
      });
      try {
        expect((await portfolio(traderKey, overProxy)).status).toBe(200);
        // The registry seeds core records in the background when an app starts (its reads go
        // through the same proxy); a search waits for that seed, so nothing else is counted below.
        expect(
          (await overProxy.call("GET", "/api/v1/tokens?q=USDG", undefined, { authorization: `Bearer ${traderKey}` }))
            .status,
        ).toBe(200);
        await overProxy.app.services.treasury.reader.refresh();
        // A fresh answer costs the chain two calls: the block number, then one multicall at it.
        proxy.reset();
        t += 6_000;
        expect((await portfolio(traderKey, overProxy)).json.cached).toBe(false);
        expect(proxy.counts.methods).toEqual({ eth_blockNumber: 1, eth_call: 1 });
        proxy.down();
        t += 6_000;
        const dead = await portfolio(traderKey, overProxy);
        expect(dead.status).toBe(502);
        expect(dead.json.error.code).toBe("RPC_UNAVAILABLE");
        expect(dead.headers.get("retry-after")).not.toBeNull();
        const blind = await portfolio(traderKey, noIndexer);
        expect(blind.status).toBe(503);
        expect(blind.json.error.code).toBe("LIVE_UNAVAILABLE");
      } finally {
        await overProxy.close();
        await noIndexer.close();
        await proxy.close();
      }
    },
  );
});

describe("one stale-mark rule: stats, trading and portfolio agree", () => {
  it(
    "a stock feed's Friday close is fresh on Sunday; a crypto feed as old, or a stock feed silent since Thursday, " +
      "is stale",
    async () => {
      // Sunday 23:30 UTC is 19:30 (EDT) or 18:30 (EST) in New York: the stock-token session is shut.
      const d = new Date((await latestTime()) * 1000 + 2 * 86_400_000);
      d.setUTCDate(d.getUTCDate() + ((7 - d.getUTCDay()) % 7));
      d.setUTCHours(23, 30, 0, 0);
      const sunday = d.getTime() / 1000;
      const friday = sunday - 48 * 3_600; // an hour or two before Friday's close
      const thursday = sunday - 80 * 3_600; // about 33 h of session before Friday's close
      const holder = await dn.freshWallet(parseEther("1"), [
        [dn.token("WBTC"), parseUnits("0.01", 8)],
        [dn.token("TSLA"), parseUnits("2", 18)],
        [dn.token("NVDA"), parseUnits("3", 18)],
      ]);
      const key = await stack.agent.signIn(holder);
      const feeds = fx();
      const at: [Address, number][] = [
        [feeds.feedETH!, sunday - 60],
        [feeds.feedUSDG!, sunday - 60],
        [feeds.feedWBTC!, friday],
        [feeds.feedTSLA!, friday],
        [feeds.feedNVDA!, thursday],
      ];
      for (const [feed, updatedAt] of at) {
        const [, answer] = await dn.pub.readContract({
          address: feed,
          abi: priceFeedAbi,
          functionName: "latestRoundData",
        });
        await dn.mined(
          await dn.walletFor(dn.deployer).writeContract({
            address: feed,
            abi: priceFeedAbi,
            functionName: "setAnswerAt",
            args: [answer, BigInt(updatedAt)],
          }),
        );
      }
      await stack.ix.waitFor(await dn.pub.getBlockNumber());
      // Every round must be readable where the service reads marks before the clock moves.
      const reads = stack.ix.liveReads().reads;
      for (const [feed, updatedAt] of at) {
        for (let i = 0; (await reads.latestMark(feed, sunday))?.updatedAt !== updatedAt; i++) {
          if (i > 100) throw new Error(`the indexer never showed ${feed}'s round at ${updatedAt}`);
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      nowMs = sunday * 1000;
      const expected: Record<string, boolean> = { WBTC: true, TSLA: false, NVDA: true };

      // Stats is rebuilt in the background (issue 26): the answer at the moved clock.
      await api.app.services.stats.refresh();
      const stats = (await api.call("GET", "/api/v1/stats")).json;
      const quotes: Record<string, any> = {};
      for (const symbol of Object.keys(expected)) {
        const q = await stack.agent.post(
          "/live/quote",
          { token_in: "USDG", token_out: symbol, amount_in: parseUnits("100", 6).toString() },
          key,
        );
        expect(q.status, JSON.stringify(q.json)).toBe(200);
        quotes[symbol] = q.json;
      }
      const held = (await portfolio(key)).json;
      for (const [symbol, stale] of Object.entries(expected)) {
        const row = stats.assets.find((a: any) => a.symbol === symbol);
        expect(row.stale, `stats ${symbol}: ${JSON.stringify(row)}`).toBe(stale);
        expect(quotes[symbol].marks.token_out.stale, `quote ${symbol}`).toBe(stale);
        expect(
          quotes[symbol].risks.some((r: any) => r.code === "STALE_MARK"),
          `STALE_MARK ${symbol}`,
        ).toBe(stale);
        expect(held.holdings.find((h: any) => h.token === symbol).mark.stale, `portfolio ${symbol}`).toBe(stale);
      }
      expect(stats.assets.find((a: any) => a.symbol === "ETH").stale).toBe(false);
    },
  );
});
