/**
 * The text a hosted agent's executor key signs about itself (EIP-191): which agent and owner it
 * serves on which chain. The signing service writes it; the SDK rebuilds it before granting the
 * executor a session (EXECUTOR_ATTESTATION), so both sides build the same bytes.
 */
export function executorAttestationText(a: {
  executor: string;
  agentId: string;
  owner: string;
  chainId: number;
  issued: number;
}): string {
  return (
    `pit hosted executor\nexecutor: ${a.executor}\nagent: ${a.agentId}\nowner: ${a.owner}\nchain: ` +
    `${a.chainId}\nissued: ${a.issued}\nThis key is held by the service's signing service for this agent only.`
  );
}
