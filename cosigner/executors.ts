import { getAddress, parseGwei, toFunctionSelector, type Address, type Hex, type PublicClient } from "viem";
import { recoverMessageAddress } from "../lib/secp.js";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { executorAttestationText } from "../lib/executorAttestation.js";
import type { ExecutorAttestation, ExecutorPort, RefundAsk, StockAttestationGrant } from "../api/ports/executors.js";
import { delegationHash, readRedeem } from "../lib/delegation.js";
import { sealer } from "../lib/seal.js";
import { STOCK_ATTESTATION_LIMITS, stockAttestationText } from "../lib/stockAttestation.js";
import type { Db } from "../api/ports/store/db.js";
import { Refusal } from "../api/errors/index.js";
import { launchpadAbi } from "../abis/fixtures.js";
import { curveSaleOf, payoutProblems, type PayoutContext } from "../lib/redeemPayout.js";

/** DelegationManager.redeemDelegations(bytes[],bytes32[],bytes[]): the only call an executor signs. */
const REDEEM_SELECTOR = toFunctionSelector("redeemDelegations(bytes[],bytes32[],bytes[])");
const MAX_REDEEM_GAS = 3_000_000n;
const FEE_FLOOR = parseGwei("10");

/** What the signing service pins to read a redeem's payout itself (lib/redeemPayout.ts). */
export type PayoutPins = Pick<PayoutContext, "router" | "launchpad" | "weth" | "feeRecipient">;

/** What the executor keys are made over: the store, the sealing secret, the chain and its pins. */
export type ExecutorKeysDeps = {
  db: Db;
  secret: string;
  chainId: number;
  clock: () => number;
  delegationManager?: Address;
  stockTokens?: Address[];
  chain?: Pick<PublicClient, "getBlock" | "readContract">;
  payout: PayoutPins | null;
};

/** The deps, the stock tokens' addresses as lowercase hex (no 0x), and the key sealer. */
type Keys = { d: ExecutorKeysDeps; stockHex: string[]; keys: ReturnType<typeof sealer> };

type KeyRow = {
  address: string;
  agent_id: string;
  owner: string;
  sealed: string;
  retired_at: string | null;
  closed_at: string | null;
  created_at: string;
};
type TradeAsk = Parameters<ExecutorPort["signTrade"]>[1];

/**
 * The signing service's executor keys: each generated here, sealed with AES-256-GCM under a key
 * derived from EXECUTOR_KEYS_SECRET (the executor's address as associated data, so a sealed key
 * moved to another row does not open), and opened only to sign. Nothing here returns or logs a
 * key. A closed executor signs only its refund, to the owner recorded at creation.
 */
export function createExecutorKeys(d: ExecutorKeysDeps): ExecutorPort {
  const k: Keys = {
    d,
    stockHex: (d.stockTokens ?? []).map((t) => t.slice(2).toLowerCase()),
    keys: sealer(d.secret, "pit-executor-keys"),
  };
  return {
    holdStockAttestation: (executor, g) => holdStockAttestation(k, executor, g),
    revokeStockAttestation: (executor) => revokeStockAttestation(k, executor),
    create: (agentId, owner) => createKey(k, agentId, owner),
    attestation: (executor) => attest(k, executor),
    close: (executor) => closeKey(k, executor),
    retire: (executor) => retireKey(k, executor),
    state: (executor) => keyState(k, executor),
    signTrade: (executor, tx) => signTrade(k, executor, tx),
    signRefund: (executor, ask) => signRefund(k, executor, ask),
  };
}

const nowS = (k: Keys) => Math.floor(k.d.clock() / 1000);

// The address, agent and owner are bound in: a row whose owner was rewritten (to steer a refund)
// or whose key was copied from another row does not open.
const aad = (address: string, agentId: string, owner: string) =>
  `${address.toLowerCase()}|${agentId}|${owner.toLowerCase()}`;
const seal = (k: Keys, key: Hex, address: Address, agentId: string, owner: Address) =>
  k.keys.seal(Buffer.from(key.slice(2), "hex"), aad(address, agentId, owner));
const open = (k: Keys, r: { sealed: string; address: string; agent_id: string; owner: string }): Hex =>
  `0x${k.keys.open(r.sealed, aad(r.address, r.agent_id, r.owner)).toString("hex")}`;

async function row(k: Keys, executor: Address): Promise<KeyRow | null> {
  return (
    (await k.d.db.query<KeyRow>("SELECT * FROM app.executor_keys WHERE address = $1", [executor.toLowerCase()]))[0] ??
    null
  );
}

