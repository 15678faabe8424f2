import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseEther, parseUnits, zeroAddress, type Address } from "viem";
import { startDevnet, type Devnet } from "../helpers/devnet.js";
import { erc20Abi } from "../../abis/erc20.js";
import {
  launchpadAbi,
  partnerAgentVaultAbi,
  priceFeedAbi,
  proxyTokenAbi,
  sanctionsListAbi,
  stockRegistryAbi,
  stockTokenAbi,
  beaconAbi,
} from "../../abis/fixtures.js";
import { Command, universalRouterAbi } from "../../abis/universalRouter.js";
import { PERMIT2_ADDRESS, permit2Abi } from "../../abis/permit2.js";
import { routerProgram, v4, v4SwapInput } from "../../lib/router/encode.js";
import { midPrice } from "../../lib/v4.js";
import { stateViewAbi } from "../../abis/uniswapV4.js";

let dn: Devnet;
beforeAll(async () => {
  dn = await startDevnet();
});
afterAll(() => dn?.stop());

const deadline = () => BigInt(Math.floor(Date.now() / 1000) + 600);

describe("devnet fixtures", () => {
  it("pauses stock tokens (per token and registry-wide) and blocks wallets", async () => {
    const tsla = dn.token("TSLA");
    const issuer = dn.walletFor(dn.deployer);
    const holder = await dn.freshWallet(parseEther("1"), [[tsla, parseEther("10")]]);
    const to = (await dn.freshWallet(0n)).address;
    const { stockRegistry, stockBeacon } = dn.universe.contracts;
    expect(await dn.pub.readContract({ address: stockBeacon, abi: beaconAbi, functionName: "implementation" })).toBe(
      dn.universe.devnet!.fixtures.stockImplementation,
    );
    expect(await dn.pub.readContract({ address: tsla, abi: stockTokenAbi, functionName: "uiMultiplier" })).toBe(
      10n ** 18n,
    );

    await dn.mined(
      await issuer.writeContract({ address: tsla, abi: stockTokenAbi, functionName: "setTokenPaused", args: [true] }),
    );
    expect(await dn.pub.readContract({ address: tsla, abi: stockTokenAbi, functionName: "paused" })).toBe(true);
    await expect(
      dn.pub.simulateContract({
        account: holder,
        address: tsla,
        abi: erc20Abi,
        functionName: "transfer",
        args: [to, 1n],
      }),
    ).rejects.toThrow(/STOCK: paused/);
    await dn.mined(
      await issuer.writeContract({ address: tsla, abi: stockTokenAbi, functionName: "setTokenPaused", args: [false] }),
    );

    // Registry-wide pause reaches every stock token through the shared registry.
    const nvda = dn.token("NVDA");
    await dn.mined(
      await issuer.writeContract({
        address: stockRegistry,
        abi: stockRegistryAbi,
        functionName: "setPaused",
        args: [true],
      }),
    );
    expect(await dn.pub.readContract({ address: nvda, abi: stockTokenAbi, functionName: "paused" })).toBe(true);
    await dn.mined(
      await issuer.writeContract({
        address: stockRegistry,
        abi: stockRegistryAbi,
        functionName: "setPaused",
        args: [false],
      }),
    );

    await dn.mined(
      await issuer.writeContract({
        address: stockRegistry,
        abi: stockRegistryAbi,
        functionName: "setBlocked",
        args: [to, true],
      }),
    );
    await expect(
      dn.pub.simulateContract({
        account: holder,
        address: tsla,
        abi: erc20Abi,
        functionName: "transfer",
        args: [to, 1n],
      }),
    ).rejects.toThrow(/wallet blocked/);
    const ok = await dn
      .walletFor(holder)
      .writeContract({ address: tsla, abi: erc20Abi, functionName: "transfer", args: [dn.deployer.address, 1n] });
    expect((await dn.mined(ok)).status).toBe("success");
  });

  it("lets anyone buy the honeypot but no one sell it", async () => {
    const honey = dn.universe.devnet!.fixtures.honeypot!;
    const usdg = dn.token("USDG");
    const pool = dn.universe.pools.find((p) => p.symbol0 === "HONEY" || p.symbol1 === "HONEY")!;
    const poolKey = {
      currency0: pool.currency0,
      currency1: pool.currency1,
      fee: pool.fee,
      tickSpacing: pool.tickSpacing,
      hooks: pool.hooks,
    };
    const trader = await dn.freshWallet(parseEther("1"), [[usdg, parseUnits("1000", 6)]]);
    const wallet = dn.walletFor(trader);
    const router = dn.universe.contracts.universalRouter;
    for (const token of [usdg, honey]) {
      await dn.mined(
        await wallet.writeContract({
          address: token,
          abi: erc20Abi,
          functionName: "approve",
          args: [PERMIT2_ADDRESS, 2n ** 256n - 1n],
        }),
      );
      await dn.mined(
        await wallet.writeContract({
          address: PERMIT2_ADDRESS,
          abi: permit2Abi,
          functionName: "approve",
          args: [token, router, 2n ** 160n - 1n, 2 ** 47],
        }),
      );
    }
    const swap = (tokenIn: Address, tokenOut: Address, amountIn: bigint) => {
      const { commands, inputs } = routerProgram([
        {
          command: Command.V4_SWAP,
          input: v4SwapInput([
            v4.swapExactInSingle({
              poolKey,
              zeroForOne: tokenIn === poolKey.currency0,
              amountIn,
              amountOutMinimum: 0n,
            }),
            v4.settleAll(tokenIn, amountIn),
            v4.takeAll(tokenOut, 0n),
          ]),
        },
      ]);
      return {
        address: router,
        abi: universalRouterAbi,
        functionName: "execute" as const,
        args: [commands, inputs, deadline()] as const,
      };
    };
    const buy = await wallet.writeContract(swap(usdg, honey, parseUnits("100", 6)));
    expect((await dn.mined(buy)).status).toBe("success");
    const got = await dn.pub.readContract({
      address: honey,
      abi: erc20Abi,
      functionName: "balanceOf",
      args: [trader.address],
    });
    expect(got).toBeGreaterThan(0n);
    await expect(dn.pub.simulateContract({ account: trader, ...swap(honey, usdg, got) })).rejects.toThrow();
  });

  it("answers latestRoundData on every feed and moves marks when set", async () => {
    for (const [symbol, t] of Object.entries(dn.universe.tokens)) {
      if (!t.feed) continue;
      const [roundId, answer, , updatedAt] = await dn.pub.readContract({
        address: t.feed,
        abi: priceFeedAbi,
        functionName: "latestRoundData",
      });
      expect(roundId, symbol).toBeGreaterThan(0n);
      expect(answer, symbol).toBeGreaterThan(0n);
      expect(updatedAt, symbol).toBeGreaterThan(0n);
      expect(await dn.pub.readContract({ address: t.feed, abi: priceFeedAbi, functionName: "decimals" })).toBe(8);
    }
    const ethFeed = dn.universe.tokens.ETH!.feed!;
    await dn.mined(
      await dn
        .walletFor(dn.deployer)
        .writeContract({ address: ethFeed, abi: priceFeedAbi, functionName: "setAnswer", args: [3_100n * 10n ** 8n] }),
    );
    const [, answer] = await dn.pub.readContract({
      address: ethFeed,
      abi: priceFeedAbi,
      functionName: "latestRoundData",
    });
    expect(answer).toBe(3_100n * 10n ** 8n);
    await dn.mined(
      await dn
        .walletFor(dn.deployer)
        .writeContract({ address: ethFeed, abi: priceFeedAbi, functionName: "setAnswer", args: [3_000n * 10n ** 8n] }),
    );
  });

  it("seeds every core pool at its feed's price", async () => {
    const bySymbol = Object.fromEntries(Object.entries(dn.universe.tokens).map(([s, t]) => [s, t]));
    for (const pool of dn.universe.pools.filter((p) => bySymbol[p.symbol0] && bySymbol[p.symbol1])) {
      const [sqrtPriceX96] = await dn.pub.readContract({
        address: dn.universe.contracts.stateView,
        abi: stateViewAbi,
        functionName: "getSlot0",
        args: [pool.id],
      });
      const mid = midPrice(sqrtPriceX96, bySymbol[pool.symbol0]!.decimals, bySymbol[pool.symbol1]!.decimals);
      const assetSymbol = pool.symbol0 === "USDG" ? pool.symbol1 : pool.symbol0;
      const usdPerAsset = pool.symbol0 === "USDG" ? 1 / mid : mid;
      const feed = bySymbol[assetSymbol]!.feed;
      if (!feed) {
        expect(usdPerAsset).toBeCloseTo(0.5, 3); // partner token: no feed, pool at $0.50
        continue;
      }
      const [, answer] = await dn.pub.readContract({
        address: feed,
        abi: priceFeedAbi,
        functionName: "latestRoundData",
      });
      expect(usdPerAsset / (Number(answer) / 1e8)).toBeCloseTo(1, 4);
    }
    expect(dn.universe.pools.some((p) => p.currency0 === zeroAddress)).toBe(true);
  });

  it(
    "runs the launchpad curve, the partner agent vault, the sanctions list and the upgradeable proxy " + "token",
    async () => {
      const { launchpad, partnerAgentVault, sanctionsList } = dn.universe.contracts;
      const { launchToken, proxyToken, proxyImplV2 } = dn.universe.devnet!.fixtures as Record<string, Address>;
      const accounts = dn.universe.devnet!.accounts;
      const buyer = await dn.freshWallet(parseEther("5"));
      const [tokensOut] = await dn.pub.readContract({
        address: launchpad,
        abi: launchpadAbi,
        functionName: "quoteBuy",
        args: [launchToken!, parseEther("1")],
      });
      const buy = await dn.walletFor(buyer).writeContract({
        address: launchpad,
        abi: launchpadAbi,
        functionName: "buy",
        args: [launchToken!, tokensOut, buyer.address],
        value: parseEther("1"),
      });
      expect((await dn.mined(buy)).status).toBe("success");
      expect(
        await dn.pub.readContract({
          address: launchToken!,
          abi: erc20Abi,
          functionName: "balanceOf",
          args: [buyer.address],
        }),
      ).toBe(tokensOut);

      const id = await dn.pub.readContract({
        address: partnerAgentVault,
        abi: partnerAgentVaultAbi,
        functionName: "agentIdOf",
        args: [accounts.partnerAgentWallet!],
      });
      expect(id).toBe(1n);
      const agent = await dn.pub.readContract({
        address: partnerAgentVault,
        abi: partnerAgentVaultAbi,
        functionName: "getAgent",
        args: [id],
      });
      expect(agent.owner).toBe(accounts.partnerOwner);
      expect(agent.token).toBe(launchToken);

      expect(
        await dn.pub.readContract({
          address: sanctionsList,
          abi: sanctionsListAbi,
          functionName: "isSanctioned",
          args: [accounts.sanctioned!],
        }),
      ).toBe(true);
      expect(
        await dn.pub.readContract({
          address: sanctionsList,
          abi: sanctionsListAbi,
          functionName: "isSanctioned",
          args: [accounts.traderA!],
        }),
      ).toBe(false);

      const implSlot = "0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc";
      const before = await dn.pub.getStorageAt({ address: proxyToken!, slot: implSlot });
      await dn.mined(
        await dn.walletFor(dn.deployer).writeContract({
          address: proxyToken!,
          abi: proxyTokenAbi,
          functionName: "upgradeProxyTo",
          args: [proxyImplV2!],
        }),
      );
      const after = await dn.pub.getStorageAt({ address: proxyToken!, slot: implSlot });
      expect(after).not.toBe(before);
      expect(await dn.pub.readContract({ address: proxyToken!, abi: proxyTokenAbi, functionName: "version" })).toBe(2n);
    },
  );

  it("taxes fee-on-transfer transfers", async () => {
    const tax = dn.universe.devnet!.fixtures.feeOnTransfer!;
    const holder = await dn.freshWallet(parseEther("1"), [[tax, parseEther("100")]]);
    const to = (await dn.freshWallet(0n)).address;
    await dn.mined(
      await dn
        .walletFor(holder)
        .writeContract({ address: tax, abi: erc20Abi, functionName: "transfer", args: [to, parseEther("100")] }),
    );
    expect(await dn.pub.readContract({ address: tax, abi: erc20Abi, functionName: "balanceOf", args: [to] })).toBe(
      parseEther("95"),
    );
  });
});
