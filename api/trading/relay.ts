import { parseTransaction, type Address, type Hex, type PublicClient, type TransactionSerialized } from "viem";
import { keccak256 } from "../../lib/keccak.js";
import { recoverTransactionAddress } from "../../lib/secp.js";
import { z } from "zod";
import { SequencerRefused, type Sequencer } from "../ports/sequencer.js";
import { Refusal } from "../errors/index.js";
import { describeCurveCall, describeRouterCall, type PlanTx } from "./txs.js";
import { fingerprint, type Ledger, type StoredPlan } from "./ledger.js";
import type { KeyRecord } from "../auth/index.js";
import { msSince } from "./timing.js";
import { sameAddress as same } from "../../lib/address.js";
import type { Common } from "../ports/common.js";

export const submitRequest = z
  .object({
    raw_tx: z
      .string()
      .regex(/^0x[0-9a-fA-F]+$/, "must be 0x hex")
      .max(40_000)
      .optional(),
    raw_txs: z
      .array(
        z
          .string()
          .regex(/^0x[0-9a-fA-F]+$/, "must be 0x hex")
          .max(40_000),
      )
      .min(1)
      .max(3)
      .optional(),
    fee_tx_hash: z
      .string()
      .regex(/^0x[0-9a-fA-F]{64}$/, "must be a transaction hash")
      .optional(),
  })
  .strict();
/** live/submit's input as the edge parses it (the hosted tick sends its own `{ raw_tx }`). */
export type SubmitParameters = z.infer<typeof submitRequest>;

type Decoded = { raw: Hex; hash: Hex; from: Address; tx: PlanTx; nonce: number; feeCap: bigint };

/** How long live/submit waits for a two_step fee's receipt before it answers FEE_FIRST (the swap unsent). */
export const FEE_RECEIPT_WAIT_MS = 10_000;
const FEE_RECEIPT_POLL_MS = 50;
export type Diff = { field: string; built: string | null; signed: string | null };

/** Field-by-field differences between a built and a signed transaction, in the words of describeRouterCall. */
export function diffTx(built: PlanTx, signed: PlanTx): Diff[] {
  const diffs: Diff[] = [];
  const cmp = (field: string, a: string | null | undefined, b: string | null | undefined) => {
    if ((a ?? null) !== (b ?? null)) diffs.push({ field, built: a ?? null, signed: b ?? null });
  };
  cmp("to", built.to.toLowerCase(), signed.to.toLowerCase());
  cmp("value", built.value, signed.value);
  cmp("chain_id", String(built.chain_id), String(signed.chain_id));
  if (built.data !== signed.data) {
    const describe = built.data.startsWith("0x3593564c") ? describeRouterCall : describeCurveCall;
    const a = describe(built.data);
    const b = describe(signed.data);
    const before = diffs.length;
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) cmp(k, a[k], b[k]);
    if (diffs.length === before)
      diffs.push({ field: "data", built: `${built.data.slice(0, 18)}…`, signed: `${signed.data.slice(0, 18)}…` });
  }
  return diffs;
}

/** What the relay reads and writes. */
export type RelayDeps = Pick<Common, "config" | "chain" | "clock"> & {
  ledger: Ledger;
  sequencer: Sequencer;
  sessionExecutors?: (wallet: Address) => Promise<Address[]>;
};

const nowS = (d: RelayDeps) => Math.floor(d.clock() / 1000);

