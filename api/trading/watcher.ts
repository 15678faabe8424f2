import PQueue from "p-queue";
import { zeroAddress, type Hex } from "viem";
import { relayedOutcome, type RawLog, type RelayedContracts } from "../../lib/tradeOutcome.js";
import type { Lease } from "../ports/store/lease.js";
import type { Sequencer } from "../ports/sequencer.js";
import { DROP_AFTER_S, storedOutcome, type Ledger, type WatchedTrade } from "./ledger.js";
import { resend, STALE_SEND_S } from "./relay.js";
import type { Common } from "../ports/common.js";
import { isFinal } from "../../lib/finality.js";
import { relayOutcomes, workerPass } from "../../lib/metrics.js";

/** A pending trade is looked at this long past the hour that makes it dropped (a receipt seen late still counts). */
const GRACE_S = 120;
/**
 * A sent transaction the node does not know (it lost it, e.g. a devnet restored from a state a
 * second old) is sent again at most this often.
 */
export const RESEND_EVERY_S = 5;

type RpcReceipt = { status: string; blockHash: Hex; blockNumber: Hex; logs: RawLog[] };

type WatcherDeps = Pick<Common, "chain" | "clock" | "logger"> & {
  ledger: Ledger;
  sequencer: Sequencer;
  lease?: Lease;
  contracts: RelayedContracts;
  intervalMs?: number;
  concurrency?: number;
};
/**
 * The watcher's deps, its raw JSON-RPC reads (receipts as the node answers them), and the trades it
 * has counted dropped (each once while it stays watched; pit_relay_outcomes_total).
 */
type Watching = WatcherDeps & { rpc: <T>(method: string, params: unknown[]) => Promise<T>; dropped: Set<number> };

/**
 * The relay watcher: every `intervalMs` it reads `eth_getTransactionReceipt` for each relayed
 * trade of the app store that is pending, or whose outcome is inside the unfinalized window, and
 * records mined/reverted with block number, hash, time and the outcome computed from the receipt
 * and the stored plan (lib/tradeOutcome relayedOutcome: no trace). Nothing per block: one
 * eth_blockNumber per tick with work, one receipt per watched hash, one block header per new
 * outcome. A receipt that disappears (reorg) puts the trade back to pending; a receipt in another
 * block moves it there. Pending trades are looked at until an hour (plus a grace) after relay:
 * the ledger calls them dropped after the hour (DROP_AFTER_S, service clock).
 *
 * A pending trade without a receipt whose bytes the node does not know (lost on the way, or
 * forgotten by a node restored from an older state) is sent again, the same bytes, until its
 * plan's deadline: past it the transaction could only revert and cost the wallet gas.
 *
 * One watcher per store: the scheduled passes run only while this instance holds the
 * `relay-watcher` lease (api/ports/store/lease.ts), so N instances read each receipt once and
 * another takes over within the lease's ttl when the holder dies. Updates stay conditional on
 * the row they read, so a pass that overlaps a takeover cannot undo a newer reading.
 */
export function createWatcher(d: WatcherDeps) {
  const intervalMs = d.intervalMs ?? 500;
  const queue = new PQueue({ concurrency: d.concurrency ?? 8 });
  const w: Watching = {
    ...d,
    rpc: <T>(method: string, params: unknown[]) =>
      d.chain.request({ method: method as never, params: params as never }) as Promise<T>,
    dropped: new Set(),
  };
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  let stopped = true;
  const check = (t: WatchedTrade, head: () => Promise<number>) => checkTrade(w, t, head);

  /** The scheduled pass: only while this instance holds the store's watcher lease. */
  async function leasedTick() {
    if (d.lease && !(await d.lease.hold())) return workerPass("relay_watcher", "not_held");
    try {
      await tick();
    } catch (err) {
      workerPass("relay_watcher", "failed");
      throw err;
    }
    workerPass("relay_watcher", "ran");
  }

  /** One pass over the watched trades (exposed for tests; runs whether or not the lease is held). */
  async function tick() {
    const now = Math.floor(d.clock() / 1000);
    const trades = await d.ledger.watchList(now - DROP_AFTER_S - GRACE_S);
    const watched = new Set(trades.map((t) => t.id));
    for (const id of w.dropped) if (!watched.has(id)) w.dropped.delete(id);
    if (trades.length === 0) return;
    let headP: Promise<number> | null = null;
    const head = () => (headP ??= w.rpc<Hex>("eth_blockNumber", []).then((h) => Number(BigInt(h))));
    await queue.addAll(
      trades.map((t) => async () => {
        try {
          await check(t, head);
        } catch (err) {
          d.logger?.warn({ err, tx: t.txHash }, "relay watcher: receipt check failed");
        }
      }),
    );
  }

  function schedule() {
    if (stopped) return;
    timer = setTimeout(() => {
      running = leasedTick()
        .catch((err) => d.logger?.warn({ err }, "relay watcher: tick failed"))
        .finally(() => {
          running = null;
          schedule();
        });
    }, intervalMs);
    timer.unref?.();
  }

  return {
    tick,
    start() {
      if (!stopped) return;
      stopped = false;
      schedule();
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = null;
      await running;
      await d.lease?.release().catch(() => {});
    },
  };
}

