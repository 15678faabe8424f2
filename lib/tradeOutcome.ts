import { bpsOf } from "./fees.js";
import { decodeAbiParameters, getAddress, toEventSelector, zeroAddress, type Address, type Hex } from "viem";
import { sameAddress as same } from "./address.js";

/** keccak256("Transfer(address,address,uint256)") */
export const TRANSFER_TOPIC = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";
/** keccak256("Withdrawal(address,uint256)") (WETH9 unwrap) */
export const WITHDRAWAL_TOPIC = "0x7fcf532c15f0a6db0bd6d0e038bea71d30d808c7d98cb3bf7268a95bf5081b65";

export type RawLog = { address: Address; topics: Hex[]; data: Hex; logIndex: Hex | number };
export type Leg = { token: Address; from: Address; to: Address; amount: string };

const topicAddress = (t: Hex | undefined): Address => getAddress(`0x${(t ?? "0x").slice(-40)}`);

/** ERC-20 transfers of a receipt's logs (3 topics: Transfer(address indexed, address indexed, uint256)). */
export function transfersOf(logs: RawLog[]): Leg[] {
  return logs
    .filter((l) => l.topics[0] === TRANSFER_TOPIC && l.topics.length === 3)
    .map((l) => ({
      token: getAddress(l.address),
      from: topicAddress(l.topics[1]),
      to: topicAddress(l.topics[2]),
      amount: BigInt(l.data).toString(),
    }));
}

export type Outcome = {
  tokenIn: Address | null;
  amountIn: bigint | null;
  tokenOut: Address | null;
  amountOut: bigint | null;
  feeToken: Address | null;
  feeAmount: bigint | null;
  legs: Leg[];
};

/**
 * What left and reached the wallet, and what reached the platform, from the transaction's
 * ERC-20 transfers and native ETH moves. Net per token: the token the wallet lost most is the
 * input, the one it gained most the output.
 */
export function tradeOutcome(wallet: Address, platform: Address, moves: Leg[]): Outcome {
  const net = new Map<Address, bigint>();
  const legs: Leg[] = [];
  let feeToken: Address | null = null;
  let feeAmount: bigint | null = null;
  for (const m of moves) {
    // The first value reaching the platform is the fee, from the router or (a Permit2
    // transfer) straight from the wallet.
    if (feeToken === null && same(m.to, platform)) {
      feeToken = m.token;
      feeAmount = BigInt(m.amount);
    }
    if (same(m.from, wallet) === same(m.to, wallet)) continue;
    legs.push(m);
    const signed = same(m.to, wallet) ? BigInt(m.amount) : -BigInt(m.amount);
    net.set(m.token, (net.get(m.token) ?? 0n) + signed);
  }
  let tokenIn: Address | null = null;
  let amountIn: bigint | null = null;
  let tokenOut: Address | null = null;
  let amountOut: bigint | null = null;
  for (const [token, v] of net) {
    if (v < 0n && (amountIn === null || -v > amountIn)) [tokenIn, amountIn] = [token, -v];
    if (v > 0n && (amountOut === null || v > amountOut)) [tokenOut, amountOut] = [token, v];
  }
  return { tokenIn, amountIn, tokenOut, amountOut, feeToken, feeAmount, legs };
}

/** keccak256("Swap(bytes32,address,int128,int128,uint160,uint128,int24,uint24)") (V4 PoolManager) */
export const V4_SWAP_TOPIC = toEventSelector("Swap(bytes32,address,int128,int128,uint160,uint128,int24,uint24)");
/** keccak256 of the launchpad's Trade(address,address,bool,uint256,uint256,uint256,uint256,uint256) */
export const CURVE_TRADE_TOPIC = toEventSelector("Trade(address,address,bool,uint256,uint256,uint256,uint256,uint256)");