/**
 * live/submit: relays only a transaction this service built for this key, signed by the key's
 * wallet, byte for byte on to, data, value and chain id. A plan relays once; the same signed bytes
 * again answer the same hash without a second relay.
 *
 * A two_step curve plan's swap is sent only once its own fee is on chain: mined with status
 * success, from this wallet to the plan's recipient with exactly the plan's value, in a block after
 * the plan was built, and claimed by no other trade (the claim and the pending trade are one store
 * transaction; app.trades' unique fee_tx_hash settles races between instances). With
 * `fee_tx_hash` the fee must already be mined. With `raw_txs [fee, swap]` the relay refuses
 * (FEE_FIRST, nothing sent) unless the transactions are the wallet's next nonces in order and the
 * fee's cap covers the base fee, then sends what comes before the swap and WAITS for the fee's
 * receipt (at most FEE_RECEIPT_WAIT_MS; one block on the sequencer) before it sends the swap: a
 * fee replaced, reverted or stuck never lets its swap through. Past the wait it answers
 * FEE_FIRST with `sent`; once the fee is mined the swap goes alone with `fee_tx_hash`.
 */
export function createRelay(d: RelayDeps) {
  return {
    /** SUBMIT_DISABLED on a server that does not relay (the route's first step: before any field is read). */
    assertRelaying: () => assertRelaying(d),
    /** `as.path`: `hosted` when a hosted agent's tick relays its session trade (me/trades' path). */
    submit: (q: SubmitParameters, key: KeyRecord, as: { path?: "hosted" } = {}) => submit(d, q, key, as),
  };
}

function assertRelaying(d: RelayDeps): void {
  if (!d.config.submitEnabled)
    throw new Refusal(
      "SUBMIT_DISABLED",
      "this server does not relay; send the signed transaction to the chain yourself",
    );
}

async function decode(raw: Hex): Promise<Decoded> {
  let parsed: ReturnType<typeof parseTransaction>;
  let from: Address;
  try {
    parsed = parseTransaction(raw as TransactionSerialized);
    from = await recoverTransactionAddress({ serializedTransaction: raw as TransactionSerialized });
  } catch (err) {
    throw new Refusal(
      "SUBMIT_REJECTED",
      `the relay cannot decode this signed transaction: ${(err as Error).message.split("\n")[0]!.slice(0, 120)}`,
    );
  }
  if (!parsed.to)
    throw new Refusal("NOT_AS_BUILT", "a contract creation was never built by this service", {
      diffs: [{ field: "to", built: null, signed: null }],
    });
  const feeCap = parsed.maxFeePerGas ?? parsed.gasPrice ?? 0n;
  return {
    raw,
    hash: keccak256(raw),
    from,
    tx: {
      to: parsed.to,
      data: parsed.data ?? "0x",
      value: (parsed.value ?? 0n).toString(),
      chain_id: parsed.chainId ?? 0,
    },
    nonce: parsed.nonce ?? 0,
    feeCap,
  };
}

/** A session plan built by the wallet's key or the executor's key, found for either of them. */
async function sessionPlanFor(d: RelayDeps, key: KeyRecord, signed: PlanTx) {
  const m = await d.ledger.sessionPlanByFingerprint(fingerprint(signed));
  return m && (same(key.wallet, m.plan.wallet) || same(key.wallet, String(m.plan.summary.executor))) ? m : null;
}

async function notAsBuilt(d: RelayDeps, key: KeyRecord, signed: PlanTx): Promise<never> {
  const plans = await d.ledger.recentPlans(key.keyId);
  let best: { diffs: Diff[]; plan: StoredPlan } | null = null;
  for (const p of plans) {
    for (const t of p.txs) {
      const diffs = diffTx(t.tx, signed);
      if (!best || diffs.length < best.diffs.length) best = { diffs, plan: p };
    }
  }
  const diffs = best?.diffs ?? [{ field: "plan", built: null, signed: signed.to.toLowerCase() }];
  throw new Refusal(
    "NOT_AS_BUILT",
    best
      ? `the transaction differs from plan ${best.plan.id} built for this key: ${diffs.map((x) => x.field).join(", ")}`
      : "no plan was built for this key",
    { diffs, ...(best ? { plan_id: best.plan.id } : {}) },
  );
}

