import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeFunctionData, multicall3Abi, zeroAddress, type Address, type Hex, type PublicClient } from "viem";
import { v4QuoterAbi } from "../../abis/uniswapV4.js";
import { notLocal, quoteFromBook, type BookHop, type PoolBook } from "../../lib/localQuote.js";
import { poolId, sortCurrencies, type PoolKey } from "../../lib/v4.js";
import { createBookReader } from "../../api/market/book.js";
import { openFullRangePool, TICK_POOLS } from "../../devnet/deploy.js";
import { approveForRouter, routerSwap } from "../helpers/trades.js";
import { startIndexedDevnet } from "../helpers/stack.js";
import { freshStore, serveApi } from "../helpers/api.js";
import { agentOf } from "../helpers/agent.js";
import { startRpcProxy } from "../../devnet/rpcProxy.js";
import { RateLimiter } from "../../api/http/rateLimit.js";
import type { SqlIndexedReads } from "../../api/ports/indexed.js";

/**
 * Issue 31 point 2: quotes computed from the indexer's pool book (lib/localQuote) equal the
 * V4Quoter's to the wei at the book's block, on every hookless pool of the devnet, including the
 * tick pools' many narrow positions (multi-tick swaps, word boundaries, liquidity running out);
 * and what is not ours to compute (a hooked pool, a pool the indexer has not seen, an indexer
 * behind the chain) goes to the quoter.
 */
let stack: Awaited<ReturnType<typeof startIndexedDevnet>>;
let reads: SqlIndexedReads;

beforeAll(async () => {
  stack = await startIndexedDevnet();
  reads = stack.ix.liveReads().reads;
}, 240_000);
afterAll(async () => {
  await stack?.stop();
});

/** A fixed generator: failures repeat. */
function generator(seed: number) {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s / 0x7fffffff;
  };
}

type Case = { hops: BookHop[]; keys: PoolKey[]; currencyIn: Address; amountIn: bigint };

/** The quoter's answer for each case at `block` (null where it reverts), 40 quotes per eth_call. */
async function onChain(pub: PublicClient, quoter: Address, multicall: Address, cases: Case[], block: bigint) {
  const out: (bigint | null)[] = [];
  for (let i = 0; i < cases.length; i += 40) {
    const calls = cases.slice(i, i + 40).map((c) => ({
      target: quoter,
      allowFailure: true,
      callData:
        c.hops.length === 1
          ? encodeFunctionData({
              abi: v4QuoterAbi,
              functionName: "quoteExactInputSingle",
              args: [
                { poolKey: c.keys[0]!, zeroForOne: c.hops[0]!.zeroForOne, exactAmount: c.amountIn, hookData: "0x" },
              ],
            })
          : encodeFunctionData({
              abi: v4QuoterAbi,
              functionName: "quoteExactInput",
              args: [
                {
                  exactCurrency: c.currencyIn,
                  path: c.keys.map((k, j) => ({
                    intermediateCurrency: c.hops[j]!.zeroForOne ? k.currency1 : k.currency0,
                    fee: k.fee,
                    tickSpacing: k.tickSpacing,
                    hooks: k.hooks,
                    hookData: "0x" as Hex,
                  })),
                  exactAmount: c.amountIn,
                },
              ],
            }),
    }));
    const { result } = await pub.simulateContract({
      address: multicall,
      abi: multicall3Abi,
      functionName: "aggregate3",
      args: [calls],
      blockNumber: block,
      gas: 60_000_000n,
    });
    for (const r of result as readonly { success: boolean; returnData: Hex }[])
      out.push(r.success ? BigInt(r.returnData.slice(0, 66)) : null);
  }
  return out;
}

