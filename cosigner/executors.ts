import {
  getAddress,
  parseGwei,
  recoverMessageAddress,
  toFunctionSelector,
  type Address,
  type Hex,
  type PublicClient,
} from "viem";
import { executorAttestationText } from "../lib/executorAttestation.js";

/** DelegationManager.redeemDelegations(bytes[],bytes32[],bytes[]): the only call an executor signs. */
const REDEEM_SELECTOR = toFunctionSelector("redeemDelegations(bytes[],bytes32[],bytes[])");
const MAX_REDEEM_GAS = 3_000_000n;
const FEE_FLOOR = parseGwei("10");
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { ExecutorAttestation, ExecutorPort, RefundAsk, StockAttestationGrant } from "../api/ports/executors.js";
import { delegationHash, readRedeem } from "../lib/delegation.js";
import { sealer } from "../lib/seal.js";
import { STOCK_ATTESTATION_LIMITS, stockAttestationText } from "../lib/stockAttestation.js";
import type { Db } from "../api/ports/store/db.js";
import { Refusal } from "../api/errors/index.js";
import { launchpadAbi } from "../abis/fixtures.js";
import { curveSaleOf, payoutProblems, type PayoutContext } from "../lib/redeemPayout.js";

/** What the signing service pins to read a redeem's payout itself (lib/redeemPayout.ts). */
export type PayoutPins = Pick<PayoutContext, "router" | "launchpad" | "weth" | "feeRecipient">;

/**
 * The signing service's executor keys: each generated here, sealed with AES-256-GCM under a key
 * derived from EXECUTOR_KEYS_SECRET (the executor's address as associated data, so a sealed key
 * moved to another row does not open), and opened only to sign. Nothing here returns or logs a
 * key. A closed executor signs only its refund, to the owner recorded at creation.
 */
