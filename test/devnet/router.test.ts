import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeFunctionData, maxUint256, parseEther, parseUnits, zeroAddress, type Address } from "viem";
import { startDevnet, type Devnet } from "../helpers/devnet.js";
import { erc20Abi } from "../../abis/erc20.js";
import { quoteExactIn } from "../helpers/trades.js";
import { Command, ROUTER_ADDRESS_THIS, ROUTER_MSG_SENDER, universalRouterAbi } from "../../abis/universalRouter.js";
import { PERMIT2_ADDRESS, permit2Abi, permitSingleTypes } from "../../abis/permit2.js";
import { inputs, routerProgram, v4, v4SwapInput } from "../../lib/router/encode.js";
import type { PoolKey } from "../../lib/v4.js";

let dn: Devnet;
beforeAll(async () => {
  dn = await startDevnet();
});
afterAll(() => dn?.stop());

function ethUsdgPool(): PoolKey {
  const p = dn.universe.pools.find((x) => x.symbol0 === "ETH" && x.symbol1 === "USDG")!;
  return { currency0: p.currency0, currency1: p.currency1, fee: p.fee, tickSpacing: p.tickSpacing, hooks: p.hooks };
}

const quote = (poolKey: PoolKey, zeroForOne: boolean, exactAmount: bigint) =>
  quoteExactIn(dn, poolKey, zeroForOne, exactAmount);

const balanceOf = (token: Address, who: Address) =>
  token === zeroAddress
    ? dn.pub.getBalance({ address: who })
    : dn.pub.readContract({ address: token, abi: erc20Abi, functionName: "balanceOf", args: [who] });

