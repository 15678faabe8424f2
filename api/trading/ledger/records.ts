import { concat, numberToHex, pad, toHex, zeroAddress, type Address, type Hex } from "viem";
import { keccak256 } from "../../../lib/keccak.js";
import type { RelayedOutcome, RelayedPlan } from "../../../lib/tradeOutcome.js";
import type { PlanTx } from "../txs.js";
import type { Db } from "../../ports/store/db.js";

/** What every ledger query runs over: the app store and the service clock (ms). */
export type LedgerDeps = { db: Db; clock: () => number };
/** The service clock in unix seconds, as the ledger's rows keep time. */
export const nowS = (d: LedgerDeps) => Math.floor(d.clock() / 1000);

/** A relayed trade with no receipt after this long is dropped (SPEC.md "Trade record status"). */
export const DROP_AFTER_S = 3_600;

/** Identity of a built transaction: the fields a signature must carry unchanged. */
export const fingerprint = (t: Pick<PlanTx, "to" | "data" | "value" | "chain_id">): Hex =>
  keccak256(concat([t.to.toLowerCase() as Hex, t.data, pad(numberToHex(BigInt(t.value))), pad(toHex(t.chain_id))]));

/** A trade's side; a refused call whose token never resolved has nulls beyond what it named. */
export type TokenRef = {
  token: string;
  address: Address | null;
  symbol: string | null;
  name: string | null;
  decimals: number | null;
};
export type StoredPlan = {
  id: number;
  keyId: number;
  wallet: Address;
  kind: string;
  execution: "router" | "curve" | "batch";
  tokenIn: TokenRef;
  tokenOut: TokenRef;
  amountIn: string;
  amountOutMin: string;
  feeBps: number;
  deadline: number;
  txs: { kind: string; tx: PlanTx }[];
  summary: Record<string, unknown>;
  createdAt: number;
  usedAt: number | null;
};

/** An outcome as the app store keeps it (JSON, atoms as strings). */
export type StoredOutcome = {
  tokenIn: Address;
  amountIn: string | null;
  tokenOut: Address;
  amountOut: string | null;
  feeToken: Address | null;
  feeAmount: string | null;
  eth: string[];
};
const str = (v: bigint | null) => (v === null ? null : v.toString());
export const storedOutcome = (o: RelayedOutcome): StoredOutcome => ({
  tokenIn: o.tokenIn,
  amountIn: str(o.amountIn),
  tokenOut: o.tokenOut,
  amountOut: str(o.amountOut),
  feeToken: o.feeToken,
  feeAmount: str(o.feeAmount),
  eth: o.eth,
});
export const outcomeOf = (v: unknown): StoredOutcome | null =>
  typeof v === "string" ? (JSON.parse(v) as StoredOutcome) : null;
/** How far the relay got with a trade's signed bytes (null: relayed before the bytes were kept). */
export type RelayState = "sending" | "sent" | "lost" | "refused";
export type RelayedTrade = {
  id: number;
  planId: number | null;
  keyId: number | null;
  wallet: Address;
  status: string;
  relay: RelayState | null;
};
export type PendingTrade = {
  wallet: Address;
  keyId: number;
  path: string;
  tokenIn: TokenRef;
  tokenOut: TokenRef;
  amountIn: string;
  amountOutMin: string;
  txHash: Hex;
  feeTxHash?: Hex | null;
  sessionId?: string | null;
  rawTx: Hex;
};

/** A relayed trade the watcher still follows: pending, or an outcome whose block is not final yet. */
export type WatchedTrade = {
  id: number;
  wallet: Address;
  txHash: Hex;
  feeTxHash: Hex | null;
  status: "pending" | "mined" | "reverted";
  blockNumber: number | null;
  blockHash: Hex | null;
  createdAt: number;
  checkedAt: number | null;
  /** The signed bytes (null for trades relayed before they were kept), how far their relay got, when last sent. */
  rawTx: Hex | null;
  relay: RelayState | null;
  sentAt: number | null;
  /** The plan's deadline: past it, sending the bytes again could only revert. */
  deadline: number | null;
  /** What relayedOutcome needs of the stored plan; null for a trade without one. */
  plan: RelayedPlan | null;
};

/** The stored plan as lib/tradeOutcome's input: tokens, the swap's value, the fee as built. */
export function relayedPlanOf(
  wallet: Address,
  execution: string,
  tokenIn: TokenRef,
  tokenOut: TokenRef,
  txs: { kind: string; tx: PlanTx }[],
  summary: Record<string, unknown>,
): RelayedPlan | null {
  const fee = summary.fee as
    | { bps: number; side: "input" | "output"; recipient: Address; token: Address; amount: string | null }
    | undefined;
  const swap = txs.find((t) => t.kind === "swap");
  // A plan whose summary does not say its fee amount is not followed as an outcome (never a watcher that throws).
  if (
    !fee ||
    !swap ||
    !tokenIn.address ||
    !tokenOut.address ||
    typeof fee.amount !== "string" ||
    !/^[0-9]+$/.test(fee.amount)
  )
    return null;
  return {
    wallet,
    execution: execution as RelayedPlan["execution"],
    tokenIn: tokenIn.address,
    tokenOut: tokenOut.address,
    // A session's redeem carries no value: the wallet spends the execution's value through itself.
    txValue: BigInt(typeof summary.execution_value === "string" ? summary.execution_value : swap.tx.value),
    fee: {
      side: fee.side,
      bps: Number(fee.bps),
      token: fee.token ?? zeroAddress,
      recipient: fee.recipient,
      amount: BigInt(fee.amount),
    },
  };
}

/** The columns of a new plan, in app.plans' order (key_id .. summary, created_at): planFrom's inverse. */
export const PLAN_COLUMNS =
  "key_id, wallet, kind, execution, token_in, token_out, amount_in, amount_out_min, fee_bps, deadline, txs, summary, " +
  "created_at";

/** The values of PLAN_COLUMNS for plan `p` written now ($1 .. $13 of a statement that writes one). */
export const planValues = (d: LedgerDeps, p: Omit<StoredPlan, "id" | "createdAt" | "usedAt">): unknown[] => [
  p.keyId,
  p.wallet.toLowerCase(),
  p.kind,
  p.execution,
  JSON.stringify(p.tokenIn),
  JSON.stringify(p.tokenOut),
  p.amountIn,
  p.amountOutMin,
  p.feeBps,
  p.deadline,
  JSON.stringify(p.txs),
  JSON.stringify(p.summary),
  nowS(d),
];

/** A stored plan from its app.plans row. */
export function planFrom(r: Record<string, unknown>): StoredPlan {
  return {
    id: Number(r.id),
    keyId: Number(r.key_id),
    wallet: r.wallet as Address,
    kind: r.kind as string,
    execution: r.execution as StoredPlan["execution"],
    tokenIn: JSON.parse(r.token_in as string),
    tokenOut: JSON.parse(r.token_out as string),
    amountIn: r.amount_in as string,
    amountOutMin: r.amount_out_min as string,
    feeBps: Number(r.fee_bps),
    deadline: Number(r.deadline),
    txs: JSON.parse(r.txs as string),
    summary: JSON.parse(r.summary as string),
    createdAt: Number(r.created_at),
    usedAt: r.used_at === null || r.used_at === undefined ? null : Number(r.used_at),
  };
}