async function accountOf(k: Keys, executor: Address) {
  const r = await row(k, executor);
  if (!r) throw new Refusal("SIGNER_REQUIRED", `the signing service holds no executor ${executor}`);
  return { r, account: privateKeyToAccount(open(k, r)) };
}

async function attest(k: Keys, executor: Address): Promise<ExecutorAttestation | null> {
  const r = await row(k, executor);
  if (!r) return null;
  const { account } = await accountOf(k, executor);
  const issued = Number(r.created_at);
  const message = executorAttestationText({
    executor: account.address,
    agentId: r.agent_id,
    owner: getAddress(r.owner),
    chainId: k.d.chainId,
    issued,
  });
  return {
    executor: account.address,
    agent_id: r.agent_id,
    owner: getAddress(r.owner),
    chain_id: k.d.chainId,
    issued_at: issued,
    message,
    signature: await account.signMessage({ message }),
  };
}

/**
 * Fees an executor pays: at most 10 times the chain's base fee (10 gwei when it is lower), the tip
 * within it; a compromised API cannot burn the executor's gas on fees. Unchecked without a chain.
 */
async function assertFees(k: Keys, f: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }) {
  if (!k.d.chain) return;
  let base: bigint;
  try {
    base = (await k.d.chain.getBlock({ blockTag: "latest" })).baseFeePerGas ?? 0n;
  } catch (err) {
    throw new Refusal(
      "CHAIN_UNAVAILABLE",
      "the signing service could not read the chain's base fee; nothing signed",
      {},
      { cause: err, retryAfterS: 2 },
    );
  }
  const cap = base * 10n > FEE_FLOOR ? base * 10n : FEE_FLOOR;
  if (f.maxFeePerGas > cap || f.maxPriorityFeePerGas > f.maxFeePerGas)
    throw new Refusal(
      "TX_REFUSED",
      `fees over the signing service's cap (max fee at most ${cap} wei, the tip within it)`,
    );
}

/**
 * The owner recorded at creation signed exactly this attestation for this agent and executor
 * (checked again at each signing: a row written to the store by hand does not sign).
 */
async function ownerSigned(k: Keys, executor: Address, g: StockAttestationGrant): Promise<boolean> {
  const r = await row(k, executor);
  if (!r) return false;
  const text = stockAttestationText({
    agent: r.agent_id,
    executor: getAddress(r.address),
    session_id: g.session_id,
    root_hash: g.root_hash,
    issued: g.issued,
    expires: g.expires,
  });
  const signer = await recoverMessageAddress({ message: text, signature: g.signature }).catch(() => null);
  return !!signer && signer.toLowerCase() === r.owner.toLowerCase();
}

/**
 * A redeem whose executions name a stock token anywhere in their calldata (an ABI word holds the
 * address verbatim: a false match only refuses more) is signed only under a held, unrevoked,
 * unexpired attestation for the root being redeemed.
 */
async function assertStockAttested(k: Keys, executor: Address, data: Hex) {
  const items = readRedeem(data);
  if (!items || items.length === 0 || items.some((i) => i.chain.length === 0))
    throw new Refusal("TX_REFUSED", "an executor signs only redeems it can read, of at least one delegation chain");
  // Only chains whose leaf is delegated to this executor: its gas pays for its own session's trades.
  if (items.some((i) => i.chain[0]!.delegate.toLowerCase() !== executor.toLowerCase()))
    throw new Refusal("TX_REFUSED", "an executor signs only redeems of leaves delegated to it");
  const stocky = items.filter((i) => k.stockHex.some((t) => i.execution.callData.toLowerCase().includes(t)));
  if (!stocky.length) return;
  const a = await validStockAttestation(k, executor);
  if (!a || stocky.some((i) => delegationHash(i.chain.at(-1)!).toLowerCase() !== a.root_hash.toLowerCase())) {
    throw new Refusal(
      "STOCK_ATTESTATION",
      "the signing service holds no valid owner attestation for this session: it signs no stock-token trade",
    );
  }
}

