import { formatEther, getAddress, parseTransaction, type Address, type Hex } from "viem";
import { keccak256 } from "../../lib/keccak.js";
import { recoverTransactionAddress } from "../../lib/secp.js";
import { Refusal } from "../errors/index.js";
import type { ExecutorAttestation, ExecutorPort } from "../ports/executors.js";
import type { Sequencer } from "../ports/sequencer.js";
import type { StoredAgent } from "./store.js";
import type { HostedContext } from "./deps.js";

/** A plain transfer's gas. */
const REFUND_GAS = 21_000n;
/** Gas an executor keeps for about twenty session redeems. */
const REDEEMS_FUNDED = 20n;
const REDEEM_GAS = 400_000n;
const RECEIPT_WAIT_MS = 10_000;

export type ExecutorDeps = HostedContext & {
  executors: ExecutorPort | null;
  sequencer: Sequencer;
  /** Sessions the co-signer may still co-sign for this executor. */
  liveSessionsOf: (executor: Address) => Promise<string[]>;
  /**
   * SANCTIONED (or ENGINE_UNAVAILABLE when the list cannot be read) for an address on the sanctions
   * list: auth's check.
   */
  assertNotSanctioned: (address: Address, field: string) => Promise<void>;
};

export const signerRequired = () =>
  new Refusal(
    "SIGNER_REQUIRED",
    "live hosted agents need the executor signing service, which is not configured on this server",
    {},
    { retryAfterS: 60 },
  );

/**
 * The executor a refund-gas call empties: the newest of the agent's executors (retired ones
 * included: rotate-executor leaves their gas behind) that holds more than a transfer's gas, else
 * the current one.
 */
export async function refundableExecutor(
  d: Pick<ExecutorDeps, "store" | "chain">,
  agentId: string,
): Promise<Address | null> {
  const rows = await d.store.db.query<{ executor: string }>(
    "SELECT executor FROM app.hosted_executors WHERE agent_id = $1 ORDER BY created_at DESC, retired_at IS NULL DESC",
    [agentId],
  );
  const gasPrice = await d.chain.getGasPrice().catch(() => 0n);
  for (const r of rows) {
    const balance = await d.chain.getBalance({ address: getAddress(r.executor) }).catch(() => 0n);
    if (balance > REFUND_GAS * gasPrice * 2n) return getAddress(r.executor);
  }
  return rows[0] ? getAddress(rows[0].executor) : null;
}

/** The agent's current executor (the newest not retired), or null. */
export async function executorOf(d: Pick<ExecutorDeps, "store">, agentId: string): Promise<Address | null> {
  const [r] = await d.store.db.query<{ executor: string }>(
    `SELECT executor FROM app.hosted_executors WHERE agent_id = $1 AND retired_at IS NULL
     ORDER BY created_at DESC LIMIT 1`,
    [agentId],
  );
  return r ? getAddress(r.executor) : null;
}

/**
 * Makes the agent's executor at the signing service and records it; SIGNER_REQUIRED when it does not
 * answer, EXECUTOR_ATTESTATION when it cannot attest.
 */
export async function newExecutor(
  d: ExecutorDeps,
  agent: Pick<StoredAgent, "id" | "wallet">,
): Promise<{ executor: Address; attestation: ExecutorAttestation }> {
  if (!d.executors) throw signerRequired();
  let made: { executor: Address; attestation: ExecutorAttestation };
  try {
    made = await d.executors.create(agent.id, agent.wallet);
  } catch (err) {
    // Not there at all (a standalone signing service that does not answer): create's SIGNER_REQUIRED.
    if (err instanceof Refusal && err.code === "SIGNER_REQUIRED") throw err;
    throw new Refusal(
      "EXECUTOR_ATTESTATION",
      "the signing service could not make and attest an executor; try again",
      {},
      { cause: err, retryAfterS: 5 },
    );
  }
  try {
    await d.store.db.query("INSERT INTO app.hosted_executors (agent_id, executor, created_at) VALUES ($1, $2, $3)", [
      agent.id,
      made.executor.toLowerCase(),
      Math.floor(d.clock() / 1000),
    ]);
  } catch (err) {
    // One current executor per agent (a unique index): a concurrent rotate got there first.
    await d.executors.retire(made.executor);
    throw new Refusal(
      "BUSY",
      "another call is changing this agent's executor; try again",
      {},
      { cause: err, retryAfterS: 1 },
    );
  }
  return made;
}

