import { LRUCache } from "lru-cache";
import {
  encodeAbiParameters,
  encodeFunctionData,
  hexToBigInt,
  maxUint160,
  maxUint256,
  numberToHex,
  pad,
  zeroAddress,
  type Address,
  type Hex,
  type PublicClient,
} from "viem";
import { keccak256 } from "../../lib/keccak.js";
import { erc20Abi } from "../../abis/erc20.js";
import { MULTICALL3_ADDRESS, multicall3Abi } from "../../abis/multicall3.js";
import { PERMIT2_ADDRESS, permit2Abi } from "../../abis/permit2.js";
import { CONTRACT_BALANCE, Command, ROUTER_ADDRESS_THIS, universalRouterAbi } from "../../abis/universalRouter.js";
import { fencedRead } from "../../lib/chain.js";
import { quoteExactInputSingle } from "../../lib/quoter.js";
import { inputs, routerProgram, v4, v4SwapInput } from "../../lib/router/encode.js";
import type { PoolKey } from "../../lib/v4.js";

/**
 * A real buy-then-sell through the Universal Router in one eth_simulateV1 block, funded by state
 * overrides (no money needed). Tokens go through the router first and are settled from its actual
 * balance, so fee-on-transfer tokens are measured rather than mistaken for honeypots.
 */
export type Probe = {
  ok: boolean;
  buyTaxBps: number | null;
  sellTaxBps: number | null;
  honeypot: boolean;
  reason: string | null;
  funded_by_overrides: true;
};

/**
 * Probed slots, per chain client (one per process in production): an address is one contract on one chain, but a
 * process can hold clients of several chains (tests: devnets whose fixtures put different tokens at one address).
 * Bounded: any address can be asked about; a slot never moves, so no ttl.
 */
const slotsByChain = new WeakMap<PublicClient, LRUCache<string, { slot: bigint | null }>>();
function balanceSlotsOf(chain: PublicClient): LRUCache<string, { slot: bigint | null }> {
  let slots = slotsByChain.get(chain);
  if (!slots) slotsByChain.set(chain, (slots = new LRUCache({ max: 20_000 })));
  return slots;
}

export type SimCall = { to: Address; data: Hex; value?: bigint };
export type Override = { address: Address; balance?: bigint; stateDiff?: { slot: Hex; value: Hex }[] };
export type SimResult = { status: Hex; returnData: Hex; gasUsed: Hex; error?: { message?: string } };

/**
 * One eth_simulateV1 block of calls from `from` (viem's simulateBlocks), with state overrides; no
 * signatures, no fees. Overrides of one address: the last one counts. A reverted call's error is
 * viem's decoding of its revert data (anvil's own message is only "execution failed").
 */
export async function simulateCalls(
  chain: PublicClient,
  from: Address,
  overrides: Override[],
  calls: SimCall[],
): Promise<SimResult[]> {
  const byAddress = new Map(overrides.map((o) => [o.address.toLowerCase(), o]));
  const [block] = await chain.simulateBlocks({
    blocks: [
      {
        stateOverrides: [...byAddress.values()].map((o) => ({
          address: o.address,
          ...(o.balance !== undefined ? { balance: o.balance } : {}),
          ...(o.stateDiff ? { stateDiff: o.stateDiff } : {}),
        })),
        calls: calls.map((c) => ({ from, to: c.to, data: c.data, value: c.value ?? 0n, gas: 3_000_000n })),
      },
    ],
    validation: false,
    blockTag: "latest",
  });
  return block!.calls.map((r) => ({
    status: r.status === "success" ? "0x1" : "0x0",
    returnData: r.data,
    gasUsed: numberToHex(r.gasUsed),
    ...(r.status === "failure"
      ? {
          error: {
            message: (r.error as { shortMessage?: string }).shortMessage?.replace(/\s*\n\s*/g, " ") ?? r.error.message,
          },
        }
      : {}),
  }));
}