/** The executor's last held attestation when it is unrevoked, unexpired and the owner's signature; else null. */
async function validStockAttestation(k: Keys, executor: Address) {
  const [a] = await k.d.db.query<{
    session_id: string;
    root_hash: string;
    issued: string;
    expires: string;
    signature: Hex;
    revoked_at: string | null;
  }>("SELECT * FROM app.executor_stock_attestations WHERE executor = $1 ORDER BY id DESC LIMIT 1", [
    executor.toLowerCase(),
  ]);
  const valid =
    a &&
    a.revoked_at === null &&
    Number(a.expires) > nowS(k) &&
    (await ownerSigned(k, executor, {
      session_id: a.session_id,
      root_hash: a.root_hash as Hex,
      issued: Number(a.issued),
      expires: Number(a.expires),
      signature: a.signature,
    }));
  return valid ? a : null;
}

/**
 * The redeem pays only its wallet (the root's delegator) and the plan's fee, read from the
 * executions themselves: a leaf the co-signer's key signed for anything else is not redeemed by
 * this executor. `payout: null` reads nothing: only unit tests of the other rules say so.
 */
async function assertPays(k: Keys, data: Hex, feeBps: number) {
  const { d } = k;
  if (!d.payout) return;
  const items = readRedeem(data) ?? [];
  const wallets = new Set(items.map((i) => i.chain.at(-1)!.delegator.toLowerCase()));
  if (wallets.size !== 1) throw new Refusal("TX_REFUSED", "an executor redeems one wallet's session at a time");
  // A curve trade's execution is the wallet's own batch [fee, curve call]: its calls are what moves value.
  const executions = items.flatMap((i) => i.calls);
  const sale = curveSaleOf(executions, d.payout.launchpad);
  let sellQuote: bigint | null = null;
  if (sale && d.chain)
    sellQuote = (
      await d.chain
        .readContract({
          address: d.payout.launchpad,
          abi: launchpadAbi,
          functionName: "quoteSell",
          args: [sale.token, sale.amount],
        })
        .catch(() => [null] as const)
    )[0];
  const problems = payoutProblems(executions, {
    ...d.payout,
    wallet: getAddress([...wallets][0]!),
    feeBps,
    sellQuote,
  });
  if (problems.length)
    throw new Refusal(
      "TX_REFUSED",
      `the signing service read the redeem itself and will not sign it: ${problems.join("; ")}`,
    );
}

async function holdStockAttestation(k: Keys, executor: Address, g: StockAttestationGrant) {
  await assertAttestable(k, executor, g);
  await k.d.db.tx(async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock(4663004, hashtext($1))", [executor.toLowerCase()]);
    const [last] = await tx.query<{ nb: string | null }>(
      "SELECT greatest(max(issued), max(revoked_at))::text AS nb " +
        "FROM app.executor_stock_attestations WHERE executor = $1",
      [executor.toLowerCase()],
    );
    if (last?.nb && g.issued <= Number(last.nb))
      throw new Refusal("STOCK_ATTESTATION", "the signing service holds a later attestation or revocation");
    await tx.query(
      "INSERT INTO app.executor_stock_attestations (executor, session_id, root_hash, issued, expires, signature) " +
        "VALUES ($1, $2, $3, $4, $5, $6)",
      [executor.toLowerCase(), g.session_id, g.root_hash.toLowerCase(), g.issued, g.expires, g.signature],
    );
  });
}

/** An open executor, an attestation within the time limits, signed by the owner recorded at creation. */
async function assertAttestable(k: Keys, executor: Address, g: StockAttestationGrant) {
  const r = await row(k, executor);
  if (!r) throw new Refusal("SIGNER_REQUIRED", `the signing service holds no executor ${executor}`);
  if (r.closed_at !== null || r.retired_at !== null)
    throw new Refusal(
      "STOCK_ATTESTATION",
      "this executor was retired or closed: the signing service takes no attestation for it",
    );
  const now = nowS(k);
  if (
    g.expires <= now ||
    g.expires > now + STOCK_ATTESTATION_LIMITS.maxAheadS ||
    g.issued < now - STOCK_ATTESTATION_LIMITS.issuedWithinS ||
    g.issued > now + 60
  ) {
    throw new Refusal("STOCK_ATTESTATION", "the signing service refuses an attestation outside its time limits");
  }
  if (!(await ownerSigned(k, executor, g)))
    throw new Refusal(
      "STOCK_ATTESTATION",
      "the signing service finds no owner signature over exactly this agent, executor, session, " +
        "issue time and expiry",
    );
}