/** Random sizes (log-uniform, 1 atom to past the depth) and directions over every hookless pool, and two hops. */
function randomCases(book: PoolBook, n: number, rand: () => number): Case[] {
  const pools = [...book.pools.values()].filter((p) => notLocal(p) === null && p.liquidity > 0n);
  const cases: Case[] = [];
  const size = () => BigInt(Math.floor(10 ** (rand() * 27))) + 1n;
  while (cases.length < n) {
    const a = pools[Math.floor(rand() * pools.length)]!;
    const zeroForOne = rand() < 0.5;
    const currencyIn = zeroForOne ? a.key.currency0 : a.key.currency1;
    const mid = zeroForOne ? a.key.currency1 : a.key.currency0;
    const next = pools.filter((p) => p !== a && (p.key.currency0 === mid || p.key.currency1 === mid));
    if (rand() < 0.25 && next.length) {
      const b = next[Math.floor(rand() * next.length)]!;
      const z2 = b.key.currency0 === mid;
      cases.push({
        hops: [
          { id: a.id, zeroForOne },
          { id: b.id, zeroForOne: z2 },
        ],
        keys: [a.key, b.key],
        currencyIn,
        amountIn: size(),
      });
    } else cases.push({ hops: [{ id: a.id, zeroForOne }], keys: [a.key], currencyIn, amountIn: size() });
  }
  return cases;
}

/** Local and on-chain answers for `n` random cases at the book's block: every mismatch, and the counts. */
async function compare(n: number, seed: number) {
  const { dn, ix } = stack;
  await ix.waitFor(await dn.pub.getBlockNumber());
  const book = (await reads.poolBook(await allPools()))!;
  const cases = randomCases(book, n, generator(seed));
  const chain = await onChain(
    dn.pub,
    dn.universe.contracts.v4Quoter,
    dn.universe.contracts.multicall3,
    cases,
    BigInt(book.block),
  );
  const mismatches: string[] = [];
  let answered = 0;
  let multiTick = 0;
  // Declined: local says "ask the quoter" (past MAX_SWAP_STEPS) where the quoter answers; never a wrong amount.
  let declined = 0;
  for (const [i, c] of cases.entries()) {
    const local = await quoteFromBook(book, c.hops, c.amountIn);
    if (local) answered++;
    if (local && local[1] > 200_000n) multiTick++;
    if (!local && chain[i] !== null) declined++;
    else if ((local?.[0] ?? null) !== chain[i])
      mismatches.push(
        `${c.hops.map((h) => `${h.id.slice(0, 10)}:${h.zeroForOne}`)} ${c.amountIn}: ${local?.[0]} vs ${chain[i]}`,
      );
  }
  return { mismatches, answered, multiTick, declined, book };
}

/** Every pool the indexer holds. */
const allPools = async () => (await reads.pools()).map((p) => p.id);

describe("local quotes against the V4Quoter", () => {
  it("the indexer's book holds the tick pools' initialised ticks", async () => {
    const book = (await reads.poolBook(await allPools()))!;
    const tickA = stack.dn.universe.devnet!.fixtures.tickA!;
    const tickB = stack.dn.universe.devnet!.fixtures.tickB!;
    for (const spec of TICK_POOLS) {
      const [c0, c1] = spec.native ? [zeroAddress, tickA] : sortCurrencies(tickA, tickB);
      const key = { currency0: c0, currency1: c1, fee: spec.fee, tickSpacing: spec.tickSpacing, hooks: zeroAddress };
      const p = book.pools.get(poolId(key));
      expect(p, `${spec.fee}`).toBeDefined();
      expect(p!.ticks.length).toBeGreaterThan(spec.positions);
      expect(p!.ticks.reduce((s, t) => s + t.liquidityNet, 0n)).toBe(0n);
    }
  });

  it("equal to the wei on 2,000 random sizes and directions, one and two hops, multi-tick", async () => {
    const r = await compare(2_000, 31);
    expect(r.mismatches.slice(0, 10)).toEqual([]);
    // Most sizes fill (the rest run a pool dry: the quoter reverts and local says null, as compared above).
    expect(r.answered).toBeGreaterThan(1_000);
    expect(r.multiTick).toBeGreaterThan(50);
    // Sizes that walk past MAX_SWAP_STEPS words go to the quoter: a few of the largest, log-uniform up to 1e27 atoms.
    expect(r.declined).toBeLessThan(200);
  }, 300_000);

  it("still equal after swaps move the tick pools' prices across their positions", async () => {
    const { dn } = stack;
    const tickA = dn.universe.devnet!.fixtures.tickA!;
    const tickB = dn.universe.devnet!.fixtures.tickB!;
    const deployer = dn.deployer as unknown as Parameters<typeof approveForRouter>[1];
    await approveForRouter(dn, deployer, tickA);
    await approveForRouter(dn, deployer, tickB);
    const rand = generator(7);
    for (let i = 0; i < 12; i++) {
      const spec = TICK_POOLS[i % TICK_POOLS.length]!;
      const [c0, c1] = spec.native ? [zeroAddress, tickA] : sortCurrencies(tickA, tickB);
      const poolKey = {
        currency0: c0,
        currency1: c1,
        fee: spec.fee,
        tickSpacing: spec.tickSpacing,
        hooks: zeroAddress,
      };
      const zeroForOne = rand() < 0.5;
      const [tokenIn, tokenOut] = zeroForOne ? [c0, c1] : [c1, c0];
      const scale = tokenIn === zeroAddress ? 10n ** 18n : tokenIn === tickB ? 10n ** 6n : 10n ** 18n;
      const amountIn = (scale * BigInt(1 + Math.floor(rand() * 40))) / (tokenIn === zeroAddress ? 20n : 1n);
      await routerSwap(dn, deployer, {
        poolKey,
        tokenIn,
        tokenOut,
        amountIn,
        minOut: 0n,
        feeBips: 0n,
        feeRecipient: dn.deployer.address,
      }).catch(() => null);
    }
    const r = await compare(1_000, 32);
    expect(r.mismatches.slice(0, 10)).toEqual([]);
    expect(r.answered).toBeGreaterThan(500);
  }, 300_000);
});

