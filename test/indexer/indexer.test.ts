import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  encodeAbiParameters,
  encodeFunctionData,
  encodePacked,
  getAddress,
  parseEther,
  parseUnits,
  zeroAddress,
  type Hex,
} from "viem";
import { startDevnet, type Devnet } from "../helpers/devnet.js";
import { startIndexer, type Indexer, type IndexerBackend } from "../helpers/indexer.js";
import { approveForRouter, poolKeyOf, quoteExactIn, routerSwap, swapCalldata } from "../helpers/trades.js";
import { erc20Abi } from "../../abis/erc20.js";
import { launchpadAbi, priceFeedAbi } from "../../abis/fixtures.js";
import { stateViewAbi } from "../../abis/uniswapV4.js";
import {
  delegationArrayParam,
  delegationManagerAbi,
  delegationTypes,
  ROOT_AUTHORITY,
  SINGLE_DEFAULT_MODE,
} from "../../abis/delegation.js";
import { mintFullRange, tickPoolKeys, type Ctx } from "../../devnet/deploy.js";
import { poolId } from "../../lib/v4.js";
import { priceX96FromSqrt } from "../../lib/twap.js";
import type { SqlIndexedReads } from "../../api/ports/indexed.js";

/**
 * The indexer end to end on a private devnet: swaps, liquidity, feeds, ETH and ERC-20 fees, a
 * reverted and a delegated trade, outside transfers; every row checked through the read module.
 */