async function revokeStockAttestation(k: Keys, executor: Address) {
  // Under the hold's lock; and recorded even when none is live (a row of its own), so an
  // attestation issued before this revoke is never taken afterwards.
  return k.d.db.tx(async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock(4663004, hashtext($1))", [executor.toLowerCase()]);
    const ended = await tx.query(
      "UPDATE app.executor_stock_attestations SET revoked_at = $2 " +
        "WHERE executor = $1 AND revoked_at IS NULL RETURNING id",
      [executor.toLowerCase(), nowS(k)],
    );
    if (!ended.length)
      await tx.query(
        "INSERT INTO app.executor_stock_attestations " +
          "(executor, session_id, root_hash, issued, expires, signature, revoked_at) " +
          "VALUES ($1, '', '', 0, 0, '', $2)",
        [executor.toLowerCase(), nowS(k)],
      );
    return ended.length > 0;
  });
}

async function createKey(k: Keys, agentId: string, owner: Address) {
  const key = generatePrivateKey();
  const executor = privateKeyToAccount(key).address;
  await k.d.db.query(
    "INSERT INTO app.executor_keys (address, agent_id, owner, sealed, created_at) VALUES ($1, $2, $3, $4, $5)",
    [
      executor.toLowerCase(),
      agentId,
      owner.toLowerCase(),
      seal(k, key, executor, agentId, owner),
      Math.floor(k.d.clock() / 1000),
    ],
  );
  return { executor, attestation: (await attest(k, executor))! };
}

async function closeKey(k: Keys, executor: Address) {
  const r = await k.d.db.query(
    "UPDATE app.executor_keys SET closed_at = $2 WHERE address = $1 AND closed_at IS NULL RETURNING address",
    [executor.toLowerCase(), Math.floor(k.d.clock() / 1000)],
  );
  return r.length === 1;
}

async function retireKey(k: Keys, executor: Address) {
  await k.d.db.query("UPDATE app.executor_keys SET retired_at = COALESCE(retired_at, $2) WHERE address = $1", [
    executor.toLowerCase(),
    Math.floor(k.d.clock() / 1000),
  ]);
}

async function keyState(k: Keys, executor: Address) {
  const r = await row(k, executor);
  return r
    ? {
        owner: getAddress(r.owner),
        agentId: r.agent_id,
        retired: r.retired_at !== null,
        closed: r.closed_at !== null,
      }
    : null;
}

async function signTrade(k: Keys, executor: Address, tx: TradeAsk) {
  const { d } = k;
  const { r, account } = await accountOf(k, executor);
  if (r.closed_at !== null || r.retired_at !== null)
    throw new Refusal("EXECUTOR_CLOSED", "this executor was retired or its gas refunded: it signs no trade");
  if (
    !d.delegationManager ||
    tx.to.toLowerCase() !== d.delegationManager.toLowerCase() ||
    tx.chainId !== d.chainId ||
    !tx.data.startsWith(REDEEM_SELECTOR) ||
    tx.gas > MAX_REDEEM_GAS
  ) {
    throw new Refusal(
      "TX_REFUSED",
      "an executor signs only session redeems (redeemDelegations) to the DelegationManager on this chain, " +
        "within the gas cap",
    );
  }
  await assertStockAttested(k, executor, tx.data);
  await assertPays(k, tx.data, tx.feeBps);
  await assertFees(k, tx);
  return account.signTransaction({
    type: "eip1559",
    chainId: tx.chainId,
    to: getAddress(tx.to),
    value: 0n,
    data: tx.data,
    nonce: tx.nonce,
    gas: tx.gas,
    maxFeePerGas: tx.maxFeePerGas,
    maxPriorityFeePerGas: tx.maxPriorityFeePerGas,
  });
}

async function signRefund(k: Keys, executor: Address, ask: RefundAsk) {
  const { r, account } = await accountOf(k, executor);
  if (r.closed_at === null)
    throw new Refusal("REFUND_REFUSED", "the executor is still open for trading: close it first", {
      checks: { closed: false },
    });
  if (ask.chainId !== k.d.chainId)
    throw new Refusal("REFUND_REFUSED", `a refund is signed for chain ${k.d.chainId} only`, {
      checks: { chain: false },
    });
  await assertFees(k, ask);
  return account.signTransaction({
    type: "eip1559",
    chainId: ask.chainId,
    to: getAddress(r.owner),
    value: ask.value,
    data: undefined,
    nonce: ask.nonce,
    gas: ask.gas,
    maxFeePerGas: ask.maxFeePerGas,
    maxPriorityFeePerGas: ask.maxPriorityFeePerGas,
  });
}