/** The storage write that gives `holder` `amount` of a mapping-balance token at `slot`. */
export const balanceOverride = (token: Address, holder: Address, slot: bigint, amount: bigint): Override => ({
  address: token,
  stateDiff: [
    {
      slot: keccak256(encodeAbiParameters([{ type: "address" }, { type: "uint256" }], [holder, slot])),
      value: pad(numberToHex(amount)),
    },
  ],
});

/** Slots probed for a mapping balance: 0..11, each given its own marker balance (MARKER + slot). */
const PROBED_SLOTS = 12n;
const MARKER = 424_242n;

/**
 * The storage slot of `balanceOf` for Solidity-mapping tokens (probed with overrides, cached): one
 * fenced balanceOf (UNTRUSTED_GAS: the token is anyone's code) with every candidate slot
 * overridden to its own marker, so the answer names the slot. A node that does not answer throws.
 */
export async function findBalanceSlot(chain: PublicClient, token: Address): Promise<bigint | null> {
  const balanceSlots = balanceSlotsOf(chain);
  const cached = balanceSlots.get(token.toLowerCase());
  if (cached !== undefined) return cached.slot;
  const probe = "0x00000000000000000000000000000000000b0b01" as Address;
  const slots = Array.from({ length: Number(PROBED_SLOTS) }, (_, i) => BigInt(i));
  const stateDiff = slots.map((slot) => ({
    slot: keccak256(encodeAbiParameters([{ type: "address" }, { type: "uint256" }], [probe, slot])),
    value: pad(numberToHex(MARKER + slot)),
  }));
  const bal = await fencedRead(chain, {
    address: token,
    abi: erc20Abi,
    functionName: "balanceOf",
    args: [probe],
    stateOverride: [{ address: token, stateDiff }],
  });
  const found =
    bal.status === "success" && bal.result >= MARKER && bal.result < MARKER + PROBED_SLOTS ? bal.result - MARKER : null;
  balanceSlots.set(token.toLowerCase(), { slot: found });
  return found;
}

const deadline = () => BigInt(Math.floor(Date.now() / 1000) + 600);
const execute = (steps: Parameters<typeof routerProgram>[0]) => {
  const { commands, inputs: ins } = routerProgram(steps);
  return encodeFunctionData({ abi: universalRouterAbi, functionName: "execute", args: [commands, ins, deadline()] });
};

/**
 * Swap program: pull `amount` of `tokenIn` into the router (ETH: sent as value), settle its whole
 * balance, swap the full credit, take all out.
 */
function swapProgram(poolKey: PoolKey, tokenIn: Address, tokenOut: Address, amount: bigint): Hex {
  const steps: Parameters<typeof routerProgram>[0] = [];
  if (tokenIn !== zeroAddress)
    steps.push({
      command: Command.PERMIT2_TRANSFER_FROM,
      input: inputs.permit2TransferFrom(tokenIn, ROUTER_ADDRESS_THIS, amount),
    });
  steps.push({
    command: Command.V4_SWAP,
    input: v4SwapInput([
      v4.settle(tokenIn, CONTRACT_BALANCE, false),
      v4.swapExactInSingle({
        poolKey,
        zeroForOne: tokenIn.toLowerCase() === poolKey.currency0.toLowerCase(),
        amountIn: 0n,
        amountOutMinimum: 0n,
      }),
      v4.takeAll(tokenOut, 0n),
    ]),
  });
  return execute(steps);
}

const quoteIn = (chain: PublicClient, quoter: Address, poolKey: PoolKey, tokenIn: Address, amount: bigint) =>
  quoteExactInputSingle(chain, quoter, poolKey, tokenIn.toLowerCase() === poolKey.currency0.toLowerCase(), amount);

export type ProbeRequest = {
  chain: PublicClient;
  router: Address;
  quoter: Address;
  poolKey: PoolKey;
  token: Address;
  /** The pool's other side: USDG (or any mapping-balance token) or ETH (0x0). */
  quote: Address;
  quoteAmount: bigint;
};

