import { keccak256, parseTransaction, recoverTransactionAddress, type Address, type Hex, type PublicClient, type TransactionSerialized } from "viem";
import { z } from "zod";
import type { Config } from "../lib/config.js";
import { ApiError, parseBody } from "./errors.js";
import { describeCurveCall, describeRouterCall, type PlanTx } from "./plans.js";
import { fingerprint, type Ledger, type StoredPlan } from "./trades.js";
import type { KeyRecord } from "./signin.js";

/** The sequencer's answer to a relay: a hash, a refusal, or nothing (unreachable). */
export class SequencerRefused extends Error {}
export class SequencerUnreachable extends Error {}

export interface Sequencer {
  sendRawTransaction(raw: Hex): Promise<Hex>;
}

/** JSON-RPC eth_sendRawTransaction to the configured sequencer URL (anvil on the devnet). */
export function httpSequencer(url: string, timeoutMs = 5_000): Sequencer {
  return {
    async sendRawTransaction(raw) {
      let res: Response;
      try {
        res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_sendRawTransaction", params: [raw] }), signal: AbortSignal.timeout(timeoutMs) });
      } catch (err) {
        throw new SequencerUnreachable(`no answer from the sequencer (${(err as Error).name})`);
      }
      const body = (await res.json().catch(() => null)) as { result?: Hex; error?: { message?: string } } | null;
      if (body?.result && /^0x[0-9a-fA-F]{64}$/.test(body.result)) return body.result;
      if (body?.error) throw new SequencerRefused(body.error.message ?? "refused");
      if (res.status >= 500 || !body) throw new SequencerUnreachable(`the sequencer answered ${res.status} without a result`);
      throw new SequencerRefused(`the sequencer answered ${res.status}`);
    },
  };
}

const submitRequest = z
  .object({
    raw_tx: z.string().regex(/^0x[0-9a-fA-F]+$/, "must be 0x hex").max(40_000).optional(),
    raw_txs: z.array(z.string().regex(/^0x[0-9a-fA-F]+$/, "must be 0x hex").max(40_000)).min(1).max(3).optional(),
    fee_tx_hash: z.string().regex(/^0x[0-9a-fA-F]{64}$/, "must be a transaction hash").optional(),
  })
  .strict();

type Decoded = { raw: Hex; hash: Hex; from: Address; tx: PlanTx };
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
    if (diffs.length === before) diffs.push({ field: "data", built: `${built.data.slice(0, 18)}…`, signed: `${signed.data.slice(0, 18)}…` });
  }
  return diffs;
}

/**
 * live/submit: relays only a transaction this service built for this key, signed by the key's
 * wallet, byte for byte on to, data, value and chain id. A plan relays once; the same signed bytes
 * again answer the same hash without a second relay.
 */