export function createExecutorKeys(d: {
  db: Db;
  secret: string;
  chainId: number;
  clock: () => number;
  delegationManager?: Address;
  stockTokens?: Address[];
  chain?: Pick<PublicClient, "getBlock" | "readContract">;
  payout: PayoutPins | null;
}): ExecutorPort {
  const stockHex = (d.stockTokens ?? []).map((t) => t.slice(2).toLowerCase());
  const nowS = () => Math.floor(d.clock() / 1000);
  const keys = sealer(d.secret, "pit-executor-keys");
  // The address, agent and owner are bound in: a row whose owner was rewritten (to steer a refund)
  // or whose key was copied from another row does not open.
  const aad = (address: string, agentId: string, owner: string) =>
    `${address.toLowerCase()}|${agentId}|${owner.toLowerCase()}`;
  const seal = (key: Hex, address: Address, agentId: string, owner: Address) =>
    keys.seal(Buffer.from(key.slice(2), "hex"), aad(address, agentId, owner));
  const open = (r: { sealed: string; address: string; agent_id: string; owner: string }): Hex =>
    `0x${keys.open(r.sealed, aad(r.address, r.agent_id, r.owner)).toString("hex")}`;
  const row = async (executor: Address) =>
    (
      await d.db.query<{
        address: string;
        agent_id: string;
        owner: string;
        sealed: string;
        retired_at: string | null;
        closed_at: string | null;
        created_at: string;
      }>("SELECT * FROM app.executor_keys WHERE address = $1", [executor.toLowerCase()])
    )[0] ?? null;
  const accountOf = async (executor: Address) => {
    const r = await row(executor);
    if (!r) throw new Refusal("SIGNER_REQUIRED", `the signing service holds no executor ${executor}`);
    return { r, account: privateKeyToAccount(open(r)) };
  };
  const attest = async (executor: Address): Promise<ExecutorAttestation | null> => {
    const r = await row(executor);
    if (!r) return null;
    const { account } = await accountOf(executor);
    const issued = Number(r.created_at);
    const message = executorAttestationText({
      executor: account.address,
      agentId: r.agent_id,
      owner: getAddress(r.owner),
      chainId: d.chainId,
      issued,
    });
    return {
      executor: account.address,
      agent_id: r.agent_id,
      owner: getAddress(r.owner),
      chain_id: d.chainId,
      issued_at: issued,
      message,
      signature: await account.signMessage({ message }),
    };
  };
  /**
   * Fees an executor pays: at most 10 times the chain's base fee (10 gwei when it is lower), the tip
   * within it; a compromised API cannot burn the executor's gas on fees. Unchecked without a chain.
   */
  const assertFees = async (f: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }) => {
    if (!d.chain) return;
    let base: bigint;
    try {
      base = (await d.chain.getBlock({ blockTag: "latest" })).baseFeePerGas ?? 0n;
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
  };
  /** The owner recorded at creation signed exactly this attestation for this agent and executor (checked again at each signing: a row written to the store by hand does not sign). */
  const ownerSigned = async (executor: Address, g: StockAttestationGrant): Promise<boolean> => {
    const r = await row(executor);
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
  };
  /**
   * A redeem whose executions name a stock token anywhere in their calldata (an ABI word holds the
   * address verbatim: a false match only refuses more) is signed only under a held, unrevoked,
   * unexpired attestation for the root being redeemed.
   */
  const assertStockAttested = async (executor: Address, data: Hex) => {
    const items = readRedeem(data);
    if (!items || items.length === 0 || items.some((i) => i.chain.length === 0))
      throw new Refusal("TX_REFUSED", "an executor signs only redeems it can read, of at least one delegation chain");
    // Only chains whose leaf is delegated to this executor: its gas pays for its own session's trades.
    if (items.some((i) => i.chain[0]!.delegate.toLowerCase() !== executor.toLowerCase()))
      throw new Refusal("TX_REFUSED", "an executor signs only redeems of leaves delegated to it");
    const stocky = items.filter((i) => stockHex.some((t) => i.execution.callData.toLowerCase().includes(t)));
    if (!stocky.length) return;
    const [a] = await d.db.query<{
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
      Number(a.expires) > nowS() &&
      (await ownerSigned(executor, {
        session_id: a.session_id,
        root_hash: a.root_hash as Hex,
        issued: Number(a.issued),
        expires: Number(a.expires),
        signature: a.signature,
      }));
    if (!valid || stocky.some((i) => delegationHash(i.chain.at(-1)!).toLowerCase() !== a.root_hash.toLowerCase())) {
      throw new Refusal(
        "STOCK_ATTESTATION",
        "the signing service holds no valid owner attestation for this session: it signs no stock-token trade",
      );
    }
  };
  /**
   * The redeem pays only its wallet (the root's delegator) and the plan's fee, read from the
   * executions themselves: a leaf the co-signer's key signed for anything else is not redeemed by
   * this executor. `payout: null` reads nothing: only unit tests of the other rules say so.
   */
  const assertPays = async (data: Hex, feeBps: number) => {
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
  };
  return {
    async holdStockAttestation(executor, g: StockAttestationGrant) {
      const r = await row(executor);
      if (!r) throw new Refusal("SIGNER_REQUIRED", `the signing service holds no executor ${executor}`);
      if (r.closed_at !== null || r.retired_at !== null)
        throw new Refusal(
          "STOCK_ATTESTATION",
          "this executor was retired or closed: the signing service takes no attestation for it",
        );
      const now = nowS();
      if (
        g.expires <= now ||
        g.expires > now + STOCK_ATTESTATION_LIMITS.maxAheadS ||
        g.issued < now - STOCK_ATTESTATION_LIMITS.issuedWithinS ||
        g.issued > now + 60
      ) {
        throw new Refusal("STOCK_ATTESTATION", "the signing service refuses an attestation outside its time limits");
      }
      if (!(await ownerSigned(executor, g)))
        throw new Refusal(
          "STOCK_ATTESTATION",
          "the signing service finds no owner signature over exactly this agent, executor, session, issue time and expiry",
        );
      await d.db.tx(async (tx) => {
        await tx.query("SELECT pg_advisory_xact_lock(4663004, hashtext($1))", [executor.toLowerCase()]);
        const [last] = await tx.query<{ nb: string | null }>(
          "SELECT greatest(max(issued), max(revoked_at))::text AS nb FROM app.executor_stock_attestations WHERE executor = $1",
          [executor.toLowerCase()],
        );
        if (last?.nb && g.issued <= Number(last.nb))
          throw new Refusal("STOCK_ATTESTATION", "the signing service holds a later attestation or revocation");
        await tx.query(
          "INSERT INTO app.executor_stock_attestations (executor, session_id, root_hash, issued, expires, signature) VALUES ($1, $2, $3, $4, $5, $6)",
          [executor.toLowerCase(), g.session_id, g.root_hash.toLowerCase(), g.issued, g.expires, g.signature],
        );
      });
    },
    async revokeStockAttestation(executor) {
      // Under the hold's lock; and recorded even when none is live (a row of its own), so an
      // attestation issued before this revoke is never taken afterwards.
      return d.db.tx(async (tx) => {
        await tx.query("SELECT pg_advisory_xact_lock(4663004, hashtext($1))", [executor.toLowerCase()]);
        const ended = await tx.query(
          "UPDATE app.executor_stock_attestations SET revoked_at = $2 WHERE executor = $1 AND revoked_at IS NULL RETURNING id",
          [executor.toLowerCase(), nowS()],
        );
        if (!ended.length)
          await tx.query(
            "INSERT INTO app.executor_stock_attestations (executor, session_id, root_hash, issued, expires, signature, revoked_at) VALUES ($1, '', '', 0, 0, '', $2)",
            [executor.toLowerCase(), nowS()],
          );
        return ended.length > 0;
      });
    },
    async create(agentId, owner) {
      const key = generatePrivateKey();
      const executor = privateKeyToAccount(key).address;
      await d.db.query(
        "INSERT INTO app.executor_keys (address, agent_id, owner, sealed, created_at) VALUES ($1, $2, $3, $4, $5)",
        [
          executor.toLowerCase(),
          agentId,
          owner.toLowerCase(),
          seal(key, executor, agentId, owner),
          Math.floor(d.clock() / 1000),
        ],
      );
      return { executor, attestation: (await attest(executor))! };
    },
    attestation: attest,
    async close(executor) {
      const r = await d.db.query(
        "UPDATE app.executor_keys SET closed_at = $2 WHERE address = $1 AND closed_at IS NULL RETURNING address",
        [executor.toLowerCase(), Math.floor(d.clock() / 1000)],
      );
      return r.length === 1;
    },
    async retire(executor) {
      await d.db.query("UPDATE app.executor_keys SET retired_at = COALESCE(retired_at, $2) WHERE address = $1", [
        executor.toLowerCase(),
        Math.floor(d.clock() / 1000),
      ]);
    },
    async state(executor) {
      const r = await row(executor);
      return r
        ? {
            owner: getAddress(r.owner),
            agentId: r.agent_id,
            retired: r.retired_at !== null,
            closed: r.closed_at !== null,
          }
        : null;
    },
    async signTrade(executor, tx) {
      const { r, account } = await accountOf(executor);
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
          "an executor signs only session redeems (redeemDelegations) to the DelegationManager on this chain, within the gas cap",
        );
      }
      await assertStockAttested(executor, tx.data);
      await assertPays(tx.data, tx.feeBps);
      await assertFees(tx);
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
    },
    async signRefund(executor, ask: RefundAsk) {
      const { r, account } = await accountOf(executor);
      if (r.closed_at === null)
        throw new Refusal("REFUND_REFUSED", "the executor is still open for trading: close it first", {
          checks: { closed: false },
        });
      if (ask.chainId !== d.chainId)
        throw new Refusal("REFUND_REFUSED", `a refund is signed for chain ${d.chainId} only`, {
          checks: { chain: false },
        });
      await assertFees(ask);
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
    },
  };
}