/** Retires the agent's executor here and at the signing service (rotate-executor). */
export async function retireExecutor(d: ExecutorDeps, agentId: string, executor: Address) {
  if (!d.executors) throw signerRequired();
  await d.executors.retire(executor);
  await d.store.db.query(
    "UPDATE app.hosted_executors SET retired_at = $3 WHERE agent_id = $1 AND executor = $2 AND retired_at IS NULL",
    [agentId, executor.toLowerCase(), Math.floor(d.clock() / 1000)],
  );
}

type RefundRow = {
  id: string;
  executor: string;
  owner: string;
  nonce: number;
  value: string;
  balance: string;
  gas: string;
  max_fee_per_gas: string;
  raw: Hex;
  tx_hash: Hex;
  status: string;
  block: string | null;
  relay_error: string | null;
};

const refundAnswer = (agentId: string, r: RefundRow, o: { already: boolean; closed: boolean }) => ({
  id: agentId,
  executor: getAddress(r.executor),
  to: getAddress(r.owner),
  value_wei: r.value,
  balance_wei: r.balance,
  tx_hash: r.tx_hash,
  raw: r.raw,
  nonce: Number(r.nonce),
  gas: Number(r.gas),
  max_fee_per_gas: r.max_fee_per_gas,
  max_cost_wei: (BigInt(r.gas) * BigInt(r.max_fee_per_gas)).toString(),
  status: r.status,
  block: r.block === null ? null : Number(r.block),
  already: o.already,
  relay_error: r.relay_error,
  closed: o.closed,
});

/**
 * The executor's gas as the executor view shows it: its balance against what about twenty redeems
 * cost at the chain's gas price now (`min_balance_wei`), `enough`, and the `top_up` that would
 * make it enough (null when it is). A live tick reads the same before each order (tick.ts). The
 * gas price comes back for the refund's own check. CHAIN_UNAVAILABLE when the chain does not answer.
 */
export async function executorGas(d: Pick<HostedContext, "chain" | "market" | "config">, executor: Address) {
  let balance: bigint;
  let gasPrice: bigint;
  try {
    [balance, gasPrice] = await Promise.all([d.chain.getBalance({ address: executor }), d.chain.getGasPrice()]);
  } catch (err) {
    throw new Refusal("CHAIN_UNAVAILABLE", "the chain did not answer; try again", {}, { cause: err, retryAfterS: 2 });
  }
  const min = REDEEM_GAS * REDEEMS_FUNDED * gasPrice;
  const eth = (await d.market.mark(d.config.tokens.ETH!.address))?.usd ?? null;
  const usd = (wei: bigint) => (eth === null ? null : Math.round(Number(formatEther(wei)) * eth * 100) / 100);
  return {
    gasPrice,
    /** What one redeem costs at today's gas price: a live order holds under it (tick.ts). */
    oneRedeemWei: REDEEM_GAS * gasPrice,
    view: {
      executor,
      balance_wei: balance.toString(),
      balance_usd: usd(balance),
      min_balance_wei: min.toString(),
      min_balance_usd: usd(min),
      enough: balance >= min,
      top_up: balance >= min ? null : { wei: (min - balance).toString(), usd: usd(min - balance), to: executor },
    },
  };
}

/** The executor view: its gas (executorGas), the refund's state, the attestation. */
export async function executorView(d: ExecutorDeps, agent: StoredAgent, executor: Address) {
  const { gasPrice, view } = await executorGas(d, executor);
  const last = await lastRefund(d, executor);
  const whyNot =
    agent.status !== "stopped" && agent.deletedAt === null
      ? "STOP_FIRST"
      : BigInt(view.balance_wei) <= REFUND_GAS * gasPrice * 2n
        ? "REFUND_GAS"
        : null;
  return {
    ...view,
    refund: {
      available: whyNot === null,
      why_not: whyNot,
      route: `POST /api/v1/hosted/${agent.id}/refund-gas`,
      last: last ? refundAnswer(agent.id, last, { already: true, closed: true }) : null,
    },
    executor_attestation: d.executors ? await d.executors.attestation(executor) : null,
  };
}

const lastRefund = async (d: Pick<ExecutorDeps, "store">, executor: Address) =>
  (
    await d.store.db.query<RefundRow>(
      "SELECT * FROM app.executor_refunds WHERE executor = $1 ORDER BY id DESC LIMIT 1",
      [executor.toLowerCase()],
    )
  )[0] ?? null;

