import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseUnits, zeroAddress, type Address, type Hex } from "viem";
import { startDevnet, type Devnet } from "../helpers/devnet.js";
import { deployBalanceBurner } from "../helpers/hostile.js";
import { startRpcProxy } from "../../devnet/rpcProxy.js";
import { ROOT } from "../../devnet/artifacts.js";
import { readChainSnapshot, SNAPSHOT_GAS } from "../../api/ports/chainSnapshot.js";
import { createChainClient, MULTICALL_BASE_GAS, MULTICALL_PER_CALL_GAS, UNTRUSTED_GAS } from "../../lib/chain.js";
import { CAPPED_AGGREGATOR_RUNTIME } from "../../lib/cappedAggregator.js";
import { v4QuoterAbi } from "../../abis/uniswapV4.js";
import { erc20Abi } from "../../abis/erc20.js";
import { balanceOverride, findBalanceSlot } from "../../api/ports/simulation.js";

/**
 * Issue 26, point 1: a trade's chain snapshot (every quote, prepare and submit reads it) batches
 * the wallet's balanceOf and allowance of the trade's tokens, which may be address-named tokens
 * anyone deployed. One whose balanceOf and allowance burn gas fails its own reads only: the head
 * reads, the pinned reads, the quotes and the other token's balance answer, and the one eth_call the
 * node receives carries a gas cap no larger than the budgets' sum.
 */
let dn: Devnet;
let proxy: Awaited<ReturnType<typeof startRpcProxy>>;
const seen: { method: string; params?: unknown }[] = [];

beforeAll(async () => {
  dn = await startDevnet();
  proxy = await startRpcProxy(dn.anvil.rpcUrl, { onCall: (m) => seen.push(m) });
}, 60_000);
afterAll(async () => {
  await proxy?.close();
  await dn?.stop();
});

type UniversePool = {
  currency0: Address;
  currency1: Address;
  fee: number;
  tickSpacing: number;
  hooks: Address;
  symbol0: string;
  symbol1: string;
};
/** The pool of two symbols, whichever way their addresses sort. */
const pool = (a: string, b: string) =>
  (dn.universe.pools as UniversePool[]).find(
    (p) => (p.symbol0 === a && p.symbol1 === b) || (p.symbol0 === b && p.symbol1 === a),
  )!;

/** ETH -> USDG on one pool, and WBTC -> USDG -> ETH on two: honest quotes on hookless pools. */
function quotes() {
  const q = dn.universe.contracts.v4Quoter;
  const [ethUsdg, btcUsdg] = [pool("ETH", "USDG"), pool("WBTC", "USDG")];
  const key = (p: UniversePool) => ({
    currency0: p.currency0,
    currency1: p.currency1,
    fee: p.fee,
    tickSpacing: p.tickSpacing,
    hooks: p.hooks,
  });
  const hop = (p: UniversePool, out: Address) => ({
    intermediateCurrency: out,
    fee: p.fee,
    tickSpacing: p.tickSpacing,
    hooks: p.hooks,
    hookData: "0x" as Hex,
  });
  return [
    {
      address: q,
      abi: v4QuoterAbi,
      functionName: "quoteExactInputSingle",
      args: [{ poolKey: key(ethUsdg), zeroForOne: true, exactAmount: 10n ** 16n, hookData: "0x" }],
    } as const,
    {
      address: q,
      abi: v4QuoterAbi,
      functionName: "quoteExactInput",
      args: [
        {
          exactCurrency: dn.token("WBTC"),
          path: [hop(btcUsdg, dn.token("USDG")), hop(ethUsdg, zeroAddress)],
          exactAmount: 10n ** 6n,
        },
      ],
    } as const,
  ];
}

