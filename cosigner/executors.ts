import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import { getAddress, toFunctionSelector, type Address, type Hex } from "viem";

/** DelegationManager.redeemDelegations(bytes[],bytes32[],bytes[]): the only call an executor signs. */
const REDEEM_SELECTOR = toFunctionSelector("redeemDelegations(bytes[],bytes32[],bytes[])");
const MAX_REDEEM_GAS = 3_000_000n;
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { ExecutorAttestation, ExecutorPort, RefundAsk } from "../api/ports/executors.js";
import type { Db } from "../api/ports/store/db.js";
import { Refusal } from "../api/errors/index.js";

/**
 * The signing service's executor keys: each generated here, sealed with AES-256-GCM under a key
 * derived from EXECUTOR_KEYS_SECRET (the executor's address as associated data, so a sealed key
 * moved to another row does not open), and opened only to sign. Nothing here returns or logs a
 * key. A closed executor signs only its refund, to the owner recorded at creation.
 */
export function createExecutorKeys(d: { db: Db; secret: string; chainId: number; clock: () => number; delegationManager?: Address }): ExecutorPort {
  const master = createHash("sha256").update(`pit-executor-keys:${d.secret}`).digest();
  const seal = (key: Hex, address: Address) => {
    const iv = randomBytes(12);
    const c = createCipheriv("aes-256-gcm", master, iv).setAAD(Buffer.from(address.toLowerCase()));
    const body = Buffer.concat([c.update(Buffer.from(key.slice(2), "hex")), c.final()]);
    return Buffer.concat([iv, c.getAuthTag(), body]).toString("base64");
  };
  const open = (sealed: string, address: Address): Hex => {
    const raw = Buffer.from(sealed, "base64");
    const c = createDecipheriv("aes-256-gcm", master, raw.subarray(0, 12)).setAAD(Buffer.from(address.toLowerCase()));
    c.setAuthTag(raw.subarray(12, 28));
    return `0x${Buffer.concat([c.update(raw.subarray(28)), c.final()]).toString("hex")}`;
  };
  const row = async (executor: Address) => (await d.db.query<{ address: string; agent_id: string; owner: string; sealed: string; retired_at: string | null; closed_at: string | null; created_at: string }>("SELECT * FROM app.executor_keys WHERE address = $1", [executor.toLowerCase()]))[0] ?? null;
  const accountOf = async (executor: Address) => {
    const r = await row(executor);
    if (!r) throw new Refusal("SIGNER_REQUIRED", `the signing service holds no executor ${executor}`);
    return { r, account: privateKeyToAccount(open(r.sealed, getAddress(r.address))) };
  };
  const attest = async (executor: Address): Promise<ExecutorAttestation | null> => {
    const r = await row(executor);
    if (!r) return null;
    const { account } = await accountOf(executor);
    const issued = Number(r.created_at);
    const message = `pit hosted executor\nexecutor: ${account.address}\nagent: ${r.agent_id}\nowner: ${getAddress(r.owner)}\nchain: ${d.chainId}\nissued: ${issued}\nThis key is held by the service's signing service for this agent only.`;
    return { executor: account.address, agent_id: r.agent_id, owner: getAddress(r.owner), chain_id: d.chainId, issued_at: issued, message, signature: await account.signMessage({ message }) };
  };
  return {
    async create(agentId, owner) {
      const key = generatePrivateKey();
      const executor = privateKeyToAccount(key).address;
      await d.db.query("INSERT INTO app.executor_keys (address, agent_id, owner, sealed, created_at) VALUES ($1, $2, $3, $4, $5)", [executor.toLowerCase(), agentId, owner.toLowerCase(), seal(key, executor), Math.floor(d.clock() / 1000)]);
      return { executor, attestation: (await attest(executor))! };
    },
    attestation: attest,
    async close(executor) {
      const r = await d.db.query("UPDATE app.executor_keys SET closed_at = $2 WHERE address = $1 AND closed_at IS NULL RETURNING address", [executor.toLowerCase(), Math.floor(d.clock() / 1000)]);
      return r.length === 1;
    },
    async retire(executor) {
      await d.db.query("UPDATE app.executor_keys SET retired_at = COALESCE(retired_at, $2) WHERE address = $1", [executor.toLowerCase(), Math.floor(d.clock() / 1000)]);
    },
    async state(executor) {
      const r = await row(executor);
      return r ? { owner: getAddress(r.owner), agentId: r.agent_id, retired: r.retired_at !== null, closed: r.closed_at !== null } : null;
    },
    async signTrade(executor, tx) {
      const { r, account } = await accountOf(executor);
      if (r.closed_at !== null || r.retired_at !== null) throw new Refusal("EXECUTOR_CLOSED", "this executor was retired or its gas refunded: it signs no trade");
      if (!d.delegationManager || tx.to.toLowerCase() !== d.delegationManager.toLowerCase() || tx.chainId !== d.chainId || !tx.data.startsWith(REDEEM_SELECTOR) || tx.gas > MAX_REDEEM_GAS) {
        throw new Refusal("TX_REFUSED", "an executor signs only session redeems (redeemDelegations) to the DelegationManager on this chain, within the gas cap");
      }
      return account.signTransaction({ type: "eip1559", chainId: tx.chainId, to: getAddress(tx.to), value: 0n, data: tx.data, nonce: tx.nonce, gas: tx.gas, maxFeePerGas: tx.maxFeePerGas, maxPriorityFeePerGas: tx.maxPriorityFeePerGas });
    },
    async signRefund(executor, ask: RefundAsk) {
      const { r, account } = await accountOf(executor);
      if (r.closed_at === null) throw new Refusal("REFUND_REFUSED", "the executor is still open for trading: close it first", { checks: { closed: false } });
      if (ask.chainId !== d.chainId) throw new Refusal("REFUND_REFUSED", `a refund is signed for chain ${d.chainId} only`, { checks: { chain: false } });
      return account.signTransaction({ type: "eip1559", chainId: ask.chainId, to: getAddress(r.owner), value: ask.value, data: undefined, nonce: ask.nonce, gas: ask.gas, maxFeePerGas: ask.maxFeePerGas, maxPriorityFeePerGas: ask.maxPriorityFeePerGas });
    },
  };
}