/** What the service built and relayed: the only input besides the receipt (no trace). */
export type RelayedPlan = {
  wallet: Address;
  execution: "router" | "curve" | "batch";
  /** zeroAddress for native ETH. */
  tokenIn: Address;
  tokenOut: Address;
  /** Value of the relayed swap transaction (ETH the wallet attached). */
  txValue: bigint;
  /** The plan's fee as built (summary.fee): input side is an exact amount, output side bps of the output. */
  fee: { side: "input" | "output"; bps: number; token: Address; recipient: Address; amount: bigint };
};
export type RelayedContracts = { poolManager: Address; router: Address; launchpad: Address };
/** eth_getTransactionReceipt as JSON (status "0x1"/"0x0") or as viem parses it. */
export type ReceiptLike = { status: string; logs: RawLog[] };
/**
 * Where the ETH amount came from: the last hop's PoolManager Swap, the curve's Trade event, the
 * transaction value, or the plan.
 */
export type EthSource = "v4_swap" | "curve_trade" | "tx_value";
export type RelayedOutcome = {
  status: "mined" | "reverted";
  tokenIn: Address;
  amountIn: bigint | null;
  tokenOut: Address;
  amountOut: bigint | null;
  feeToken: Address | null;
  feeAmount: bigint | null;
  eth: EthSource[];
};

const succeeded = (status: string) => status === "success" || status === "0x1" || status === "1";

/**
 * The outcome of a trade the service relayed, from its receipt and its plan alone (no trace):
 * - ERC-20 legs from Transfer logs (WETH in and out included: Permit2 pull, SWEEP).
 * - ETH in: the swap transaction's value (a 7702 batch: the value the wallet spends through itself).
 * - ETH out of a router trade: amount0 of the last PoolManager Swap the router made (ETH is always
 *   currency0; positive = paid to the router); an output-side ETH fee is PAY_PORTION's
 *   `out * bps / 10_000` and the SWEEP sends the rest to the wallet.
 * - ETH out of a curve sale: the Trade event's ethAmount, paid straight to the wallet (less the fee
 *   when a batch pays it inside the same transaction: the amount is the wallet's gain in the trade's
 *   own transaction, as it always was).
 * - ETH fees: an input-side TRANSFER is the exact amount of our calldata; a two_step curve fee is
 *   its own transaction (`feeTx`), paid when that one mined; a batch carries it inside.
 * A reverted transaction moved nothing (a two_step fee sent before it is still reported as paid).
 */
export function relayedOutcome(
  receipt: ReceiptLike,
  plan: RelayedPlan,
  contracts: RelayedContracts,
  feeTx?: { status: string } | null,
): RelayedOutcome {
  const ethFee = plan.fee.token === zeroAddress && plan.fee.amount >= 0n;
  const twoStepFee =
    plan.execution === "curve" && ethFee && feeTx ? (succeeded(feeTx.status) ? plan.fee.amount : null) : null;
  const base = { tokenIn: plan.tokenIn, tokenOut: plan.tokenOut };
  if (!succeeded(receipt.status)) {
    return {
      status: "reverted",
      ...base,
      amountIn: null,
      amountOut: null,
      feeToken: twoStepFee !== null ? zeroAddress : null,
      feeAmount: twoStepFee,
      eth: [],
    };
  }
  const eth: EthSource[] = [];
  const legs = transfersOf(receipt.logs);
  const sum = (token: Address, pick: (l: Leg) => boolean) =>
    legs.filter((l) => same(l.token, token) && pick(l)).reduce((s, l) => s + BigInt(l.amount), 0n);
  const wallet = plan.wallet;

  let amountIn: bigint;
  if (plan.tokenIn === zeroAddress) {
    amountIn = plan.txValue;
    eth.push("tx_value");
  } else amountIn = sum(plan.tokenIn, (l) => same(l.from, wallet) && !same(l.to, wallet));

  let fee: { feeToken: Address | null; feeAmount: bigint | null } = { feeToken: null, feeAmount: null };
  let amountOut: bigint;
  if (plan.tokenOut !== zeroAddress) {
    amountOut = sum(plan.tokenOut, (l) => same(l.to, wallet) && !same(l.from, wallet));
  } else if (plan.execution === "router") {
    const out = routerEthOut(receipt, plan, contracts);
    amountOut = out.amountOut;
    if (out.feeAmount !== null) fee = { feeToken: zeroAddress, feeAmount: out.feeAmount };
    eth.push("v4_swap");
  } else {
    amountOut = curveEthOut(receipt, plan, contracts, ethFee);
    eth.push("curve_trade");
  }
  if (fee.feeToken === null) fee = feePaid(legs, plan, twoStepFee);
  return { status: "mined", ...base, amountIn, amountOut, ...fee, eth };
}