describe("a trade's snapshot for a wallet holding a token whose balanceOf and allowance burn gas", () => {
  it("answers the head reads, the quotes and the other token's balance; only the burner's reads are null; one " +
    "eth_call, capped", async () => {
    const usdg = dn.token("USDG");
    const held = parseUnits("250", 6);
    const wallet = await dn.freshWallet(10n ** 19n, [[usdg, held]]);
    const burner = await deployBalanceBurner(dn, { holders: [wallet.address] });
    const config = { chainId: dn.universe.chainId, rpcUrl: proxy.url, contracts: dn.universe.contracts } as Parameters<
      typeof createChainClient
    >[0];
    const chain = createChainClient(config);
    const calls = quotes();
    seen.length = 0;
    const snap = await readChainSnapshot(chain, config as never, {
      calls,
      curveToken: null,
      stockTokens: [],
      wallet: { address: wallet.address, tokens: [usdg, burner], inputToken: burner, withDelegation: false },
    });

    const head = await dn.pub.getBlock();
    expect(snap.block).toBe(head.number);
    expect(snap.time).toBe(Number(head.timestamp));
    expect(snap.calls.map((c) => c.ok)).toEqual([true, true]);
    for (const c of snap.calls) expect((c as { result: readonly [bigint, bigint] }).result[0]).toBeGreaterThan(0n);
    expect(snap.wallet).toMatchObject({
      sanctioned: false,
      eth: 10n ** 19n,
      allowanceToPermit2: null,
      allowanceToCurve: null,
    });
    expect(snap.wallet!.routerPermit).not.toBeNull();
    expect(snap.wallet!.balances).toEqual({ [usdg.toLowerCase()]: held, [burner.toLowerCase()]: null });

    // One eth_call carried the whole batch, with an explicit cap no larger than its budgets' sum:
    // head 3, pinned 3 (sanctions, ETH balance, Permit2), quotes 2, untrusted 4 (two balances, two allowances).
    const ethCalls = seen.filter((m) => m.method === "eth_call");
    expect(ethCalls).toHaveLength(1);
    const gas = (ethCalls[0]!.params as [{ gas?: Hex }])[0].gas;
    expect(gas, "the snapshot's eth_call carries no gas cap").toBeDefined();
    const budgets = [
      ...Array(3).fill(SNAPSHOT_GAS.head),
      ...Array(3).fill(SNAPSHOT_GAS.pinned),
      ...Array(2).fill(SNAPSHOT_GAS.quote),
      ...Array(4).fill(UNTRUSTED_GAS),
    ] as bigint[];
    const sum = budgets.reduce((a, b) => a + b + MULTICALL_PER_CALL_GAS, MULTICALL_BASE_GAS);
    expect(BigInt(gas!)).toBeLessThanOrEqual(sum);
    expect(BigInt(gas!)).toBeLessThan(10_000_000n);
  }, 60_000);
});

describe("a trade's snapshot on a silent node", () => {
  it("is 502 RPC_UNAVAILABLE", async () => {
    const config = { chainId: dn.universe.chainId, rpcUrl: proxy.url, contracts: dn.universe.contracts } as Parameters<
      typeof createChainClient
    >[0];
    const chain = createChainClient(config);
    proxy.silent();
    try {
      const read = readChainSnapshot(chain, config as never, {
        calls: quotes(),
        curveToken: null,
        stockTokens: [],
        wallet: null,
      });
      await expect(read).rejects.toMatchObject({ code: "RPC_UNAVAILABLE", status: 502 });
    } finally {
      proxy.silent(false);
    }
  }, 30_000);
});

describe("the dry run's balance-slot probe of an address-named token", () => {
  it(
    "is one eth_call capped at UNTRUSTED_GAS: a token whose balanceOf burns gas has no slot, a plain token's is " +
      "found",
    async () => {
      const config = {
        chainId: dn.universe.chainId,
        rpcUrl: proxy.url,
        contracts: dn.universe.contracts,
      } as Parameters<typeof createChainClient>[0];
      const chain = createChainClient(config);
      const burner = await deployBalanceBurner(dn);
      seen.length = 0;
      expect(await findBalanceSlot(chain, burner)).toBeNull();
      const ethCalls = seen.filter((m) => m.method === "eth_call");
      expect(ethCalls).toHaveLength(1);
      const gas = (ethCalls[0]!.params as [{ gas?: Hex }])[0].gas;
      expect(gas !== undefined && BigInt(gas) <= UNTRUSTED_GAS, `gas cap ${gas}`).toBe(true);

      const usdg = dn.token("USDG");
      const slot = await findBalanceSlot(chain, usdg);
      expect(slot).not.toBeNull();
      const holder = "0x00000000000000000000000000000000000a11ce" as Address;
      const funded = await dn.pub.readContract({
        address: usdg,
        abi: erc20Abi,
        functionName: "balanceOf",
        args: [holder],
        stateOverride: [balanceOverride(usdg, holder, slot!, 777n)],
      });
      expect(funded).toBe(777n);
    },
  );
});

describe("the capped batch's aggregator", () => {
  it(
    "runs the code contracts/src/CappedAggregator.sol compiles to (forge build, as the devnet snapshot ran " + "it)",
    () => {
      const artifact = JSON.parse(
        readFileSync(join(ROOT, "contracts", "out", "CappedAggregator.sol", "CappedAggregator.json"), "utf8"),
      );
      expect(CAPPED_AGGREGATOR_RUNTIME).toBe(artifact.deployedBytecode.object);
    },
  );
});