/** The signed transactions, decoded: each signed by the key's wallet or the executor of one of its sessions. */
async function decodedFor(d: RelayDeps, q: SubmitParameters, key: KeyRecord): Promise<Decoded[]> {
  if ((q.raw_tx === undefined) === (q.raw_txs === undefined))
    throw new Refusal("BAD_REQUEST", "send raw_tx or raw_txs");
  const raws = (q.raw_txs ?? [q.raw_tx!]) as Hex[];
  const txs: Decoded[] = [];
  for (const raw of raws) txs.push(await decode(raw));
  // Signed by the key's wallet, or by the executor of one of its sessions (for that session's plans only, planOf).
  const executors = txs.some((t) => !same(t.from, key.wallet)) ? ((await d.sessionExecutors?.(key.wallet)) ?? []) : [];
  for (const t of txs)
    if (!same(t.from, key.wallet) && !executors.some((x) => same(x, t.from)))
      throw new Refusal(
        "WALLET_MISMATCH",
        `signed by ${t.from}, not by this key's wallet or one of its sessions' executors`,
      );
  return txs;
}

type PlanMatch = NonNullable<Awaited<ReturnType<Ledger["planByFingerprint"]>>>;

/**
 * The one plan the transactions belong to: each one this key's plans hold (or a session plan of
 * this key's wallet or executor), all from the same plan, each signed by whom that plan says.
 */
async function planOf(d: RelayDeps, txs: Decoded[], key: KeyRecord) {
  const matches: PlanMatch[] = [];
  for (const t of txs) {
    const m = (await d.ledger.planByFingerprint(key.keyId, fingerprint(t.tx))) ?? (await sessionPlanFor(d, key, t.tx));
    if (!m) await notAsBuilt(d, key, t.tx);
    matches.push(m!);
  }
  const plan = matches[matches.length - 1]!.plan;
  // A session plan is redeemed by its executor alone; any other plan is signed by its wallet alone.
  const session = plan.kind === "session" ? { executor: String(plan.summary.executor) } : null;
  for (const t of txs) {
    if (session ? !same(t.from, session.executor) : !same(t.from, key.wallet))
      throw new Refusal(
        "WALLET_MISMATCH",
        session
          ? `a session trade is signed by its executor ${session.executor}, not ${t.from}`
          : `signed by ${t.from}, not by this key's wallet`,
      );
  }
  if (matches.some((m) => m.plan.id !== plan.id))
    throw new Refusal("NOT_AS_BUILT", "raw_txs mix transactions of different plans", {
      diffs: [{ field: "plan", built: String(plan.id), signed: matches.map((m) => m.plan.id).join(",") }],
    });
  return { matches, plan, session, swapAt: matches.findIndex((m) => m.kind === "swap") };
}

async function submit(d: RelayDeps, q: SubmitParameters, key: KeyRecord, as: { path?: "hosted" }) {
  assertRelaying(d);
  const t0 = performance.now();
  const txs = await decodedFor(d, q, key);
  const found = await planOf(d, txs, key);
  const { plan, swapAt } = found;
  let feeWaitMs: number | null = null;
  const timings = () => ({ total_ms: msSince(t0), ...(feeWaitMs === null ? {} : { fee_wait_ms: feeWaitMs }) });
  const listed = (hashes: Hex[]) => (q.raw_txs ? { tx_hashes: hashes, fee_first: plan.execution === "curve" } : {});

  if (swapAt < 0) {
    const sent = await sendAll(d, txs, null);
    return { tx_hash: sent.at(-1)!, as_built: true, repeat: false, ...listed(sent), timings: timings() };
  }
  const swap = txs[swapAt]!;
  // The same signed swap again (a retry, or concurrent callers): its hash, no second relay.
  if (await d.ledger.tradeByHash(swap.hash)) {
    // Past its deadline the transaction could only revert: nothing is sent again.
    if (plan.deadline >= nowS(d)) await resendIfLost(d, swap.hash);
    return { tx_hash: swap.hash, as_built: true, repeat: true, timings: timings() };
  }
  if (plan.deadline < nowS(d))
    throw new Refusal("SUBMIT_REJECTED", `plan ${plan.id} passed its deadline; prepare a fresh one`);
  const fee = await feeFirst(d, q, txs, found, key);
  feeWaitMs = fee.waitMs;
  if (!(await claimed(d, txs, found, key, fee, as)))
    return { tx_hash: swap.hash, as_built: true, repeat: true, timings: timings() };
  // A two_step plan sent what came before its swap already (its fee is mined): the swap alone now.
  const sent = fee.twoStep
    ? await sendAll(d, [swap], { at: 0, planId: plan.id }, fee.before)
    : await sendAll(d, txs, { at: swapAt, planId: plan.id });
  return { tx_hash: swap.hash, as_built: true, repeat: false, ...listed(sent), timings: timings() };
}

