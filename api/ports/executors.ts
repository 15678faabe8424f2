import type { Address, Hex } from "viem";

/** What the signing service attests when it makes an executor: it holds this key, for this agent and owner. */
export type ExecutorAttestation = { executor: Address; agent_id: string; owner: Address; chain_id: number; issued_at: number; message: string; signature: Hex };

/** A plain ETH transfer back to the owner, as the service asks the signer for it. */
export type RefundAsk = { chainId: number; nonce: number; gas: bigint; maxFeePerGas: bigint; maxPriorityFeePerGas: bigint; value: bigint };

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
  /** A session redeem (to the DelegationManager, no value) from an executor still open for trading. */
  signTrade(executor: Address, tx: { to: Address; data: Hex; chainId: number; nonce: number; gas: bigint; maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }): Promise<Hex>;
  /** One plain type-2 transfer of `value` to the recorded owner, no calldata; only from a closed executor. */
  signRefund(executor: Address, ask: RefundAsk): Promise<Hex>;
};
