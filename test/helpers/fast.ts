import { maxUint256, zeroAddress, type Address, type Hex, type TransactionSerializableEIP1559 } from "viem";
import type { privateKeyToAccount } from "viem/accounts";
import { erc20Abi } from "../../abis/erc20.js";
import { PERMIT2_ADDRESS, permit2Abi } from "../../abis/permit2.js";
import { poolRouteOf } from "../../api/fast/rebuild.js";
import { buildRouterSwap, permitTypedData } from "../../api/trading/index.js";
import { bpsOf } from "../../lib/fees.js";
import type { FastPair } from "../../lib/fastRoutes.js";
import { quoteExactIn } from "./trades.js";
import type { Stack } from "./stack.js";

type Account = ReturnType<typeof privateKeyToAccount>;

export type FastOpts = {
  token_in: string;
  token_out: string;
  amount_in: bigint;
  /** Default: 99 % of what the pinned pools quote now, after the fee. */
  min_out?: bigint;
  deadline?: number;
  fee_bps?: number;
  /** The fee the calldata pays (default: the terms' fee). */
  calldata_fee_bps?: number;
  permit?: boolean;
  /** Overrides of the signed transaction's fields. */
  tx?: Partial<TransactionSerializableEIP1559>;
  /** Rewrites the calldata before signing (an attacker's or a buggy client's change). */
  data?: (d: Hex) => Hex;
  body?: Record<string, unknown>;
  signer?: Account;
};

/**
 * What an SDK does in fast mode, from the published terms only: take the pinned pair, quote its
 * pools, build the router call (the same encoder the server rebuilds with), sign an EIP-1559
 * transaction with its own nonce and fees. Returns the live/fast body.
 */
export async function fastBody(s: Stack, a: Account, key: string, o: FastOpts) {
  const { dn } = s;
  const t = await s.agent.get("/live/fast/terms", key);
  if (t.status !== 200) throw new Error(`fast/terms answered ${t.status}: ${JSON.stringify(t.json)}`);
  const terms = t.json;
  const pair = terms.routes.pairs.find((x: FastPair) => x.token_in === o.token_in && x.token_out === o.token_out) as
    | FastPair
    | undefined;
  const feeBps = o.calldata_fee_bps ?? terms.fee.bps;
  // 30 s past the later of the last block's time and the service's clock: the service refuses a deadline not after
  // its own now (DEADLINE), and the last block may be older than that when nothing was mined for a while (CI's load).
  const chainTime = Number((await dn.pub.getBlock()).timestamp);
  const deadline = o.deadline ?? Math.max(chainTime, Number(terms.server_time)) + 30;
  const c = dn.universe.contracts;
  const tokenIn = pair?.address_in ?? zeroAddress;
  const tokenOut = pair?.address_out ?? zeroAddress;
  const fee = {
    side: pair?.fee_side ?? "input",
    bps: feeBps,
    recipient: s.api.config.feeRecipient,
    amount: pair?.fee_side === "output" ? 0n : bpsOf(o.amount_in, feeBps),
  } as const;
  const minOut = o.min_out ?? (pair ? await expectedOut(s, pair, o.amount_in, feeBps) : 0n);
  let permit = null as Parameters<typeof buildRouterSwap>[0]["permit"];
  let permitBody: Record<string, unknown> | undefined;
  if (o.permit) {
    const [, , nonce] = await dn.pub.readContract({
      address: PERMIT2_ADDRESS,
      abi: permit2Abi,
      functionName: "allowance",
      args: [a.address, tokenIn, c.universalRouter],
    });
    const p = {
      details: { token: tokenIn, amount: o.amount_in, expiration: chainTime + 600, nonce: Number(nonce) },
      spender: c.universalRouter,
      sigDeadline: BigInt(chainTime + 600),
    };
    const signature = await a.signTypedData(permitTypedData(4663, c.permit2, p));
    permit = { permit: p, signature };
    permitBody = {
      amount: o.amount_in.toString(),
      expiration: p.details.expiration,
      nonce: p.details.nonce,
      sig_deadline: Number(p.sigDeadline),
      signature,
    };
  }
  const built = pair
    ? buildRouterSwap({
        chainId: 4663,
        router: c.universalRouter,
        route: poolRouteOf(pair),
        tokenIn,
        tokenOut,
        weth: dn.token("WETH"),
        amountIn: o.amount_in,
        amountOutMin: minOut,
        fee,
        deadline,
        permit,
      }).data
    : "0x";
  const data = o.data ? o.data(built) : built;
  const signer = o.signer ?? a;
  const baseFee = BigInt(terms.base_fee_wei);
  const tx: TransactionSerializableEIP1559 = {
    type: "eip1559",
    chainId: 4663,
    to: c.universalRouter,
    data,
    value: tokenIn === zeroAddress ? o.amount_in : 0n,
    nonce: await dn.pub.getTransactionCount({ address: signer.address, blockTag: "pending" }),
    gas: BigInt((pair?.gas_floor_permit ?? 300_000) + 60_000),
    maxFeePerGas: baseFee * 2n + 2n,
    maxPriorityFeePerGas: 1n,
    ...o.tx,
  };
  const raw = await signer.signTransaction(tx);
  const body = {
    raw_tx: raw,
    token_in: o.token_in,
    token_out: o.token_out,
    amount_in: o.amount_in.toString(),
    min_out: minOut.toString(),
    deadline,
    fee_bps: o.fee_bps ?? terms.fee.bps,
    owner_attests_non_us: true,
    ...(permitBody ? { permit: permitBody } : {}),
    ...o.body,
  };
  return { raw, body, pair, terms, minOut, tx };
}

/** The pinned pools' answer for the amount after an input fee (or less an output fee), less 1 %. */
async function expectedOut(s: Stack, pair: FastPair, amountIn: bigint, feeBps: number): Promise<bigint> {
  let amount = pair.fee_side === "input" ? amountIn - bpsOf(amountIn, feeBps) : amountIn;
  for (const h of pair.hops) {
    amount = await quoteExactIn(
      s.dn,
      { currency0: h.currency0, currency1: h.currency1, fee: h.fee, tickSpacing: h.tick_spacing, hooks: h.hooks },
      h.zero_for_one,
      amount,
    );
  }
  if (pair.fee_side === "output") amount -= bpsOf(amount, feeBps);
  return (amount * 99n) / 100n;
}

/** ERC-20 approve to Permit2 only (the router's allowance comes from the permit in the call). */
export async function approvePermit2(s: Stack, a: Account, token: Address) {
  await s.dn.mined(
    await s.dn
      .walletFor(a)
      .writeContract({ address: token, abi: erc20Abi, functionName: "approve", args: [PERMIT2_ADDRESS, maxUint256] }),
  );
}