type Found = Awaited<ReturnType<typeof planOf>>;
type FeePaid = { twoStep: boolean; before: Hex[]; feeTxHash: Hex | null; waitMs: number | null };

/**
 * A curve plan's fee goes first: in raw_txs before its swap (sent, then its receipt awaited), or
 * already mined (fee_tx_hash). What was sent before the swap, and the fee's hash.
 */
async function feeFirst(d: RelayDeps, q: SubmitParameters, txs: Decoded[], f: Found, key: KeyRecord): Promise<FeePaid> {
  const { plan, matches, swapAt } = f;
  const feeIdx = plan.txs.findIndex((x) => x.kind === "fee_transfer");
  const feeAt = matches.findIndex((m) => m.kind === "fee_transfer");
  if (!(plan.execution === "curve" && feeIdx >= 0))
    return { twoStep: false, before: [], feeTxHash: null, waitMs: null };
  const inline = feeAt >= 0 && feeAt < swapAt;
  if (!inline && !q.fee_tx_hash)
    throw new Refusal(
      "FEE_FIRST",
      "this curve trade's fee must go first: send raw_txs [fee_transfer, swap] or fee_tx_hash of the mined fee",
      { sent: [] },
    );
  const feeTxHash = inline ? txs[feeAt]!.hash : (q.fee_tx_hash as Hex);
  if (inline) await assertSendable(d, txs.slice(0, swapAt + 1), feeAt, key.wallet);
  else await assertFeePaid(d, { hash: feeTxHash, plan, feeIdx, key }, [], 0);
  const before = await sendAll(d, txs.slice(0, swapAt), null);
  if (!inline) return { twoStep: true, before, feeTxHash, waitMs: null };
  const t1 = performance.now();
  await assertFeePaid(d, { hash: feeTxHash, plan, feeIdx, key }, before, FEE_RECEIPT_WAIT_MS);
  return { twoStep: true, before, feeTxHash, waitMs: msSince(t1) };
}

/**
 * The pending trade written before it is sent: a lost answer or a crash after this point leaves a
 * pending trade the watcher settles (or sends again), never a relayed transaction we do not know.
 * False when a caller with the same bytes won the race (theirs is the answer).
 */
async function claimed(
  d: RelayDeps,
  txs: Decoded[],
  { plan, session, swapAt }: Found,
  key: KeyRecord,
  fee: FeePaid,
  as: { path?: "hosted" },
): Promise<boolean> {
  const swap = txs[swapAt]!;
  const pending = {
    wallet: session ? plan.wallet : key.wallet,
    keyId: key.keyId,
    path: session ? (as.path ?? "session") : "agent",
    sessionId: session && typeof plan.summary.session_id === "string" ? plan.summary.session_id : null,
    tokenIn: plan.tokenIn,
    tokenOut: plan.tokenOut,
    amountIn: plan.amountIn,
    amountOutMin: plan.amountOutMin,
    txHash: swap.hash,
    feeTxHash: fee.feeTxHash,
    rawTx: swap.raw,
  };
  if (await d.ledger.claimForRelay(plan.id, pending)) return true;
  if (await d.ledger.tradeByHash(swap.hash)) return false;
  if (fee.feeTxHash && (await d.ledger.feeClaimedBy(fee.feeTxHash))?.planId !== plan.id)
    throw new Refusal(
      "FEE_FIRST",
      `fee transaction ${fee.feeTxHash} already paid for another trade; each fee pays for one plan`,
      { sent: fee.before },
    );
  throw new Refusal("NOT_AS_BUILT", `plan ${plan.id} was already relayed with another transaction`, {
    diffs: [{ field: "plan", built: String(plan.id), signed: "already relayed" }],
  });
}