describe.each<IndexerBackend>(["postgres", "pglite"])("indexer on %s", (backend) => {
  let dn: Devnet;
  let ix: Indexer;
  let reads: SqlIndexedReads;
  let closeReads: () => Promise<void> = async () => {};
  const facts: Record<string, any> = {};

  beforeAll(async () => {
    dn = await startDevnet();
    // From the chain's first block: the backfill is under test here (other files' indexers copy the run's template).
    ix = await startIndexer({ anvilPort: dn.anvil.port, backend, fromScratch: true });
    const u = dn.universe;
    const usdg = dn.token("USDG");
    const platform = getAddress(u.devnet!.accounts.platform!);
    const ethPool = poolKeyOf(dn, "ETH", "USDG");
    const setTime = (t: number) => dn.test.setNextBlockTimestamp({ timestamp: BigInt(t) });
    const slot0 = async () =>
      (
        await dn.pub.readContract({
          address: u.contracts.stateView,
          abi: stateViewAbi,
          functionName: "getSlot0",
          args: [ethPool.id],
        })
      )[0];

    const latest = await dn.pub.getBlock();
    const T = Math.max(Math.floor(Date.now() / 1000), Number(latest.timestamp)) + 10_000;
    facts.T = T;
    facts.p0 = priceX96FromSqrt(await slot0());

    // 1) ETH -> USDG with an output-side ERC-20 fee (PAY_PORTION), at T.
    const trader = await dn.freshWallet(parseEther("100"), [[usdg, parseUnits("50000", 6)]]);
    facts.trader = trader.address;
    // Approvals for trade 2 first: nothing may mine between trades 1 and 2 (same second).
    await approveForRouter(dn, trader, usdg);
    const q1 = await quoteExactIn(dn, ethPool, true, parseEther("2"));
    await setTime(T);
    const r1 = await routerSwap(dn, trader, {
      poolKey: ethPool,
      tokenIn: zeroAddress,
      tokenOut: usdg,
      amountIn: parseEther("2"),
      minOut: q1,
      feeBips: 25n,
      feeRecipient: platform,
    });
    facts.erc20FeeTrade = { hash: r1.transactionHash, quote: q1, fee: (q1 * 25n) / 10_000n, block: r1.blockNumber };
    facts.p1 = priceX96FromSqrt(await slot0());

    // 2) USDG -> ETH with an output-side ETH fee, in the next block but the same second.
    const q2 = await quoteExactIn(dn, ethPool, false, parseUnits("3000", 6));
    await setTime(T);
    const r2 = await routerSwap(dn, trader, {
      poolKey: ethPool,
      tokenIn: usdg,
      tokenOut: zeroAddress,
      amountIn: parseUnits("3000", 6),
      minOut: q2,
      feeBips: 50n,
      feeRecipient: platform,
    });
    expect(r2.status).toBe("success");
    facts.ethFeeTrade = { hash: r2.transactionHash, quote: q2, fee: (q2 * 50n) / 10_000n };
    facts.p2 = priceX96FromSqrt(await slot0());

    // 3) A reverted trade (minimum out far above the quote).
    await setTime(T + 300);
    const r3 = await routerSwap(dn, trader, {
      poolKey: ethPool,
      tokenIn: zeroAddress,
      tokenOut: usdg,
      amountIn: parseEther("1"),
      minOut: q1 * 10n,
      feeBips: 25n,
      feeRecipient: platform,
      gas: 700_000n,
    });
    expect(r3.status).toBe("reverted");
    facts.reverted = r3.transactionHash;

    // 4) A delegated trade: an EIP-7702 wallet's root delegation redeemed by an executor.
    const wallet = await dn.freshWallet(parseEther("5"));
    const executor = await dn.freshWallet(parseEther("1"));
    const auth = await wallet.signAuthorization({
      contractAddress: u.contracts.statelessDelegator,
      chainId: 4663,
      nonce: 0,
    });
    await setTime(T + 400);
    await dn.mined(
      await dn.walletFor(executor).sendTransaction({ to: wallet.address, data: "0x", authorizationList: [auth] }),
    );
    const caveats = [
      {
        enforcer: u.contracts.enforcers.AllowedTargetsEnforcer!,
        terms: encodePacked(["address"], [u.contracts.universalRouter]),
        args: "0x" as Hex,
      },
    ];
    const unsigned = {
      delegate: executor.address,
      delegator: wallet.address,
      authority: ROOT_AUTHORITY as Hex,
      caveats,
      salt: 42n,
    };
    const signature = await wallet.signTypedData({
      domain: {
        name: "DelegationManager",
        version: "1",
        chainId: 4663,
        verifyingContract: u.contracts.delegationManager,
      },
      types: delegationTypes,
      primaryType: "Delegation",
      message: { ...unsigned, caveats: caveats.map(({ enforcer, terms }) => ({ enforcer, terms })) },
    });
    const q4 = await quoteExactIn(dn, ethPool, true, parseEther("1"));
    const call = swapCalldata({
      poolKey: ethPool,
      tokenIn: zeroAddress,
      tokenOut: usdg,
      amountIn: parseEther("1"),
      minOut: q4,
      feeBips: 25n,
      feeRecipient: platform,
    });
    const execution = encodePacked(
      ["address", "uint256", "bytes"],
      [u.contracts.universalRouter, parseEther("1"), call],
    );
    const context = encodeAbiParameters([delegationArrayParam], [[{ ...unsigned, signature }]]);
    await setTime(T + 600);
    const r4 = await dn.mined(
      await dn.walletFor(executor).sendTransaction({
        to: u.contracts.delegationManager,
        data: encodeFunctionData({
          abi: delegationManagerAbi,
          functionName: "redeemDelegations",
          args: [[context], [SINGLE_DEFAULT_MODE], [execution]],
        }),
      }),
    );
    expect(r4.status).toBe("success");
    facts.delegated = {
      hash: r4.transactionHash,
      wallet: wallet.address,
      executor: executor.address,
      quote: q4,
      fee: (q4 * 25n) / 10_000n,
    };
    facts.p3 = priceX96FromSqrt(await slot0());

    // 5) Liquidity added to ETH/USDG (active range), a feed update, outside transfers in and out.
    const deployerWallet = dn.walletFor(dn.deployer);
    const ctx: Ctx = { wallet: deployerWallet, pub: dn.pub, account: dn.deployer, chain: dn.chain };
    await setTime(T + 700);
    await mintFullRange(
      ctx,
      u.contracts.positionManager,
      ethPool,
      await slot0(),
      parseEther("10"),
      parseUnits("30000", 6),
    );
    const liquidityNow = await dn.pub.readContract({
      address: u.contracts.stateView,
      abi: stateViewAbi,
      functionName: "getLiquidity",
      args: [ethPool.id],
    });
    facts.liquidity = liquidityNow;
    await setTime(T + 800);
    const ethFeed = u.tokens.ETH!.feed!;
    await dn.mined(
      await deployerWallet.writeContract({
        address: ethFeed,
        abi: priceFeedAbi,
        functionName: "setAnswer",
        args: [3_050n * 10n ** 8n],
      }),
    );
    facts.feedUpdatedAt = T + 800;
    await dn.mined(
      await dn.walletFor(trader).writeContract({
        address: usdg,
        abi: erc20Abi,
        functionName: "transfer",
        args: [platform, parseUnits("5", 6)],
      }),
    );
    await dn.mined(await dn.walletFor(trader).sendTransaction({ to: platform, value: parseEther("0.1") }));
    const platformAccount = dn.account(1);
    const operations = getAddress(u.devnet!.accounts.operations!);
    await dn.mined(
      await dn.walletFor(platformAccount).writeContract({
        address: usdg,
        abi: erc20Abi,
        functionName: "transfer",
        args: [operations, parseUnits("1", 6)],
      }),
    );
    await dn.mined(await dn.walletFor(platformAccount).sendTransaction({ to: operations, value: parseEther("1") }));
    // 6) A buy on the launchpad curve.
    const launchToken = u.devnet!.fixtures.launchToken!;
    const [tokensOut] = await dn.pub.readContract({
      address: u.contracts.launchpad,
      abi: launchpadAbi,
      functionName: "quoteBuy",
      args: [launchToken, parseEther("0.5")],
    });
    facts.curveBuy = {
      hash: await dn.walletFor(trader).writeContract({
        address: u.contracts.launchpad,
        abi: launchpadAbi,
        functionName: "buy",
        args: [launchToken, tokensOut, trader.address],
        value: parseEther("0.5"),
      }),
      tokensOut,
    };
    await dn.mined(facts.curveBuy.hash);
    const curve = await dn.pub.readContract({
      address: u.contracts.launchpad,
      abi: launchpadAbi,
      functionName: "curves",
      args: [launchToken],
    });
    facts.curve = { token: launchToken, virtualEth: curve[4], virtualToken: curve[5] };

    facts.lastBlock = await dn.pub.getBlockNumber();
    facts.lastTimestamp = Number((await dn.pub.getBlock()).timestamp);

    await ix.waitFor(facts.lastBlock);
    const opened = await ix.stop();
    reads = opened.reads;
    closeReads = opened.close;
  }, 240_000);

  afterAll(async () => {
    await closeReads();
    await ix?.cleanup();
    await dn?.stop();
  });

  it("keeps every pool with its state matching the chain", async () => {
    const pools = await reads.pools();
    // The universe's pools, and the local-quote test's tick pools (devnet fixtures, not in the universe).
    const { tickA, tickB } = dn.universe.devnet!.fixtures;
    const tickPools = tickPoolKeys(tickA!, tickB!).map((k) => poolId(k));
    expect(pools.map((p) => p.id).sort()).toEqual(
      [...dn.universe.pools.map((p) => p.id.toLowerCase()), ...tickPools].sort(),
    );
    const eth = poolKeyOf(dn, "ETH", "USDG");
    const state = (await reads.pool(eth.id))!;
    const [sqrtPriceX96, tick] = await dn.pub.readContract({
      address: dn.universe.contracts.stateView,
      abi: stateViewAbi,
      functionName: "getSlot0",
      args: [eth.id],
    });
    expect(state.sqrtPriceX96).toBe(sqrtPriceX96);
    expect(state.tick).toBe(tick);
    expect(state.liquidity).toBe(facts.liquidity);
    expect(state.priceX96).toBe(priceX96FromSqrt(sqrtPriceX96));
    expect(state.swaps).toBe(3); // the reverted trade left no swap
    expect(state.fee).toBe(500);
  });

  it("computes TWAPs by hand: blocks sharing a timestamp, and windows with no swap", async () => {
    const id = poolKeyOf(dn, "ETH", "USDG").id;
    const T: number = facts.T;
    // p0 until T; at T two swaps in two blocks (p1 lasts 0 s); p2 until T+600; p3 after.
    const expected = (facts.p0 * 100n + facts.p2 * 600n + facts.p3 * 200n) / 900n;
    expect(await reads.twapX96(id, T - 100, T + 800)).toBe(expected);
    // No swap inside the window: the price in force.
    expect(await reads.twapX96(id, T + 650, T + 750)).toBe(facts.p3);
    expect(await reads.twapX96(id, T + 10, T + 20)).toBe(facts.p2);
    // Before the pool existed: not enough history.
    expect(await reads.twapX96(id, 1, 2)).toBeNull();
  });

  it(
    "books ERC-20 transfers in and out of the platform wallet from logs, trade or outside; native ETH has no " + "log",
    async () => {
      const usdg = dn.token("USDG").toLowerCase();
      const rows = await reads.feeTransfersBetween(0, facts.lastTimestamp + 1);
      const pick = (f: (r: (typeof rows)[number]) => boolean) => rows.filter(f);
      expect(pick((r) => r.txHash === facts.erc20FeeTrade.hash)).toMatchObject([
        { direction: "in", token: usdg, amount: facts.erc20FeeTrade.fee, source: "trade", method: "log" },
      ]);
      expect(pick((r) => r.txHash === facts.delegated.hash)).toMatchObject([
        { direction: "in", token: usdg, amount: facts.delegated.fee, source: "trade" },
      ]);
      expect(
        pick((r) => r.source === "outside" && r.direction === "in").map((r) => [r.token, r.amount, r.method]),
      ).toEqual([[usdg, parseUnits("5", 6), "log"]]);
      expect(pick((r) => r.direction === "out").map((r) => [r.token, r.amount, r.method])).toEqual([
        [usdg, parseUnits("1", 6), "log"],
      ]);
      // ETH fees of our trades come from the relay watcher's outcomes; other ETH that reaches the
      // wallet, from the treasury's balance reconciliation: the indexer reads no block for them.
      expect(pick((r) => r.token === zeroAddress)).toEqual([]);
      expect(await reads.feeTransfersBetween(facts.lastTimestamp + 1, facts.lastTimestamp + 100)).toEqual([]);
    },
  );

  it("keeps oracle marks with their age", async () => {
    const mark = (await reads.latestMark(dn.universe.tokens.ETH!.feed!, facts.feedUpdatedAt + 30))!;
    expect(mark.answer).toBe(3_050n * 10n ** 8n);
    expect(mark.updatedAt).toBe(facts.feedUpdatedAt);
    expect(mark.ageS).toBe(30);
    expect(mark.roundId).toBe(2n);
    const btc = (await reads.latestMark(dn.universe.tokens.WBTC!.feed!, facts.feedUpdatedAt))!;
    expect(btc.answer).toBe(60_000n * 10n ** 8n);
    expect(await reads.latestMark("0x0000000000000000000000000000000000000001", 0)).toBeNull();
  });

  it("follows the launchpad curve", async () => {
    const row = (await reads.curveToken(facts.curve.token))!;
    expect(row).toMatchObject({ symbol: "PLD", feeMode: 1, graduated: false, trades: 1 });
    expect(row.virtualEth).toBe(facts.curve.virtualEth);
    expect(row.virtualToken).toBe(facts.curve.virtualToken);
    expect(await reads.curveToken(zeroAddress)).toBeNull();
  });

  it("gives the pool mid in human units and reports its head and lag", async () => {
    const mid = (await reads.poolMid(poolKeyOf(dn, "ETH", "USDG").id, 18, 6))!;
    expect(mid.mid).toBeGreaterThan(2900);
    expect(mid.mid).toBeLessThan(3100);
    const head = (await reads.head())!.block;
    expect(head).toBeGreaterThanOrEqual(Number(facts.lastBlock));
    expect(await reads.lagBlocks(Number(facts.lastBlock))).toBe(0);
    expect(await reads.lagBlocks(head + 7)).toBe(7);
  });
});