/** Reads a stored refund's receipt; a refund still unmined is answered again as it was (`already`). */
async function settle(d: ExecutorDeps, r: RefundRow, waitMs: number): Promise<RefundRow> {
  const receipt = await d.chain
    .waitForTransactionReceipt({ hash: r.tx_hash, timeout: waitMs, pollingInterval: 100 })
    .catch(() => null);
  if (!receipt) return r;
  const status = receipt.status === "success" ? "mined" : "reverted";
  await d.store.db.query("UPDATE app.executor_refunds SET status = $2, block = $3 WHERE id = $1", [
    r.id,
    status,
    Number(receipt.blockNumber),
  ]);
  return { ...r, status, block: String(receipt.blockNumber) };
}

/**
 * refund-gas: one plain type-2 ETH transfer from the executor to the owner the signing service
 * recorded, of the balance less its gas limit times its max fee. The executor is closed for
 * trading first, for good. The signed bytes are decoded before anything is sent: from the
 * executor, to the recorded owner, no calldata, the asked value, nonce and fees, chain 4663
 * (SIGNED_MISMATCH otherwise, nothing relayed). A repeat while the refund is unmined answers the
 * same signed transaction (`already`).
 */
export async function refundGas(d: ExecutorDeps, agent: StoredAgent, executor: Address) {
  const { owner, executors } = await refundOwner(d, agent, executor);
  await executors.close(executor);
  const open = await resentRefund(d, agent, executor);
  if (open) return open;
  const signed = await signedRefund(d, executors, executor, owner);
  return sendRefund(d, agent, executor, owner, signed);
}

/**
 * The checks before an executor's gas is refunded: the signing service is there, the agent is
 * stopped (or deleted), the server relays, no session may still be co-signed for the executor, and
 * the executor's owner on record is this agent's owner and not sanctioned. Answers that owner and
 * the signing service.
 */
async function refundOwner(d: ExecutorDeps, agent: StoredAgent, executor: Address) {
  if (!d.executors) throw signerRequired();
  if (agent.status !== "stopped" && agent.deletedAt === null)
    throw new Refusal("STOP_FIRST", "stop the agent before refunding its executor's gas");
  if (!d.config.submitEnabled) throw new Refusal("SUBMIT_DISABLED", "this server relays nothing");
  if ((await d.liveSessionsOf(executor)).length)
    throw new Refusal("SESSION_ACTIVE", "a session granted to this executor can still be co-signed: revoke it first");
  const state = await d.executors.state(executor);
  if (!state) throw signerRequired();
  const owner = state.owner.toLowerCase();
  if (owner !== agent.wallet.toLowerCase() || owner === executor.toLowerCase())
    throw new Refusal("REFUND_OWNER", "the executor's owner on record is not this agent's owner");
  await d.assertNotSanctioned(state.owner, "owner");
  return { owner: state.owner, executors: d.executors };
}

/**
 * A refund sent before and not mined: the same bytes again (a node that dropped them takes them
 * back; a mined nonce refuses them) and its answer (`already`); null when there is none, or when
 * its nonce went to another transaction (it can never land: it is marked dropped and a new one may
 * be signed).
 */
async function resentRefund(d: ExecutorDeps, agent: StoredAgent, executor: Address) {
  const open = await lastRefund(d, executor);
  if (!open || (open.status !== "sent" && open.status !== "uncertain")) return null;
  await d.sequencer.sendRawTransaction(open.raw).catch(() => undefined);
  const r = await settle(d, open, 2_000);
  if (r.status !== "sent" && r.status !== "uncertain") return null;
  const spent = await d.chain.getTransactionCount({ address: executor, blockTag: "latest" }).catch(() => null);
  if (spent === null || spent <= Number(r.nonce)) return refundAnswer(agent.id, r, { already: true, closed: true });
  await d.store.db.query("UPDATE app.executor_refunds SET status = 'dropped' WHERE id = $1", [r.id]);
  return null;
}