export function createRelay(d: { config: Config; chain: PublicClient; ledger: Ledger; sequencer: Sequencer; clock: () => number }) {
  const now = () => Math.floor(d.clock() / 1000);

  async function decode(raw: Hex): Promise<Decoded> {
    let parsed: ReturnType<typeof parseTransaction>;
    let from: Address;
    try {
      parsed = parseTransaction(raw as TransactionSerialized);
      from = await recoverTransactionAddress({ serializedTransaction: raw as TransactionSerialized });
    } catch (err) {
      throw new ApiError(422, "SUBMIT_REJECTED", `the relay cannot decode this signed transaction: ${(err as Error).message.split("\n")[0]!.slice(0, 120)}`);
    }
    if (!parsed.to) throw new ApiError(422, "NOT_AS_BUILT", "a contract creation was never built by this service", { diffs: [{ field: "to", built: null, signed: null }] });
    return { raw, hash: keccak256(raw), from, tx: { to: parsed.to, data: parsed.data ?? "0x", value: (parsed.value ?? 0n).toString(), chain_id: parsed.chainId ?? 0 } };
  }

  async function notAsBuilt(key: KeyRecord, signed: PlanTx): Promise<never> {
    const plans = await d.ledger.recentPlans(key.keyId);
    let best: { diffs: Diff[]; plan: StoredPlan } | null = null;
    for (const p of plans) {
      for (const t of p.txs) {
        const diffs = diffTx(t.tx, signed);
        if (!best || diffs.length < best.diffs.length) best = { diffs, plan: p };
      }
    }
    const diffs = best?.diffs ?? [{ field: "plan", built: null, signed: signed.to.toLowerCase() }];
    throw new ApiError(422, "NOT_AS_BUILT", best ? `the transaction differs from plan ${best.plan.id} built for this key: ${diffs.map((x) => x.field).join(", ")}` : "no plan was built for this key", { diffs, ...(best ? { plan_id: best.plan.id } : {}) });
  }

  async function relay(raw: Hex): Promise<Hex> {
    try {
      return await d.sequencer.sendRawTransaction(raw);
    } catch (err) {
      if (err instanceof SequencerRefused) throw new ApiError(422, "SUBMIT_REJECTED", `the sequencer refused the transaction: ${err.message.slice(0, 200)}`);
      throw new ApiError(502, "SEQUENCER_UNREACHABLE", `${(err as Error).message}; it may or may not have arrived: look for the receipt before signing another with the same nonce`, {}, 2);
    }
  }

  return {
    async submit(body: Record<string, unknown>, key: KeyRecord) {
      if (!d.config.submitEnabled) throw new ApiError(403, "SUBMIT_DISABLED", "this server does not relay; send the signed transaction to the chain yourself");
      const q = parseBody(submitRequest, body);
      if ((q.raw_tx === undefined) === (q.raw_txs === undefined)) throw new ApiError(400, "BAD_REQUEST", "send raw_tx or raw_txs");
      const t0 = performance.now();
      const raws = (q.raw_txs ?? [q.raw_tx!]) as Hex[];
      const txs: Decoded[] = [];
      for (const raw of raws) txs.push(await decode(raw));
      for (const t of txs) if (t.from.toLowerCase() !== key.wallet.toLowerCase()) throw new ApiError(403, "WALLET_MISMATCH", `signed by ${t.from}, not by this key's wallet`);

      // Each transaction must be one this key's plans hold, all from the same plan.
      const matches = [];
      for (const t of txs) {
        const m = await d.ledger.planByFingerprint(key.keyId, fingerprint(t.tx));
        if (!m) await notAsBuilt(key, t.tx);
        matches.push(m!);
      }
      const plan = matches[matches.length - 1]!.plan;
      if (matches.some((m) => m.plan.id !== plan.id)) throw new ApiError(422, "NOT_AS_BUILT", "raw_txs mix transactions of different plans", { diffs: [{ field: "plan", built: String(plan.id), signed: matches.map((m) => m.plan.id).join(",") }] });
      const swapAt = matches.findIndex((m) => m.kind === "swap");
      const sent: Hex[] = [];

      // The same signed swap again: its hash, no second relay.
      if (swapAt >= 0) {
        const seen = await d.ledger.tradeByHash(txs[swapAt]!.hash);
        if (seen) return { tx_hash: txs[swapAt]!.hash, as_built: true, repeat: true, timings: { total_ms: ms(t0) } };
      }
      // A curve plan's fee goes first: in raw_txs before its swap, or already mined (fee_tx_hash).
      const feeIdx = plan.txs.findIndex((x) => x.kind === "fee_transfer");
      if (swapAt >= 0 && plan.execution === "curve" && feeIdx >= 0) {
        const feeAt = matches.findIndex((m) => m.kind === "fee_transfer");
        if (feeAt < 0 || feeAt > swapAt) {
          if (!q.fee_tx_hash) throw new ApiError(422, "FEE_FIRST", "this curve trade's fee must go first: send raw_txs [fee_transfer, swap] or fee_tx_hash of the mined fee", { sent });
          const feeTx = await d.chain.getTransaction({ hash: q.fee_tx_hash as Hex }).catch(() => null);
          const built = plan.txs[feeIdx]!.tx;
          if (!feeTx || feeTx.from.toLowerCase() !== key.wallet.toLowerCase() || feeTx.to?.toLowerCase() !== built.to.toLowerCase() || feeTx.value.toString() !== built.value) {
            throw new ApiError(422, "FEE_FIRST", "fee_tx_hash is not this plan's fee transfer from this wallet", { sent });
          }
        }
      }
      if (swapAt >= 0) {
        if (plan.deadline < now()) throw new ApiError(422, "SUBMIT_REJECTED", `plan ${plan.id} passed its deadline; prepare a fresh one`);
        if (!(await d.ledger.claimPlan(plan.id))) throw new ApiError(422, "NOT_AS_BUILT", `plan ${plan.id} was already relayed with another transaction`, { diffs: [{ field: "plan", built: String(plan.id), signed: "already relayed" }] });
      }
      for (const [i, t] of txs.entries()) {
        try {
          sent.push(await relay(t.raw));
        } catch (err) {
          if (swapAt >= 0 && i <= swapAt && err instanceof ApiError && err.code === "SUBMIT_REJECTED") await d.ledger.releasePlan(plan.id);
          if (err instanceof ApiError && sent.length) throw new ApiError(err.status, err.code, err.message, { ...err.extra, sent }, err.retryAfterS);
          throw err;
        }
        if (i === swapAt) {
          const feeHash = swapAt > 0 ? (sent[matches.findIndex((m) => m.kind === "fee_transfer")] ?? null) : ((q.fee_tx_hash as Hex | undefined) ?? null);
          await d.ledger.recordPending({ wallet: key.wallet, keyId: key.keyId, planId: plan.id, path: "agent", tokenIn: plan.tokenIn, tokenOut: plan.tokenOut, amountIn: plan.amountIn, amountOutMin: plan.amountOutMin, txHash: t.hash, feeTxHash: feeHash });
        }
      }
      const last = sent[swapAt >= 0 ? swapAt : sent.length - 1]!;
      return {
        tx_hash: last,
        as_built: true,
        ...(q.raw_txs ? { tx_hashes: sent, fee_first: plan.execution === "curve" } : {}),
        timings: { total_ms: ms(t0) },
      };
    },
  };
}

const ms = (t0: number) => Math.round((performance.now() - t0) * 100) / 100;
export type Relay = ReturnType<typeof createRelay>;