/** A contract answering every call with its own selector: a hook with afterInitialize only (address bit 12). */
const HOOK = "0x1234567890123456789012345678901234561000" as Address;
const HOOK_CODE = "0x60003560e01c60e01b60005260206000f3" as Hex;

/** A new ETH/USDG pool of `key` at 50 USDG per ETH (in atoms), with a full-range position, mined on the devnet. */
async function openPool(key: PoolKey) {
  const { dn } = stack;
  const ctx = { wallet: dn.walletFor(dn.deployer), pub: dn.pub, account: dn.deployer, chain: dn.chain };
  const sqrtPriceX96 = 79228162514264337593543950336n * 50n;
  await openFullRangePool(ctx, dn.universe.contracts, key, sqrtPriceX96, 10n ** 18n, 2_500_000_000n);
}

describe("what goes to the V4Quoter", () => {
  it("a hooked pool: the book holds it, local quoting declines, the quoter answers", async () => {
    const { dn, ix } = stack;
    await dn.pub.request({ method: "anvil_setCode" as never, params: [HOOK, HOOK_CODE] as never });
    const usdg = dn.token("USDG");
    const key = { currency0: zeroAddress, currency1: usdg, fee: 3000, tickSpacing: 60, hooks: HOOK };
    await openPool(key);
    await ix.waitFor(await dn.pub.getBlockNumber());
    const book = (await reads.poolBook([poolId(key)]))!;
    const pool = book.pools.get(poolId(key))!;
    expect(pool.key.hooks.toLowerCase()).toBe(HOOK.toLowerCase());
    expect(pool.liquidity).toBeGreaterThan(0n);
    expect(notLocal(pool)).toBe("hooked pool");
    expect(await quoteFromBook(book, [{ id: pool.id, zeroForOne: true }], 10n ** 15n)).toBeNull();
    const [chain] = await onChain(
      dn.pub,
      dn.universe.contracts.v4Quoter,
      dn.universe.contracts.multicall3,
      [{ hops: [{ id: pool.id, zeroForOne: true }], keys: [key], currencyIn: zeroAddress, amountIn: 10n ** 15n }],
      BigInt(book.block),
    );
    expect(chain).toBeGreaterThan(0n);
  }, 120_000);

  it("a pool the indexer has not seen, and an indexer behind the chain: no book, the quoter answers", async () => {
    const { dn, ix } = stack;
    await ix.waitFor(await dn.pub.getBlockNumber());
    const reader = createBookReader({ indexed: reads, chain: dn.pub, clock: Date.now, devnet: true });
    expect((await reader([]))?.book.block).toBe(Number(await dn.pub.getBlockNumber()));
    const resume = ix.pause();
    try {
      const usdg = dn.token("USDG");
      const key = { currency0: zeroAddress, currency1: usdg, fee: 2500, tickSpacing: 50, hooks: zeroAddress };
      await openPool(key);
      // The indexer's book has not seen the pool: local quoting declines it.
      const stale = (await reads.poolBook([poolId(key)]))!;
      expect(stale.pools.has(poolId(key))).toBe(false);
      expect(await quoteFromBook(stale, [{ id: poolId(key), zeroForOne: true }], 10n ** 15n)).toBeNull();
      // And the reader gives no book while the indexer trails the chain's head (after its 100 ms copies).
      await new Promise((r) => setTimeout(r, 150));
      expect(await reader([poolId(key)])).toBeNull();
      const [chain] = await onChain(
        dn.pub,
        dn.universe.contracts.v4Quoter,
        dn.universe.contracts.multicall3,
        [
          {
            hops: [{ id: poolId(key), zeroForOne: true }],
            keys: [key],
            currencyIn: zeroAddress,
            amountIn: 10n ** 15n,
          },
        ],
        await dn.pub.getBlockNumber(),
      );
      expect(chain).toBeGreaterThan(0n);
    } finally {
      resume();
    }
    await ix.waitFor(await dn.pub.getBlockNumber());
  }, 120_000);
});