export type Watcher = ReturnType<typeof createWatcher>;

/** One watched trade: no receipt (back to pending, or sent again), the same block (final?), or a new outcome. */
async function checkTrade(d: Watching, t: WatchedTrade, head: () => Promise<number>) {
  const r = await d.rpc<RpcReceipt | null>("eth_getTransactionReceipt", [t.txHash]);
  if (!r || !r.blockHash) {
    if (t.status !== "pending" && t.blockHash) await d.ledger.backToPending(t.id, t.blockHash);
    else await d.ledger.markChecked(t.id);
    if (t.status !== "pending") return;
    await resendIfForgotten(d, t);
    countDropped(d, t);
    return;
  }
  const blockNumber = Number(BigInt(r.blockNumber));
  const final = isFinal(BigInt(await head()), BigInt(blockNumber));
  if (t.status !== "pending" && t.blockHash?.toLowerCase() === r.blockHash.toLowerCase()) {
    if (final) await d.ledger.markFinal(t.id, t.blockHash);
    return;
  }
  await recordMined(d, t, r, { blockNumber, final });
}

/**
 * A receipt new, or moved to another block: the block's time, and the fee transaction a two_step
 * curve plan sent first.
 */
async function recordMined(
  d: Watching,
  t: WatchedTrade,
  r: RpcReceipt,
  { blockNumber, final }: { blockNumber: number; final: boolean },
) {
  const block = await d.rpc<{ timestamp: Hex } | null>("eth_getBlockByHash", [r.blockHash, false]);
  if (!block) return; // reorged between the two reads: next tick
  const twoStep = t.plan?.execution === "curve" && t.plan.fee.token === zeroAddress && t.plan.fee.amount > 0n;
  const feeTx =
    twoStep && t.feeTxHash ? await d.rpc<RpcReceipt | null>("eth_getTransactionReceipt", [t.feeTxHash]) : null;
  // A two_step trade whose fee has no successful receipt paid nothing: it counts nowhere (volume, league, treasury).
  const feeUnpaid = twoStep && feeTx?.status !== "0x1";
  if (feeUnpaid)
    d.logger?.warn(
      { tx: t.txHash, fee_tx: t.feeTxHash },
      "relay watcher: a curve trade mined without its fee; it counts nowhere",
    );
  const outcome = t.plan ? storedOutcome(relayedOutcome(r, t.plan, d.contracts, feeTx)) : null;
  const status = r.status === "0x1" ? "mined" : "reverted";
  await d.ledger.recordOutcome(t.id, t.status === "pending" ? null : t.blockHash, {
    status,
    blockNumber,
    blockHash: r.blockHash,
    blockTime: Number(BigInt(block.timestamp)),
    outcome,
    final,
    feeUnpaid,
  });
  relayOutcomes.inc({ outcome: status });
  d.dropped.delete(t.id);
}

/** A trade without a receipt past the hour is dropped (the ledger's word): counted once while it is watched. */
function countDropped(d: Watching, t: WatchedTrade) {
  if (Math.floor(d.clock() / 1000) - t.createdAt <= DROP_AFTER_S || d.dropped.has(t.id)) return;
  d.dropped.add(t.id);
  relayOutcomes.inc({ outcome: "dropped" });
}

/** Sends a pending trade's bytes again when they may be lost and the node does not know them. */
async function resendIfForgotten(d: Watching, t: WatchedTrade) {
  const now = Math.floor(d.clock() / 1000);
  if (!t.rawTx || (t.deadline !== null && t.deadline <= now)) return;
  const due =
    t.relay === "lost" ||
    (t.relay === "sending" && (t.sentAt ?? 0) < now - STALE_SEND_S) ||
    (t.relay === "sent" && (t.sentAt ?? 0) < now - RESEND_EVERY_S);
  if (!due) return;
  if (await d.rpc<unknown>("eth_getTransactionByHash", [t.txHash])) return;
  const raw = await d.ledger.claimResend(t.txHash, {
    staleBefore: now - STALE_SEND_S,
    ifSentBefore: now - RESEND_EVERY_S,
  });
  if (!raw) return;
  const state = await resend(d.sequencer, d.ledger, t.txHash, raw);
  if (state === "sent") relayOutcomes.inc({ outcome: "resent" });
  d.logger?.info({ tx: t.txHash, relay: state }, "relay watcher: sent a pending trade's bytes again");
}
