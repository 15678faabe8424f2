import type { Address, Hex } from "viem";
import { Refusal } from "../errors/index.js";
import { signerCall } from "./signerCall.js";

/** What the signing service attests when it makes an executor: it holds this key, for this agent and owner. */
export type ExecutorAttestation = {
  executor: Address;
  agent_id: string;
  owner: Address;
  chain_id: number;
  issued_at: number;
  message: string;
  signature: Hex;
};

/** A plain ETH transfer back to the owner, as the service asks the signer for it. */
export type RefundAsk = {
  chainId: number;
  nonce: number;
  gas: bigint;
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
  value: bigint;
};

/**
 * Hosted agents' executor keys, held by the signing service (cosigner/executors.ts): generated
 * there, encrypted at rest, never returned or logged. The API asks it to sign; it refuses what an
 * executor in its state may not sign (a retired or closed executor trades no more; a refund goes
 * only to the owner it recorded).
 */
export type ExecutorPort = {
  create(agentId: string, owner: Address): Promise<{ executor: Address; attestation: ExecutorAttestation }>;
  attestation(executor: Address): Promise<ExecutorAttestation | null>;
  /** Ends trading for good (before a refund); answers whether it was open. */
  close(executor: Address): Promise<boolean>;
  /** Ends trading until never (rotate-executor): the executor signs nothing but its refund. */
  retire(executor: Address): Promise<void>;
  state(executor: Address): Promise<{ owner: Address; agentId: string; retired: boolean; closed: boolean } | null>;
  /**
   * A session redeem (to the DelegationManager, no value) from an executor still open for trading;
   * `feeBps` is the plan's fee: the service reads the redeem's calldata itself and signs only one
   * that pays the wallet, and the fee recipient exactly that.
   */
  signTrade(
    executor: Address,
    tx: {
      to: Address;
      data: Hex;
      chainId: number;
      nonce: number;
      gas: bigint;
      maxFeePerGas: bigint;
      maxPriorityFeePerGas: bigint;
      feeBps: number;
    },
  ): Promise<Hex>;
  /** One plain type-2 transfer of `value` to the recorded owner, no calldata; only from a closed executor. */
  signRefund(executor: Address, ask: RefundAsk): Promise<Hex>;
  /**
   * Holds the owner's stock attestation for this executor: the signing service checks the owner's
   * signature itself (over the agent and owner it recorded) and from then signs redeems that touch a
   * stock token only for the attested session root, until expiry or revoke. STOCK_ATTESTATION when
   * it refuses.
   */
  holdStockAttestation(executor: Address, a: StockAttestationGrant): Promise<void>;
  /** Ends the executor's stock attestations at once; answers whether one was held. */
  revokeStockAttestation(executor: Address): Promise<boolean>;
};

/** An owner's stock attestation as the signing service checks it (lib/stockAttestation.ts text). */
export type StockAttestationGrant = {
  session_id: string;
  root_hash: Hex;
  issued: number;
  expires: number;
  signature: Hex;
};

type TradeAsk = Parameters<ExecutorPort["signTrade"]>[1];
const big = (v: bigint) => v.toString();
/** Wire numbers read strictly: anything else is BAD_REQUEST, never a NaN nonce or a thrown BigInt. */
const int = (v: unknown) => {
  if (!Number.isSafeInteger(v) || (v as number) < 0)
    throw new Refusal("BAD_REQUEST", "a non-negative integer was expected");
  return v as number;
};
const atoms = (v: unknown) => {
  if (typeof v !== "string" || !/^\d{1,78}$/.test(v))
    throw new Refusal("BAD_REQUEST", "atoms as a decimal string were expected");
  return BigInt(v);
};
/**
 * The port's calls as JSON (atoms as decimal strings): what the standalone signing service serves at
 * /v1/executors/<name>.
 */
export const executorWire = {
  create: (p: ExecutorPort, b: { agentId: string; owner: Address }) => p.create(b.agentId, b.owner),
  attestation: (p: ExecutorPort, b: { executor: Address }) => p.attestation(b.executor),
  close: (p: ExecutorPort, b: { executor: Address }) => p.close(b.executor),
  retire: (p: ExecutorPort, b: { executor: Address }) => p.retire(b.executor),
  state: (p: ExecutorPort, b: { executor: Address }) => p.state(b.executor),
  "sign-trade": (p: ExecutorPort, b: { executor: Address; tx: Record<keyof TradeAsk, string | number> }) =>
    p.signTrade(b.executor, {
      to: b.tx.to as Address,
      data: b.tx.data as Hex,
      chainId: int(b.tx.chainId),
      nonce: int(b.tx.nonce),
      gas: atoms(b.tx.gas),
      maxFeePerGas: atoms(b.tx.maxFeePerGas),
      maxPriorityFeePerGas: atoms(b.tx.maxPriorityFeePerGas),
      feeBps: int(b.tx.feeBps),
    }),
  "sign-refund": (p: ExecutorPort, b: { executor: Address; ask: Record<keyof RefundAsk, string | number> }) =>
    p.signRefund(b.executor, {
      chainId: int(b.ask.chainId),
      nonce: int(b.ask.nonce),
      gas: atoms(b.ask.gas),
      maxFeePerGas: atoms(b.ask.maxFeePerGas),
      maxPriorityFeePerGas: atoms(b.ask.maxPriorityFeePerGas),
      value: atoms(b.ask.value),
    }),
  "hold-stock-attestation": (p: ExecutorPort, b: { executor: Address; grant: StockAttestationGrant }) =>
    p.holdStockAttestation(b.executor, b.grant),
  "revoke-stock-attestation": (p: ExecutorPort, b: { executor: Address }) => p.revokeStockAttestation(b.executor),
} as const;

/**
 * The executor signing service in its own process (`npm run executors`, never the co-signer's):
 * the API holds no executor key. Its refusals come back with their codes; no answer
 * (or a wrong secret) is 503 SIGNER_REQUIRED and nothing is signed.
 */
export function httpExecutors(url: string, token: string, timeoutMs = 5_000): ExecutorPort {
  const call = <T>(name: keyof typeof executorWire, body: unknown) =>
    signerCall<T>({
      url,
      token,
      path: `executors/${name}`,
      body,
      timeoutMs,
      down: "SIGNER_REQUIRED",
      who: "the executor signing service",
    });
  return {
    create: (agentId, owner) => call("create", { agentId, owner }),
    attestation: (executor) => call("attestation", { executor }),
    close: (executor) => call("close", { executor }),
    retire: async (executor) => void (await call("retire", { executor })),
    state: (executor) => call("state", { executor }),
    signTrade: (executor, tx) =>
      call("sign-trade", {
        executor,
        tx: {
          ...tx,
          gas: big(tx.gas),
          maxFeePerGas: big(tx.maxFeePerGas),
          maxPriorityFeePerGas: big(tx.maxPriorityFeePerGas),
        },
      }),
    signRefund: (executor, ask) =>
      call("sign-refund", {
        executor,
        ask: {
          ...ask,
          gas: big(ask.gas),
          maxFeePerGas: big(ask.maxFeePerGas),
          maxPriorityFeePerGas: big(ask.maxPriorityFeePerGas),
          value: big(ask.value),
        },
      }),
    holdStockAttestation: async (executor, grant) => void (await call("hold-stock-attestation", { executor, grant })),
    revokeStockAttestation: (executor) => call("revoke-stock-attestation", { executor }),
  };
}