describe("over HTTP", () => {
  it("a hookless quote makes no eth_call and answers the quoter's amounts; a prepare asks the quoter", async () => {
    const { dn, ix } = stack;
    const seen: { method: string; params?: unknown }[] = [];
    const proxy = await startRpcProxy(dn.anvil.rpcUrl, { onCall: (m) => seen.push(m) });
    const stores = [await freshStore(), await freshStore()];
    // No rate limits: the warm-up below asks again until the tokens' first screen is done.
    const limiter = () => new RateLimiter(Date.now, 10_000, false);
    const on = await serveApi({ rpcUrl: proxy.url, db: stores[0]!.db, indexed: reads, limiter: limiter() });
    const off = await serveApi({
      rpcUrl: dn.anvil.rpcUrl,
      db: stores[1]!.db,
      indexed: reads,
      limiter: limiter(),
      config: { localQuotes: false },
    });
    try {
      const a = await dn.freshWallet();
      const [keyOn, keyOff] = [await agentOf(on, dn).signIn(a), await agentOf(off, dn).signIn(a)];
      const body = { token_in: "ETH", token_out: "USDG", amount_in: "50000000000000000", venues: ["v4"] };
      await ix.waitFor(await dn.pub.getBlockNumber());
      // Warm: token records (a first quote starts their screen: SCREEN_UNAVAILABLE until it is done), marks, the book.
      for (const [api, key] of [
        [on, keyOn],
        [off, keyOff],
      ] as const)
        for (let i = 0; (await agentOf(api, dn).post("/live/quote", body, key)).status !== 200; i++) {
          if (i > 100) throw new Error("the quote never answered 200");
          await new Promise((r) => setTimeout(r, 100));
        }
      seen.length = 0;
      const local = await agentOf(on, dn).post("/live/quote", body, keyOn);
      const quoter = await agentOf(off, dn).post("/live/quote", body, keyOff);
      expect(local.status, JSON.stringify(local.json)).toBe(200);
      expect(quoter.status, JSON.stringify(quoter.json)).toBe(200);
      expect(seen.filter((m) => m.method === "eth_call")).toEqual([]);
      const amounts = (q: typeof local) => q.json.routes.map((r: any) => [r.id, r.ok, r.amount_out]);
      expect(amounts(local)).toEqual(amounts(quoter));
      expect(local.json.routes.length).toBeGreaterThan(0);
      // A plan reads its quotes in the snapshot it is checked and simulated at: the V4Quoter in its multicall.
      seen.length = 0;
      const p = await agentOf(on, dn).post("/live/prepare", { ...body, wallet: a.address }, keyOn);
      expect(p.status, JSON.stringify(p.json)).toBe(200);
      const quoterHex = on.config.contracts.v4Quoter.toLowerCase().slice(2);
      const calls = seen.filter((m) => m.method === "eth_call").map((m) => JSON.stringify(m.params).toLowerCase());
      expect(calls.some((c) => c.includes(quoterHex))).toBe(true);
    } finally {
      await on.close();
      await off.close();
      for (const st of stores) await st.drop();
      await proxy.close();
    }
  }, 120_000);
});
