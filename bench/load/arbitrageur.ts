/**
 * The market outside the service: the load test's agents all sell ETH, which on its own walks the
 * ETH/USDG pool away from the oracle until the service rightly refuses every trade (ROUTE_VS_REF past
 * 300 bps). On a real chain arbitrageurs pull such a pool back; this one does, straight through the
 * Universal Router (not through the service, so none of its trades are audited): every two seconds,
 * when the pool's ETH price is more than 20 bps under the ETH feed, it buys ETH with USDG sized to
 * close the gap on the pool's full-range depth.
 */
import { createWalletClient, http, maxUint160, maxUint256, parseEther, parseUnits, zeroAddress } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { erc20Abi, mintableAbi } from "../../abis/erc20.js";
import { priceFeedAbi } from "../../abis/fixtures.js";
import { PERMIT2_ADDRESS, permit2Abi } from "../../abis/permit2.js";
import { stateViewAbi } from "../../abis/uniswapV4.js";
import { ACCOUNT_ROLES } from "../../devnet/deploy.js";
import { devnetAccount } from "../../lib/devnetAccount.js";
import type { Universe } from "../../lib/universe.js";
import { swapCalldata } from "../../test/helpers/trades.js";
import type { World } from "./actors.js";

/** The actors' world (actors.ts) and the devnet's addresses. */
type Deps = World & { universe: Universe };

/** Sets the arbitrageur up (USDG minted by the issuer, Permit2 approvals): its loop, and how many swaps it made. */
export async function arbitrageur(d: Deps) {
  const account = privateKeyToAccount(generatePrivateKey());
  await d.fund(account.address, parseEther("10"));
  const transport = http(d.rpcUrl);
  const wallet = createWalletClient({ chain: d.chain, transport, account });
  const issuer = createWalletClient({ chain: d.chain, transport, account: devnetAccount(ACCOUNT_ROLES.deployer) });
  const usdg = d.universe.tokens.USDG!.address;
  const router = d.universe.contracts.universalRouter;
  const mined = async (hash: `0x${string}`) => d.pub.waitForTransactionReceipt({ hash, pollingInterval: 500 });
  const args = [account.address, parseUnits("100000000", 6)] as const;
  await mined(await issuer.writeContract({ address: usdg, abi: mintableAbi, functionName: "mint", args }));
  const approve = [PERMIT2_ADDRESS, maxUint256] as const;
  await mined(await wallet.writeContract({ address: usdg, abi: erc20Abi, functionName: "approve", args: approve }));
  const allow = [usdg, router, maxUint160, 2 ** 47] as const;
  await mined(
    await wallet.writeContract({ address: PERMIT2_ADDRESS, abi: permit2Abi, functionName: "approve", args: allow }),
  );
  const pool = d.universe.pools.find((p) => p.currency0 === zeroAddress && p.symbol1 === "USDG")!;
  const stats = { swaps: 0, usdIn: 0 };
  const loop = async () => {
    while (!d.stopped()) {
      const [slot0, round] = await Promise.all([
        d.pub.readContract({
          address: d.universe.contracts.stateView,
          abi: stateViewAbi,
          functionName: "getSlot0",
          args: [pool.id],
        }),
        d.pub.readContract({
          address: d.universe.tokens.ETH!.feed!,
          abi: priceFeedAbi,
          functionName: "latestRoundData",
        }),
      ]);
      const sqrt = Number(slot0[0]) / 2 ** 96;
      const poolUsd = sqrt * sqrt * 1e12; // USDG atoms per wei, to USD per ETH
      const feedUsd = Number(round[1]) / 1e8;
      const gap = 1 - poolUsd / feedUsd;
      if (gap > 0.002) {
        // Full range: adding dy of USDG lifts the price by about 2 dy / y; y is about $3M.
        const usd = Math.min(50_000, Math.round(3_000_000 * gap * 0.5));
        const data = swapCalldata({
          poolKey: pool,
          tokenIn: usdg,
          tokenOut: zeroAddress,
          amountIn: parseUnits(String(usd), 6),
          minOut: 0n,
          feeBips: 0n,
          feeRecipient: account.address,
        });
        await mined(await wallet.sendTransaction({ to: router, data })).catch(() => null);
        stats.swaps++;
        stats.usdIn += usd;
      }
      await d.pause(2_000);
    }
  };
  return { loop, stats, address: account.address };
}
