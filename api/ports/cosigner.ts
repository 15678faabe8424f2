import type { Address, Hex } from "viem";
import {
  delegationFromJson,
  delegationToJson,
  type Delegation,
  type DelegationJson,
  type Execution,
} from "../../lib/delegation.js";
import { signerCall } from "./signerCall.js";
import type { SessionBinding } from "../../lib/sessionBinding.js";

/**
 * The co-signer behind a port: the API hands it roots to hold and executions to co-sign; the
 * co-signer re-reads everything itself (root signature, binding, router calldata, fee, its own
 * marks, the wallet's counters) and answers a signed leaf or a refusal. Its key never crosses
 * this port (cosigner/: its own process, `npm run cosigner`; a child of `npm start` on the devnet).
 */
export type CosignerRoot = { sessionId: string; root: Delegation; binding: SessionBinding; curveRoots?: Delegation[] };

export type CosignRequest = {
  delegationHash: Hex;
  /** The router call, or for a launchpad curve trade the curve call (redeemed under the session's curve root). */
  execution: Execution;
  /**
   * A curve trade's fee: plain ETH to the fee recipient, the first call of the wallet's batch the leaf allows
   * (walletBatch).
   */
  fee?: Execution;
  /**
   * What the API built: the co-signer refuses when its own reading differs (FEE_DECLARED) or the minimum sits too far
   * under the quote (SLIPPAGE).
   */
  declared: { feeBps: number; expectedOut?: bigint };
};

export type CosignCheck = { rule: string; ok: boolean; message: string };

export type CosignAnswer = {
  /** Allows exactly the execution, or for a curve trade exactly walletBatch(wallet, [fee, execution]). */
  leaf: Delegation;
  leafHash: Hex;
  expires: number;
  checks: CosignCheck[];
  spend: {
    notional_usd: number;
    trades_used: number;
    trades_left: number;
    last_24h_usd: number;
    remaining_24h_usd: number;
  };
};

export type CosignerUsage = { trades_used: number; last_24h_usd: number };

export interface CosignerPort {
  readonly address: Address;
  /**
   * Holds a switched-on root: refuses a bad signature, a salt that is not the binding's hash, a root registered before.
   */
  register(r: CosignerRoot): Promise<void>;
  /** Stops co-signing for this root at once (every instance: the state is in the store). */
  revoke(delegationHash: Hex): Promise<void>;
  cosign(req: CosignRequest): Promise<CosignAnswer>;
  /** Trades co-signed for a root, and the wallet's co-signed USD over 24 h (every session of it). */
  usage(delegationHash: Hex, wallet: Address): Promise<CosignerUsage>;
}

/** The port over HTTP (a standalone `npm run cosigner`): its types with atoms as decimal strings. */
export type RootWire = {
  sessionId: string;
  root: DelegationJson;
  binding: SessionBinding;
  curveRoots?: DelegationJson[];
};
type ExecutionWire = { target: Address; value: string; callData: Hex };
export type RequestWire = {
  delegationHash: Hex;
  execution: ExecutionWire;
  fee?: ExecutionWire;
  declared: { feeBps: number; expectedOut?: string };
};
export type AnswerWire = Omit<CosignAnswer, "leaf"> & { leaf: DelegationJson };

const executionOut = (e: Execution): ExecutionWire => ({ ...e, value: e.value.toString() });
const executionIn = (e: ExecutionWire): Execution => ({ ...e, value: BigInt(e.value) });

export const wire = {
  rootOut: (r: CosignerRoot): RootWire => ({
    ...r,
    root: delegationToJson(r.root),
    curveRoots: r.curveRoots?.map(delegationToJson),
  }),
  rootIn: (r: RootWire): CosignerRoot => ({
    ...r,
    root: delegationFromJson(r.root),
    curveRoots: r.curveRoots?.map(delegationFromJson),
  }),
  requestOut: (r: CosignRequest): RequestWire => ({
    ...r,
    execution: executionOut(r.execution),
    fee: r.fee && executionOut(r.fee),
    declared: { feeBps: r.declared.feeBps, expectedOut: r.declared.expectedOut?.toString() },
  }),
  requestIn: (r: RequestWire): CosignRequest => ({
    ...r,
    execution: executionIn(r.execution),
    fee: r.fee && executionIn(r.fee),
    declared: {
      feeBps: r.declared.feeBps,
      expectedOut: r.declared.expectedOut === undefined ? undefined : BigInt(r.declared.expectedOut),
    },
  }),
  answerOut: (a: CosignAnswer): AnswerWire => ({ ...a, leaf: delegationToJson(a.leaf) }),
  answerIn: (a: AnswerWire): CosignAnswer => ({ ...a, leaf: delegationFromJson(a.leaf) }),
};

/**
 * The co-signer in another process: POST /v1/{register,revoke,cosign,usage} with the bearer secret.
 * Its address is the one the service publishes (COSIGNER_ADDRESS): the co-signer itself refuses
 * any root not delegated to its own key. Its refusals come back as the same codes; no answer (or a wrong secret) is 503
 * SIGNER_UNAVAILABLE, and nothing is co-signed.
 */
export function httpCosigner(url: string, token: string, address: Address, timeoutMs = 3_000): CosignerPort {
  const call = <T>(path: string, body: unknown) =>
    signerCall<T>({ url, token, path, body, timeoutMs, down: "SIGNER_UNAVAILABLE", who: "the co-signer" });
  return {
    address,
    register: (r) => call("register", wire.rootOut(r)),
    revoke: (h) => call("revoke", { delegationHash: h }),
    cosign: async (req) => wire.answerIn(await call<AnswerWire>("cosign", wire.requestOut(req))),
    usage: (h, w) => call("usage", { delegationHash: h, wallet: w }),
  };
}