/** The probe's made-up wallet: funded by overrides only. */
const PROBE_WALLET = "0x00000000000000000000000000000000005C4EE1" as Address;

/** A probe that stopped early: why, and what it measured before. */
const probeStopped = (ok: boolean, honeypot: boolean, reason: string, buyTaxBps: number | null = null): Probe => ({
  ok,
  buyTaxBps,
  sellTaxBps: null,
  honeypot,
  reason,
  funded_by_overrides: true,
});

/** The shortfall of `got` against the quoter's `expected`, in bps (null without an expectation). */
const taxBps = (expected: bigint, got: bigint) =>
  expected > 0n ? Math.max(0, Number(((expected - got) * 10_000n) / expected)) : null;

/** The probe wallet's overrides: gas money, and `quoteAmount` of the quote token (null: its balance has no slot). */
async function probeOverrides(p: ProbeRequest): Promise<Override[] | null> {
  const stateOverride: Override[] = [{ address: PROBE_WALLET, balance: 10n ** 24n }];
  if (p.quote !== zeroAddress) {
    const slot = await findBalanceSlot(p.chain, p.quote);
    if (slot === null) return null;
    stateOverride.push(balanceOverride(p.quote, PROBE_WALLET, slot, p.quoteAmount));
  }
  return stateOverride;
}

/** The approvals a token needs before the router pulls it: the token to Permit2, Permit2 to the router. */
const approvalCalls = (router: Address, t: Address): SimCall[] => [
  {
    to: t,
    data: encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [PERMIT2_ADDRESS, maxUint256] }),
  },
  {
    to: PERMIT2_ADDRESS,
    data: encodeFunctionData({ abi: permit2Abi, functionName: "approve", args: [t, router, maxUint160, 2 ** 47] }),
  },
];

const probeBalance = (t: Address) => balanceRead(MULTICALL3_ADDRESS, t, PROBE_WALLET);

/** The sell half: the buy again, then all `received` sold back, measured by the quote balance before and after. */
async function probeSell(
  p: ProbeRequest,
  run: (calls: SimCall[]) => Promise<SimResult[]>,
  buy: SimCall[],
  received: bigint,
  buyTaxBps: number | null,
): Promise<Probe> {
  const { chain, router, poolKey, token, quote } = p;
  const expectedSell = await quoteIn(chain, p.quoter, poolKey, token, received);
  const second = await run([
    ...buy,
    ...approvalCalls(router, token),
    probeBalance(quote),
    { to: router, data: swapProgram(poolKey, token, quote, received) },
    probeBalance(quote),
  ]);
  const sellCall = second[second.length - 2]!;
  if (hexToBigInt(sellCall.status) !== 1n)
    return probeStopped(
      true,
      true,
      `sell reverted${sellCall.error?.message ? `: ${sellCall.error.message}` : ""}`,
      buyTaxBps,
    );
  const before = hexToBigInt(second[second.length - 3]!.returnData);
  const after = hexToBigInt(second[second.length - 1]!.returnData);
  const got = after - before;
  const sellTaxBps = taxBps(expectedSell, got);
  return { ok: true, buyTaxBps, sellTaxBps, honeypot: got === 0n, reason: null, funded_by_overrides: true };
}

