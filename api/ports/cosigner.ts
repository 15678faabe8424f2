import type { Address, Hex } from "viem";
import type { Delegation, Execution } from "../../lib/delegation.js";
import type { SessionBinding } from "../../lib/sessionBinding.js";

/**
 * The co-signer behind a port: the API hands it roots to hold and executions to co-sign; the
 * co-signer re-reads everything itself (root signature, binding, router calldata, fee, its own
 * marks, the wallet's counters) and answers a signed leaf or a refusal. Its key never crosses
 * this port (cosigner/: in process on the devnet, a separate process or KMS in production).
 */
export type CosignerRoot = { sessionId: string; root: Delegation; binding: SessionBinding };

export type CosignRequest = {
  delegationHash: Hex;
  execution: Execution;
  /** What the API built: the co-signer refuses when its own reading differs (FEE_DECLARED). */
  declared: { feeBps: number };
};

export type CosignCheck = { rule: string; ok: boolean; message: string };

export type CosignAnswer = {
  leaf: Delegation;
  leafHash: Hex;
  expires: number;
  checks: CosignCheck[];
  spend: { notional_usd: number; trades_used: number; trades_left: number; last_24h_usd: number; remaining_24h_usd: number };
};

export type CosignerUsage = { trades_used: number; last_24h_usd: number };

export interface CosignerPort {
  readonly address: Address;
  /** Holds a switched-on root: refuses a bad signature, a salt that is not the binding's hash, a root registered before. */
  register(r: CosignerRoot): Promise<void>;
  /** Stops co-signing for this root at once (every instance: the state is in the store). */
  revoke(delegationHash: Hex): Promise<void>;
  cosign(req: CosignRequest): Promise<CosignAnswer>;
  /** Trades co-signed for a root, and the wallet's co-signed USD over 24 h (every session of it). */
  usage(delegationHash: Hex, wallet: Address): Promise<CosignerUsage>;
}