/** The refund signed at the signing service and checked (assertPlainRefund): the balance less the transfer's gas. */
async function signedRefund(d: ExecutorDeps, executors: ExecutorPort, executor: Address, owner: Address) {
  let balance: bigint, nonce: number, pending: number, fees: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint };
  try {
    [balance, nonce, pending, fees] = await Promise.all([
      d.chain.getBalance({ address: executor }),
      d.chain.getTransactionCount({ address: executor, blockTag: "latest" }),
      d.chain.getTransactionCount({ address: executor, blockTag: "pending" }),
      d.chain.estimateFeesPerGas(),
    ]);
  } catch (err) {
    throw new Refusal(
      "CHAIN_UNAVAILABLE",
      "the chain did not answer; nothing was signed",
      {},
      { cause: err, retryAfterS: 2 },
    );
  }
  if (pending !== nonce)
    throw new Refusal(
      "REFUND_IN_FLIGHT",
      `the executor has ${pending - nonce} transaction(s) the chain has not mined yet`,
    );
  const maxFeePerGas = fees.maxFeePerGas;
  const cost = REFUND_GAS * maxFeePerGas;
  if (balance <= cost)
    throw new Refusal(
      "REFUND_GAS",
      `the executor holds ${balance} wei, not more than the transfer's ${cost} wei of gas`,
    );
  const ask = {
    chainId: d.config.chainId,
    nonce,
    gas: REFUND_GAS,
    maxFeePerGas,
    maxPriorityFeePerGas: fees.maxPriorityFeePerGas < maxFeePerGas ? fees.maxPriorityFeePerGas : maxFeePerGas,
    value: balance - cost,
  };
  const raw = await executors.signRefund(executor, ask);
  await assertPlainRefund(raw, executor, owner, ask);
  return { raw, ask, balance };
}

/** The signed refund recorded (once per executor and nonce), relayed, and its receipt awaited a while. */
async function sendRefund(
  d: ExecutorDeps,
  agent: StoredAgent,
  executor: Address,
  owner: Address,
  { raw, ask, balance }: Awaited<ReturnType<typeof signedRefund>>,
) {
  const [row] = await d.store.db.query<RefundRow>(
    `INSERT INTO app.executor_refunds (agent_id, executor, owner, nonce, value, balance, gas, max_fee_per_gas, raw,
       tx_hash, status, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'sent', $11)
     ON CONFLICT (executor, nonce) DO NOTHING RETURNING *`,
    [
      agent.id,
      executor.toLowerCase(),
      owner.toLowerCase(),
      ask.nonce,
      ask.value.toString(),
      balance.toString(),
      REFUND_GAS.toString(),
      ask.maxFeePerGas.toString(),
      raw,
      keccak256(raw),
      Math.floor(d.clock() / 1000),
    ],
  );
  // Another call signed this nonce first: its transaction is the refund.
  if (!row) return refundAnswer(agent.id, (await lastRefund(d, executor))!, { already: true, closed: true });
  let relayError: string | null = null;
  try {
    await d.sequencer.sendRawTransaction(raw);
  } catch (err) {
    relayError = (err as Error).message.slice(0, 200);
    await d.store.db.query("UPDATE app.executor_refunds SET status = 'uncertain', relay_error = $2 WHERE id = $1", [
      row.id,
      relayError,
    ]);
  }
  const status = relayError ? "uncertain" : "sent";
  const settled = await settle(d, { ...row, status, relay_error: relayError }, RECEIPT_WAIT_MS);
  return refundAnswer(agent.id, settled, { already: false, closed: true });
}

/** SIGNED_MISMATCH unless the bytes are exactly the asked plain transfer from the executor to the owner. */
async function assertPlainRefund(
  raw: Hex,
  executor: Address,
  owner: Address,
  ask: { chainId: number; nonce: number; gas: bigint; maxFeePerGas: bigint; value: bigint },
) {
  let ok = false;
  try {
    const tx = parseTransaction(raw);
    const from = await recoverTransactionAddress({ serializedTransaction: raw as never });
    ok =
      tx.type === "eip1559" &&
      tx.chainId === ask.chainId &&
      from.toLowerCase() === executor.toLowerCase() &&
      tx.to?.toLowerCase() === owner.toLowerCase() &&
      (tx.data === undefined || tx.data === "0x") &&
      tx.value === ask.value &&
      tx.nonce === ask.nonce &&
      tx.gas === ask.gas &&
      tx.maxFeePerGas === ask.maxFeePerGas &&
      (tx.accessList ?? []).length === 0;
  } catch {
    ok = false;
  }
  if (!ok)
    throw new Refusal(
      "SIGNED_MISMATCH",
      "the signing service answered something other than the plain refund asked for; nothing was relayed",
    );
}