export async function probeBuySell(p: ProbeRequest): Promise<Probe> {
  const { chain, router, poolKey, token, quote, quoteAmount } = p;
  const stateOverride = await probeOverrides(p);
  if (stateOverride === null) return probeStopped(false, false, "quote token balance cannot be funded by overrides");
  const buy: SimCall[] = [
    ...(quote === zeroAddress ? [] : approvalCalls(router, quote)),
    {
      to: router,
      data: swapProgram(poolKey, quote, token, quoteAmount),
      value: quote === zeroAddress ? quoteAmount : 0n,
    },
    probeBalance(token),
  ];
  const run = (calls: SimCall[]) => simulateCalls(chain, PROBE_WALLET, stateOverride, calls);
  const expectedBuy = await quoteIn(chain, p.quoter, poolKey, quote, quoteAmount);
  const first = await run(buy);
  const buyCall = first[first.length - 2]!;
  if (hexToBigInt(buyCall.status) !== 1n)
    return probeStopped(false, false, `buy reverted${buyCall.error?.message ? `: ${buyCall.error.message}` : ""}`);
  const received = hexToBigInt(first[first.length - 1]!.returnData);
  const buyTaxBps = taxBps(expectedBuy, received);
  if (received === 0n) return probeStopped(false, true, "the buy delivered nothing", buyTaxBps);
  return probeSell(p, run, buy, received, buyTaxBps);
}

/** A balance read as a call (ETH through Multicall3's getEthBalance). */
function balanceRead(multicall3: Address, token: Address, holder: Address): SimCall {
  return token === zeroAddress
    ? {
        to: multicall3,
        data: encodeFunctionData({ abi: multicall3Abi, functionName: "getEthBalance", args: [holder] }),
      }
    : { to: token, data: encodeFunctionData({ abi: erc20Abi, functionName: "balanceOf", args: [holder] }) };
}

export type PlanSimulation = {
  ok: boolean;
  error: string | null;
  amount_out: string | null;
  fee_transfer: { token: Address; to: Address; amount: string } | null;
  gas_total: number;
  gas: number[];
  funded_by_overrides: boolean;
};

/**
 * Runs a plan's transactions in order from `wallet` in one simulated block and measures what
 * reached the wallet (output token) and the fee recipient (fee token). `overrides` lend balances;
 * a call that reverts stops the reading there.
 */
export async function simulatePlan(p: {
  chain: PublicClient;
  multicall3: Address;
  wallet: Address;
  /** Who sends the transactions (a session's executor redeeming for the wallet); default the wallet. */
  from?: Address;
  txs: SimCall[];
  tokenOut: Address;
  feeToken: Address;
  feeRecipient: Address;
  overrides: Override[];
}): Promise<PlanSimulation> {
  const reads = [
    balanceRead(p.multicall3, p.tokenOut, p.wallet),
    balanceRead(p.multicall3, p.feeToken, p.feeRecipient),
  ];
  const res = await simulateCalls(p.chain, p.from ?? p.wallet, p.overrides, [...reads, ...p.txs, ...reads]);
  const funded = p.overrides.length > 0;
  const txRes = res.slice(2, 2 + p.txs.length);
  const gas = txRes.map((r) => Number(hexToBigInt(r.gasUsed)));
  const gasTotal = gas.reduce((a, b) => a + b, 0);
  const failed = txRes.findIndex((r) => hexToBigInt(r.status) !== 1n);
  if (failed >= 0) {
    const why = txRes[failed]!.error?.message ?? "reverted";
    return {
      ok: false,
      error: `transaction ${failed + 1} of ${p.txs.length} reverted: ${why.slice(0, 200)}`,
      amount_out: null,
      fee_transfer: null,
      gas_total: gasTotal,
      gas,
      funded_by_overrides: funded,
    };
  }
  const n = 2 + p.txs.length;
  const big = (r: SimResult) => hexToBigInt(r.returnData);
  let out = big(res[n]!) - big(res[0]!);
  // ETH out: the wallet also sent ETH with its transactions (value); add it back.
  if (p.tokenOut === zeroAddress) out += p.txs.reduce((s, t) => s + (t.value ?? 0n), 0n);
  const fee = big(res[n + 1]!) - big(res[1]!);
  return {
    ok: true,
    error: null,
    amount_out: out.toString(),
    fee_transfer: fee > 0n ? { token: p.feeToken, to: p.feeRecipient, amount: fee.toString() } : null,
    gas_total: gasTotal,
    gas,
    funded_by_overrides: funded,
  };
}
