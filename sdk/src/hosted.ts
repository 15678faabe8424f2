import { getAddress, recoverMessageAddress, type Address, type Hex } from "viem";
import { executorAttestationText } from "../../lib/executorAttestation.js";
import { verificationFailed } from "./errors.js";
import type { Http } from "./http.js";
import type { Pins } from "./pins.js";

export type ExecutorAttestation = {
  executor: string;
  agent_id: string;
  owner: string;
  chain_id: number;
  issued_at: number;
  message: string;
  signature: Hex;
};

/**
 * A live hosted agent's executor, before the owner grants it a session: the attestation must be
 * the text rebuilt locally for this agent, this owner and the pinned chain, signed by the
 * executor's own key (EXECUTOR_ATTESTATION otherwise). Answers the executor's address.
 */
export async function checkExecutorAttestation(
  a: ExecutorAttestation | null | undefined,
  o: { agentId: string; owner: Address; pins: Pins },
): Promise<Address> {
  if (!a || typeof a.message !== "string" || typeof a.executor !== "string")
    throw verificationFailed("EXECUTOR_ATTESTATION", "the agent came without its executor's attestation");
  const mine = executorAttestationText({
    executor: getAddress(a.executor),
    agentId: o.agentId,
    owner: getAddress(o.owner),
    chainId: o.pins.chainId,
    issued: Number(a.issued_at),
  });
  if (a.message !== mine)
    throw verificationFailed(
      "EXECUTOR_ATTESTATION",
      "the executor's attestation is not for this agent, this owner and this chain",
    );
  const signer = await recoverMessageAddress({ message: a.message, signature: a.signature }).catch(() => null);
  if (!signer || signer.toLowerCase() !== a.executor.toLowerCase())
    throw verificationFailed("EXECUTOR_ATTESTATION", "the attestation is not signed by the executor's own key");
  return getAddress(a.executor);
}

/** Creates a live hosted agent and checks its executor's attestation before anything is granted to it. */
export async function createLiveAgent(http: Http, owner: Address, pins: Pins, body: Record<string, unknown>) {
  const agent = await http.post<{
    id: string;
    executor: { executor?: string } | string | null;
    executor_attestation?: ExecutorAttestation;
  }>("/hosted", { ...body, mode: "live" });
  const executor = await checkExecutorAttestation(agent.executor_attestation, { agentId: agent.id, owner, pins });
  return { agent, executor };
}
