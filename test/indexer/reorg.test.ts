import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getAddress, parseEther, zeroAddress, type Hex } from "viem";
import type { Devnet } from "../helpers/devnet.js";
import type { Indexer } from "../helpers/indexer.js";
import { startIndexedDevnet } from "../helpers/stack.js";
import { poolKeyOf, swapCalldata } from "../helpers/trades.js";

let dn: Devnet;
let ix: Indexer;
let chain: Awaited<ReturnType<typeof startIndexedDevnet>>;
beforeAll(async () => {
  chain = await startIndexedDevnet();
  ({ dn, ix } = chain);
}, 120_000);
afterAll(() => chain?.stop());

const until = async <T>(what: string, fn: () => Promise<T | null | undefined | false>, ms = 30_000): Promise<T> => {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v as T;
    if (Date.now() > deadline) throw new Error(`timed out: ${what}\n${ix.log()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
};

describe("reorgs", () => {
  it("drops the rows of a block anvil_reorg replaced and indexes its replacement", async () => {
    const { reads, query } = ix.liveReads();
    const usdg = dn.token("USDG");
    const platform = getAddress(dn.universe.devnet!.accounts.platform!);
    const poolKey = poolKeyOf(dn, "ETH", "USDG");
    const trader = await dn.freshWallet(parseEther("10"));
    const wallet = dn.walletFor(trader);
    const nonce = await dn.pub.getTransactionCount({ address: trader.address });
    const swap = (amountIn: bigint) => ({
      to: dn.universe.contracts.universalRouter,
      data: swapCalldata({
        poolKey,
        tokenIn: zeroAddress,
        tokenOut: usdg,
        amountIn,
        minOut: 0n,
        feeBips: 25n,
        feeRecipient: platform,
      }),
      value: amountIn,
      nonce,
      gas: 500_000n,
    });

    const swapsOf = async (hash: Hex) =>
      (await query(
        `SELECT amount0::text AS amount0, block::text AS block FROM "${ix.viewsSchema}".pool_observation WHERE ` +
          `tx_hash = $1 AND kind = 'swap'`,
        [hash],
      )) as { amount0: string; block: string }[];
    const observations = async (hash: Hex) => (await swapsOf(hash)).length;
    const a = await dn.mined(await wallet.sendTransaction(swap(parseEther("1"))));
    await until("trade A indexed", async () => (await observations(a.transactionHash)) === 1);

    // Replace A's block with one holding B (same sender and nonce, other amount).
    const fees = await dn.pub.estimateFeesPerGas();
    const rawB = await wallet.signTransaction({ ...swap(parseEther("2")), chainId: 4663, type: "eip1559", ...fees });
    await dn.pub.request({ method: "anvil_reorg" as never, params: [1, [[rawB, 0]]] as never });
    const bHash = (await dn.pub.getBlock({ blockNumber: a.blockNumber })).transactions[0] as Hex;
    expect(bHash).not.toBe(a.transactionHash);

    const [b] = await until("trade B indexed", async () => ((await observations(bHash)) === 1 ? swapsOf(bHash) : null));
    // The swapper paid 2 ETH into the pool (negative: from the swapper's side), in A's old block.
    expect(BigInt(b!.amount0)).toBe(-parseEther("2"));
    expect(Number(b!.block)).toBe(Number(a.blockNumber));
    await until("trade A dropped", async () => (await observations(a.transactionHash)) === 0);
    // The pool's latest state is B's, not A's.
    const state = (await reads.pool(poolKey.id))!;
    const [sqrtPriceX96] = await dn.pub.readContract({
      address: dn.universe.contracts.stateView,
      abi: (await import("../../abis/uniswapV4.js")).stateViewAbi,
      functionName: "getSlot0",
      args: [poolKey.id],
    });
    expect(state.sqrtPriceX96).toBe(sqrtPriceX96);
    // The fee transfer of A is gone, B's is there.
    const fees2 = await reads.feeTransfersBetween(0, 2 ** 40);
    expect(fees2.some((f) => f.txHash === a.transactionHash)).toBe(false);
    expect(fees2.some((f) => f.txHash === bHash)).toBe(true);
  });
});