/**
 * ETH out of a router trade: amount0 of the last PoolManager Swap the router made, less an
 * output-side ETH fee (PAY_PORTION's `out * bps / 10_000`; feeAmount null when there is none).
 */
function routerEthOut(
  receipt: ReceiptLike,
  plan: RelayedPlan,
  contracts: RelayedContracts,
): { amountOut: bigint; feeAmount: bigint | null } {
  const swaps = receipt.logs.filter(
    (l) =>
      same(l.address, contracts.poolManager) &&
      l.topics[0] === V4_SWAP_TOPIC &&
      same(topicAddress(l.topics[2]), contracts.router),
  );
  const last = swaps[swaps.length - 1];
  const amount0 = last ? (decodeAbiParameters([{ type: "int128" }], last.data.slice(0, 66) as Hex)[0] as bigint) : 0n;
  const gross = amount0 > 0n ? amount0 : 0n;
  if (plan.fee.side === "output" && plan.fee.token === zeroAddress) {
    const feeAmount = bpsOf(gross, plan.fee.bps);
    return { amountOut: gross - feeAmount, feeAmount };
  }
  return { amountOut: gross, feeAmount: null };
}

/** ETH out of a curve sale: the Trade event's ethAmount (0 for a buy), less an ETH fee a batch pays inside. */
function curveEthOut(receipt: ReceiptLike, plan: RelayedPlan, contracts: RelayedContracts, ethFee: boolean): bigint {
  const trade = receipt.logs.find(
    (l) =>
      same(l.address, contracts.launchpad) &&
      l.topics[0] === CURVE_TRADE_TOPIC &&
      same(topicAddress(l.topics[1]), plan.tokenIn),
  );
  const [isBuy, ethAmount] = trade
    ? (decodeAbiParameters([{ type: "bool" }, { type: "uint256" }], trade.data.slice(0, 130) as Hex) as [
        boolean,
        bigint,
      ])
    : [true, 0n];
  let amountOut = isBuy ? 0n : ethAmount;
  if (plan.execution === "batch" && ethFee) amountOut -= plan.fee.amount;
  return amountOut;
}

/**
 * The fee of a mined trade other than an output-side ETH fee: an ERC-20 fee's Transfer to the
 * recipient; an ETH fee of a two_step curve trade when its transaction mined; a batch's or an
 * input-side TRANSFER's exact amount.
 */
function feePaid(
  legs: Leg[],
  plan: RelayedPlan,
  twoStepFee: bigint | null,
): { feeToken: Address | null; feeAmount: bigint | null } {
  if (plan.fee.token !== zeroAddress) {
    const paid = legs.find((l) => same(l.token, plan.fee.token) && same(l.to, plan.fee.recipient));
    if (paid) return { feeToken: paid.token, feeAmount: BigInt(paid.amount) };
  } else if (plan.execution === "curve") {
    if (twoStepFee !== null) return { feeToken: zeroAddress, feeAmount: twoStepFee };
  } else if (plan.execution === "batch" || plan.fee.side === "input") {
    // A batch runs its fee call or reverts whole; the router's TRANSFER moves exactly its amount.
    return { feeToken: zeroAddress, feeAmount: plan.fee.amount };
  }
  return { feeToken: null, feeAmount: null };
}