/**
 * raw_txs [..., fee, swap] before anything is sent: each the wallet's next nonce in order (from
 * its pending nonce), and the fee's cap at least the latest base fee, so the swap cannot mine
 * while its fee waits for a nonce that never comes or a base fee it never meets. A fee the
 * chain already holds (a retry) is past these checks: its receipt decides.
 */
async function assertSendable(d: RelayDeps, txs: Decoded[], feeAt: number, wallet: Address) {
  const fee = txs[feeAt]!;
  const [known, next, block] = await Promise.all([
    nodeKnows(d.chain, fee.hash),
    d.chain.getTransactionCount({ address: wallet, blockTag: "pending" }),
    d.chain.getBlock({ blockTag: "latest" }),
  ]);
  if (known) return;
  const off = txs.findIndex((t, i) => t.nonce !== next + i);
  if (off >= 0)
    throw new Refusal(
      "FEE_FIRST",
      `raw_txs must be the wallet's next nonces in order: transaction ${off} is signed at nonce ${txs[off]!.nonce}, ` +
        `the wallet's next is ${next + off}`,
      { sent: [] },
    );
  const base = block.baseFeePerGas ?? 0n;
  if (fee.feeCap < base)
    throw new Refusal(
      "FEE_FIRST",
      `the fee transaction's fee cap ${fee.feeCap} is under the base fee ${base}: it would not be mined`,
      { sent: [] },
    );
}

type FeeOf = { hash: Hex; plan: StoredPlan; feeIdx: number; key: KeyRecord };

/**
 * The plan's fee is final on chain: a successful receipt (waited for up to `waitMs`), from this
 * wallet to the plan's recipient with the plan's value and data, mined after the plan was built.
 * Whether another trade claimed it is the ledger's claim (claimForRelay).
 */
async function assertFeePaid(d: RelayDeps, { hash, plan, feeIdx, key }: FeeOf, sent: Hex[], waitMs: number) {
  const refuse = (why: string) => new Refusal("FEE_FIRST", `${why}; the swap was not sent`, { sent });
  const receipt = await receiptWithin(d, hash, waitMs);
  if (!receipt)
    throw refuse(
      waitMs
        ? `fee transaction ${hash} has no receipt after ${waitMs / 1000} s; ` +
            "once it is mined, send the swap alone with fee_tx_hash"
        : `fee transaction ${hash} is not mined`,
    );
  if (receipt.status !== "success") throw refuse(`fee transaction ${hash} reverted`);
  const tx = await d.chain.getTransaction({ hash });
  const built = plan.txs[feeIdx]!.tx;
  if (
    !same(tx.from, key.wallet) ||
    !same(tx.to ?? "", built.to) ||
    tx.value.toString() !== built.value ||
    tx.input !== built.data
  )
    throw refuse(`fee transaction ${hash} is not this plan's fee transfer from this wallet`);
  // The block the plan was built at (plans stored before it was kept: the block's time against the plan's).
  const builtBlock = plan.summary.built_block;
  const after =
    typeof builtBlock === "number"
      ? receipt.blockNumber > BigInt(builtBlock)
      : (await d.chain.getBlock({ blockNumber: receipt.blockNumber })).timestamp >= BigInt(plan.createdAt);
  if (!after) throw refuse(`fee transaction ${hash} was mined before plan ${plan.id} was built`);
}