describe("Universal Router on the devnet", () => {
  it("swaps ETH -> USDG (V4_SWAP) with an output-side PAY_PORTION fee to the platform", async () => {
    const usdg = dn.token("USDG");
    const platform = dn.universe.devnet!.accounts.platform!;
    const trader = await dn.freshWallet(parseEther("10"));
    const poolKey = ethUsdgPool();
    const amountIn = parseEther("1");
    const feeBips = 25n;
    const quoted = await quote(poolKey, true, amountIn);
    // ~3000 USDG for 1 ETH, less the 5 bps pool fee and a little impact.
    expect(Number(quoted) / 1e6).toBeGreaterThan(2980);
    expect(Number(quoted) / 1e6).toBeLessThan(3000);

    const { commands, inputs: ins } = routerProgram([
      {
        command: Command.V4_SWAP,
        input: v4SwapInput([
          v4.swapExactInSingle({ poolKey, zeroForOne: true, amountIn, amountOutMinimum: quoted }),
          v4.settleAll(zeroAddress, amountIn),
          v4.take(usdg, ROUTER_ADDRESS_THIS, 0n),
        ]),
      },
      { command: Command.PAY_PORTION, input: inputs.payPortion(usdg, platform, feeBips) },
      { command: Command.SWEEP, input: inputs.sweep(usdg, ROUTER_MSG_SENDER, 0n) },
    ]);
    const platformBefore = await balanceOf(usdg, platform);
    const hash = await dn.walletFor(trader).writeContract({
      address: dn.universe.contracts.universalRouter,
      abi: universalRouterAbi,
      functionName: "execute",
      args: [commands, ins, BigInt(Math.floor(Date.now() / 1000) + 600)],
      value: amountIn,
    });
    const receipt = await dn.mined(hash);
    expect(receipt.status).toBe("success");
    const fee = (quoted * feeBips) / 10_000n;
    expect((await balanceOf(usdg, platform)) - platformBefore).toBe(fee);
    expect(await balanceOf(usdg, trader.address)).toBe(quoted - fee);
    expect(await balanceOf(usdg, dn.universe.contracts.universalRouter)).toBe(0n);
  });

  it("swaps USDG -> ETH with PERMIT2_PERMIT signed in the same call and an input-side TRANSFER fee", async () => {
    const usdg = dn.token("USDG");
    const platform = dn.universe.devnet!.accounts.platform!;
    const router = dn.universe.contracts.universalRouter;
    const amountIn = parseUnits("3000", 6);
    const trader = await dn.freshWallet(parseEther("1"), [[usdg, amountIn]]);
    const wallet = dn.walletFor(trader);
    // One-time ERC-20 approval of Permit2; the per-trade allowance is the signed permit.
    await dn.mined(
      await wallet.writeContract({
        address: usdg,
        abi: erc20Abi,
        functionName: "approve",
        args: [PERMIT2_ADDRESS, maxUint256],
      }),
    );

    const feeBips = 50n;
    const fee = (amountIn * feeBips) / 10_000n;
    const poolKey = ethUsdgPool();
    const quoted = await quote(poolKey, false, amountIn - fee);
    const [, , nonce] = await dn.pub.readContract({
      address: PERMIT2_ADDRESS,
      abi: permit2Abi,
      functionName: "allowance",
      args: [trader.address, usdg, router],
    });
    const now = Math.floor(Date.now() / 1000);
    const permit = {
      details: { token: usdg, amount: amountIn, expiration: now + 1800, nonce },
      spender: router,
      sigDeadline: BigInt(now + 1800),
    };
    const signature = await trader.signTypedData({
      domain: { name: "Permit2", chainId: 4663, verifyingContract: PERMIT2_ADDRESS },
      types: permitSingleTypes,
      primaryType: "PermitSingle",
      message: permit,
    });

    const { commands, inputs: ins } = routerProgram([
      { command: Command.PERMIT2_PERMIT, input: inputs.permit2Permit(permit, signature) },
      {
        command: Command.PERMIT2_TRANSFER_FROM,
        input: inputs.permit2TransferFrom(usdg, ROUTER_ADDRESS_THIS, amountIn),
      },
      { command: Command.TRANSFER, input: inputs.transfer(usdg, platform, fee) },
      {
        command: Command.V4_SWAP,
        input: v4SwapInput([
          v4.swapExactInSingle({ poolKey, zeroForOne: false, amountIn: amountIn - fee, amountOutMinimum: quoted }),
          v4.settle(usdg, 0n, false),
          v4.takeAll(zeroAddress, quoted),
        ]),
      },
    ]);
    const platformBefore = await balanceOf(usdg, platform);
    const ethBefore = await balanceOf(zeroAddress, trader.address);
    const hash = await wallet.sendTransaction({
      to: router,
      data: encodeFunctionData({
        abi: universalRouterAbi,
        functionName: "execute",
        args: [commands, ins, BigInt(now + 600)],
      }),
    });
    const receipt = await dn.mined(hash);
    expect(receipt.status).toBe("success");
    const gas = receipt.gasUsed * receipt.effectiveGasPrice;
    expect((await balanceOf(usdg, platform)) - platformBefore).toBe(fee);
    expect(await balanceOf(usdg, trader.address)).toBe(0n);
    expect((await balanceOf(zeroAddress, trader.address)) - ethBefore + gas).toBe(quoted);
    // ~1 ETH for 2985 USDG.
    expect(Number(quoted) / 1e18).toBeGreaterThan(0.98);
  });

  it("moves the ETH/USDG price measurably but not absurdly for a $10,000 trade", async () => {
    const poolKey = ethUsdgPool();
    const small = await quote(poolKey, false, parseUnits("100", 6));
    const large = await quote(poolKey, false, parseUnits("10000", 6));
    const impactBps = 10_000 - Number((large * 100n * 10_000n) / small) / 10_000;
    expect(impactBps).toBeGreaterThan(10); // > 0.1 %
    expect(impactBps).toBeLessThan(300); // < 3 %
  });

  it("answers aggregate3 through Multicall3 at its canonical address", async () => {
    const usdg = dn.token("USDG");
    const [sym, dec] = await dn.pub.multicall({
      contracts: [
        { address: usdg, abi: erc20Abi, functionName: "symbol" },
        { address: usdg, abi: erc20Abi, functionName: "decimals" },
      ],
      allowFailure: false,
    });
    expect(sym).toBe("USDG");
    expect(dec).toBe(6);
  });
});