/** The receipt, polled for up to `waitMs` (0: read once); null when none came. */
async function receiptWithin(d: RelayDeps, hash: Hex, waitMs: number) {
  const until = performance.now() + waitMs;
  for (;;) {
    const r = await d.chain.getTransactionReceipt({ hash }).catch(() => null);
    if (r || performance.now() >= until) return r;
    await new Promise((ok) => setTimeout(ok, FEE_RECEIPT_POLL_MS));
  }
}

/**
 * Sends in order. With a swap (`trade`): a failure before the swap left, or the sequencer
 * refusing it, forgets the trade and frees its plan; a lost answer for the swap keeps it pending
 * (it may have arrived), marked so that a retry or the watcher sends the same bytes again.
 * `already`: hashes this call sent before (listed first, in the answer and in a refusal's `sent`).
 */
async function sendAll(
  d: RelayDeps,
  txs: Decoded[],
  trade: { at: number; planId: number } | null,
  already: Hex[] = [],
): Promise<Hex[]> {
  const sent: Hex[] = [...already];
  for (const [i, t] of txs.entries()) {
    try {
      sent.push(
        await sendRaw(d.sequencer, t.raw).catch(async (err) => {
          // Refused, but the node holds these bytes (sent before by anyone, even mined): they are out.
          if (err instanceof Refusal && err.code === "SUBMIT_REJECTED" && (await nodeKnows(d.chain, t.hash)))
            return t.hash;
          throw err;
        }),
      );
    } catch (err) {
      if (trade && i <= trade.at) {
        const swapHash = txs[trade.at]!.hash;
        if (i === trade.at && err instanceof Refusal && err.code === "SEQUENCER_UNREACHABLE")
          await d.ledger.markRelay(swapHash, "lost");
        else await d.ledger.forgetRelay(swapHash, trade.planId);
      }
      throw err instanceof Refusal && sent.length ? err.with({ sent }) : err;
    }
    if (trade && i === trade.at) await d.ledger.markRelay(t.hash, "sent");
  }
  return sent;
}

/** A repeat of bytes whose answer was lost, or whose send never finished: send them once more (same hash). */
async function resendIfLost(d: RelayDeps, hash: Hex) {
  const raw = await d.ledger.claimResend(hash, { staleBefore: nowS(d) - STALE_SEND_S });
  if (raw) await resend(d.sequencer, d.ledger, hash, raw);
}

/** Whether the node holds these bytes (pending or mined): a refusal of bytes it holds means they are out. */
export async function nodeKnows(chain: PublicClient, hash: Hex): Promise<boolean> {
  return chain.getTransaction({ hash }).then(
    () => true,
    () => false,
  );
}

/** A send that began this long ago and never recorded an answer is taken as lost (its process died). */
export const STALE_SEND_S = 10;

/** One eth_sendRawTransaction through the sequencer port, in SPEC's refusals. */
export async function sendRaw(sequencer: Sequencer, raw: Hex): Promise<Hex> {
  try {
    return await sequencer.sendRawTransaction(raw);
  } catch (err) {
    if (err instanceof SequencerRefused)
      throw new Refusal("SUBMIT_REJECTED", `the sequencer refused the transaction: ${err.message.slice(0, 200)}`);
    throw new Refusal(
      "SEQUENCER_UNREACHABLE",
      `${(err as Error).message}; it may or may not have arrived: ` +
        "look for the receipt before signing another with the same nonce",
      {},
      { retryAfterS: 2 },
    );
  }
}

/** Sends a pending trade's kept bytes again (claimed by claimResend) and records what the sequencer said. */
export async function resend(
  sequencer: Sequencer,
  ledger: Pick<Ledger, "markRelay">,
  hash: Hex,
  raw: Hex,
): Promise<"sent" | "lost" | "refused"> {
  const state = await sendRaw(sequencer, raw).then(
    () => "sent" as const,
    (err) => (err instanceof Refusal && err.code === "SUBMIT_REJECTED" ? ("refused" as const) : ("lost" as const)),
  );
  await ledger.markRelay(hash, state);
  return state;
}

export type Relay = ReturnType<typeof createRelay>;
