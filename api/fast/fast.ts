import { zeroAddress, type Address, type Hex } from "viem";
import { recoverTypedDataAddress } from "../../lib/secp.js";
import { bpsOf, feeFor } from "../../lib/fees.js";
import { fastPairOf, type FastPair, type FastRouteTable } from "../../lib/fastRoutes.js";
import { readFeeBps, readRouterCall } from "../../lib/router/read.js";
import { stockMarketOpen } from "../../lib/marketHours.js";
import type { KeyRecord } from "../auth/index.js";
import { Refusal, rpc } from "../errors/index.js";
import { callerOf } from "../http/caller.js";
import type { Market } from "../market/index.js";
import { readChainSnapshot, balanceIn, type ChainSnapshot } from "../ports/chainSnapshot.js";
import type { PoolState } from "../ports/indexed.js";
import type { Sequencer } from "../ports/sequencer.js";
import {
  balanceOverride,
  findBalanceSlot,
  simulatePlan,
  type Override,
  type PlanSimulation,
} from "../ports/simulation.js";
import {
  buildRouterSwap,
  LIMITS,
  msSince,
  nodeKnows,
  permitTypedData,
  resend,
  sendRaw,
  type Ledger,
  type PlanTx,
  type TokenRef,
  type Volume,
} from "../trading/index.js";
import { FAST_RULES, fastFailures, minOutFloor, unroutedFailures, type FastFacts, type FastFailure } from "./checks.js";
import { parseFastTx, signerOf, type FastTx } from "./decode.js";
import { notAsBuiltDiffs, poolRouteOf } from "./rebuild.js";
import type { FastParameters } from "./request.js";
import { lc } from "../../lib/address.js";
import type { Common } from "../ports/common.js";

export type FastDeps = Pick<Common, "config" | "chain" | "clock"> & {
  market: Market;
  ledger: Ledger;
  volume: Volume;
  sequencer: Sequencer;
  table: FastRouteTable;
  sha256: Hex;
  /**
   * The latest block's base fee and time, reused for a second (GAS and DEADLINE tolerate that; the
   * chain judges the rest).
   */
  head: () => Promise<ChainHead>;
};
export type ChainHead = { baseFee: bigint; time: number };

/** How long a call waits for another call relaying the same signed bytes before answering IN_FLIGHT. */
const IN_FLIGHT_WAIT_MS = 2_000;

/**
 * live/fast: the client built the transaction from the pinned route table; the service reads it,
 * runs every rule in SPEC's order against what it rebuilds itself, and relays only a byte-for-byte
 * match, once per signed bytes (a repeat answers the same hash; a concurrent twin waits for it).
 */
export async function fastTrade(d: FastDeps, q: FastParameters, key: KeyRecord) {
  const t0 = performance.now();
  assertFastEnabled(d);
  const { wallet } = callerOf(key);
  const parsed = parseFastTx(q.raw_tx as Hex);
  // The same signed bytes again: their hash, nothing relayed twice.
  const prior = q.check_only ? null : d.ledger.tradeByHash(parsed.hash);
  prior?.catch(() => {});
  const pair = fastPairOf(d.table, q.token_in, q.token_out);
  // The reads are made first, then the signer is recovered: the requests leave (node:http, lib/nodeFetch.ts) as soon
  // as this turn's synchronous work, the recovery, is done, without waiting on the event loop's other work.
  const gathering = pair ? gatherFacts(d, q, parsed, pair, wallet) : null;
  gathering?.catch(() => {});
  const tx: FastTx = { ...parsed, from: await signerOf(parsed.raw) };
  const decodeMs = msSince(t0);
  const held = await prior;
  if (held && lc(held.wallet) === lc(wallet))
    return {
      tx_hash: tx.hash,
      relayed: true,
      ...(await repeatOf(d, tx.hash, held)),
      timings: { total_ms: msSince(t0) },
    };
  if (!pair || !gathering) {
    const head = await rpc(d.head());
    const now = Math.max(Math.floor(d.clock() / 1000), head.time);
    const failures = unroutedFailures(
      { now, chainId: d.config.chainId, router: d.config.contracts.universalRouter, wallet, tx, req: q },
      `no pinned route for ${q.token_in} -> ${q.token_out}`,
    );
    throw refusalOf(failures, { routes: { version: d.table.version, sha256: d.sha256 } });
  }

  const t1 = performance.now();
  const facts = { ...(await gathering), tx };
  const failures = fastFailures(facts);
  const checksMs = msSince(t1);
  if (failures.length) throw refusalOf(failures);
  const answer = answerOf(d, facts, pair);
  if (q.check_only)
    return { tx_hash: tx.hash, relayed: false, repeat: false, ...answer, timings: { total_ms: msSince(t0) } };
  // A twin call that relayed these bytes first answers what they were relayed under.
  const { timings: relayMs, ...relayed } = await relay(d, facts, pair, key, answer);
  return {
    tx_hash: tx.hash,
    relayed: true,
    ...answer,
    ...relayed,
    timings: { decode_ms: decodeMs, ...facts.timings, checks_ms: checksMs, ...relayMs, total_ms: msSince(t0) },
  };
}

/** FAST_DISABLED on a server that did not opt in (live/fast's first step: before any field is read). */
export function assertFastEnabled(d: Pick<FastDeps, "config">): void {
  if (!d.config.fastEnabled || !d.config.submitEnabled)
    throw new Refusal("FAST_DISABLED", "fast mode is off on this server; use live/prepare and live/submit");
}

/** The first failure answered, all listed (each its rule and why); the answered one's terms. */
function refusalOf(failures: FastFailure[], extra: Record<string, unknown> = {}): Refusal {
  const first = failures[0]!;
  return new Refusal(first.rule, first.message, {
    failures: failures.map(({ rule, message }) => ({ rule, message })),
    ...(first.terms ? { terms: first.terms } : {}),
    ...extra,
  });
}

type Gathered = FastFacts & { timings: Record<string, number> };

/**
 * Marks, the fee tier, the chain (one multicall, where needed) and the simulation, read at once; then
 * what the rules compare. The signer is the caller's to fill.
 */
async function gatherFacts(
  d: FastDeps,
  q: FastParameters,
  tx: Omit<FastTx, "from">,
  pair: FastPair,
  wallet: Address,
): Promise<Omit<Gathered, "tx">> {
  const t0 = performance.now();
  const c = d.config.contracts;
  const now = Math.floor(d.clock() / 1000);
  const amountIn = BigInt(q.amount_in);
  const minOut = BigInt(q.min_out);
  const stockTokens = [pair.address_in, pair.address_out].filter((a) => d.market.core(a)?.kind === "stock");
  const { markIn, markOut, volume, head, snap, simulation, pools } = await readFacts(d, q, {
    tx,
    pair,
    wallet,
    stockTokens,
  });
  const readMs = msSince(t0);
  const fee = feeFor({ feeClass: "major", volume30dUsd: volume, shield: q.shield });
  const permit = signedPermitOf(q, pair, c.universalRouter);
  const built = rebuiltSwap(d, q, pair, { bps: fee.bps, amountIn, minOut, permit });
  const reading = readRouterCall(tx.to ?? c.universalRouter, tx.value, tx.data, {
    router: c.universalRouter,
    wallet,
    feeRecipient: d.config.feeRecipient,
    weth: d.config.tokens.WETH!.address,
  });
  const decimals = {
    in: d.market.core(pair.address_in)?.decimals ?? 18,
    out: d.market.core(pair.address_out)?.decimals ?? 18,
  };
  return {
    now: Math.max(now, snap?.time ?? head.time),
    chainId: d.config.chainId,
    router: c.universalRouter,
    wallet,
    req: q,
    pair,
    amountIn,
    minOut,
    marks: { in: markIn, out: markOut },
    decimals,
    stockInvolved: stockTokens.length > 0,
    stockOpen: stockMarketOpen(now),
    fee,
    // The fee as the calldata pays it, judged on the pinned pair whatever else the call does (recipients are
    // NOT_AS_BUILT's).
    calldataFeeBps: readFeeBps({ ...reading, tokenIn: pair.address_in, tokenOut: pair.address_out, amountIn }),
    baseFee: snap?.baseFee ?? head.baseFee,
    diffs: notAsBuiltDiffs(built.data, tx.data),
    permitProblem: await permitProblemOf(d, q, pair, amountIn, wallet, Math.max(now, snap?.time ?? head.time), permit),
    stock: snap?.stock
      ? {
          paused: stockTokens.some((t) => snap.stock!.paused[lc(t)]) || snap.stock.registryPaused === true,
          walletBlocked: snap.wallet?.stockBlocked === true,
        }
      : null,
    simulation,
    midOutPerIn: pools ? routeMid(pools, pair) : null,
    funded: q.simulate || !snap ? null : fundedFor(snap, pair, amountIn, !!permit, now),
    timings: { reads_ms: readMs },
  };
}

type FactsFor = { tx: Omit<FastTx, "from">; pair: FastPair; wallet: Address; stockTokens: Address[] };

/**
 * The reads gatherFacts needs, all at once: marks, volume, head, the chain snapshot where needed, the
 * simulation, pools.
 */
async function readFacts(d: FastDeps, q: FastParameters, { tx, pair, wallet, stockTokens }: FactsFor) {
  const amountIn = BigInt(q.amount_in);
  const feeToken = pair.fee_side === "input" ? pair.address_in : pair.address_out;
  // The chain's own reads only where a rule needs them fresh: balances without simulation, a stock pair's switches.
  const needSnapshot = !q.simulate || stockTokens.length > 0;
  const [markIn, markOut, volume, head, snap, simulation, pools] = await Promise.all([
    rpc(d.market.mark(pair.address_in)),
    rpc(d.market.mark(pair.address_out)),
    d.volume.usd30d(wallet),
    rpc(d.head()),
    needSnapshot
      ? readChainSnapshot(d.chain, d.config, {
          calls: [],
          curveToken: null,
          stockTokens,
          wallet: {
            address: wallet,
            tokens: [pair.address_in, pair.address_out],
            inputToken: pair.address_in === zeroAddress ? null : pair.address_in,
            withDelegation: false,
          },
        })
      : Promise.resolve(null),
    // Run as the key's wallet sends it: another signer's transaction is WALLET_MISMATCH whatever it does.
    q.simulate && tx.to ? simulateSigned(d, q, tx, pair, feeToken, amountIn, wallet) : Promise.resolve(null),
    stockTokens.length ? rpc(d.market.pools()) : Promise.resolve(null),
  ]);
  return { markIn, markOut, volume, head, snap, simulation, pools };
}

/** The request's signed permit as the swap would carry it (PERMIT2_PERMIT), or null. */
function signedPermitOf(q: FastParameters, pair: FastPair, router: Address) {
  if (!q.permit) return null;
  return {
    permit: {
      details: {
        token: pair.address_in,
        amount: BigInt(q.permit.amount),
        expiration: q.permit.expiration,
        nonce: q.permit.nonce,
      },
      spender: router,
      sigDeadline: BigInt(q.permit.sig_deadline),
    },
    signature: q.permit.signature as Hex,
  };
}

type Rebuild = { bps: number; amountIn: bigint; minOut: bigint; permit: ReturnType<typeof signedPermitOf> };

/** The swap the service would build for this request from the pinned pair (what the signed bytes must match). */
function rebuiltSwap(d: FastDeps, q: FastParameters, pair: FastPair, { bps, amountIn, minOut, permit }: Rebuild) {
  const c = d.config.contracts;
  return buildRouterSwap({
    chainId: d.config.chainId,
    router: c.universalRouter,
    route: poolRouteOf(pair),
    tokenIn: pair.address_in,
    tokenOut: pair.address_out,
    weth: d.config.tokens.WETH!.address,
    amountIn,
    amountOutMin: minOut,
    fee: {
      side: pair.fee_side,
      bps,
      recipient: d.config.feeRecipient,
      amount: pair.fee_side === "input" ? bpsOf(amountIn, bps) : 0n,
    },
    deadline: q.deadline,
    permit,
  });
}

/**
 * The exact signed call from its signer in one simulated block; with check_only and fund, the input
 * lent by state overrides.
 */
async function simulateSigned(
  d: FastDeps,
  q: FastParameters,
  tx: Omit<FastTx, "from">,
  pair: FastPair,
  feeToken: Address,
  amountIn: bigint,
  wallet: Address,
): Promise<PlanSimulation> {
  const overrides: Override[] = [];
  if (q.fund) {
    if (pair.address_in === zeroAddress) overrides.push({ address: wallet, balance: amountIn + 10n ** 18n });
    else {
      const slot = await rpc(findBalanceSlot(d.chain, pair.address_in));
      if (slot !== null) overrides.push(balanceOverride(pair.address_in, wallet, slot, amountIn));
      overrides.push({ address: wallet, balance: 10n ** 18n });
    }
  }
  try {
    return await simulatePlan({
      chain: d.chain,
      multicall3: d.config.contracts.multicall3,
      wallet,
      txs: [{ to: tx.to!, data: tx.data, value: tx.value }],
      tokenOut: pair.address_out,
      feeToken,
      feeRecipient: d.config.feeRecipient,
      overrides,
    });
  } catch (err) {
    // The node refuses to run a call the sender cannot pay for: the signed transaction fails.
    const msg = (err as Error).message ?? "";
    if (/insufficient funds|exceeds balance/i.test(msg))
      return {
        ok: false,
        error: "the wallet cannot pay the ETH this transaction sends",
        amount_out: null,
        fee_transfer: null,
        gas_total: 0,
        gas: [],
        funded_by_overrides: overrides.length > 0,
      };
    return rpc(Promise.reject(err));
  }
}

/**
 * PERMIT: none on an ETH input; for exactly amount_in; expiring within the trade permit's 30 minutes;
 * signed by the wallet for the router.
 */
async function permitProblemOf(
  d: FastDeps,
  q: FastParameters,
  pair: FastPair,
  amountIn: bigint,
  wallet: Address,
  now: number,
  permit: Parameters<typeof buildRouterSwap>[0]["permit"],
): Promise<string | null> {
  if (!q.permit || !permit) return null;
  if (pair.address_in === zeroAddress) return "an ETH input takes no permit";
  if (BigInt(q.permit.amount) !== amountIn) return `the permit is for ${q.permit.amount}, not amount_in ${amountIn}`;
  const latest = now + LIMITS.permitTradeExpiryS;
  if (q.permit.expiration > latest || q.permit.sig_deadline > latest)
    return `the permit expires too late: at most ${LIMITS.permitTradeExpiryS} s from now`;
  if (q.permit.sig_deadline < q.deadline) return "the permit's sig_deadline is before the trade's deadline";
  const signer = await recoverTypedDataAddress({
    ...permitTypedData(d.config.chainId, d.config.contracts.permit2, permit.permit),
    signature: permit.signature,
  }).catch(() => null);
  if (!signer || lc(signer) !== lc(wallet)) return "the permit is not signed by this wallet for the router";
  return null;
}

/**
 * FAST_FUNDS (simulate false): the input held, and for an ERC-20 its Permit2 allowances (the router's
 * from a permit in the call, or standing).
 */
function fundedFor(snap: ChainSnapshot, pair: FastPair, amountIn: bigint, withPermit: boolean, now: number): boolean {
  const w = snap.wallet;
  if (!w) return false;
  if (balanceIn(w, pair.address_in) < amountIn) return false;
  if (pair.address_in === zeroAddress) return true;
  if ((w.allowanceToPermit2 ?? 0n) < amountIn) return false;
  const [amount, expiration] = w.routerPermit ?? [0n, 0, 0];
  return withPermit || (amount >= amountIn && expiration > now);
}

/** The pinned hops' pool mid from the indexed pool states: output atoms per input atom; null when a pool is unread. */
function routeMid(pools: PoolState[], pair: FastPair): number | null {
  let mid = 1;
  for (const h of pair.hops) {
    const p = pools.find((x) => lc(x.id) === lc(h.pool_id));
    if (!p || p.priceX96 === 0n) return null;
    const oneIn0 = Number(p.priceX96) / 2 ** 96;
    mid *= h.zero_for_one ? oneIn0 : 1 / oneIn0;
  }
  return mid;
}

/** What a relayed trade answers; kept with its plan (summary.answer) so that a repeat answers the same. */
type FastAnswer = ReturnType<typeof answerOf>;
function answerOf(d: FastDeps, f: Gathered, pair: FastPair) {
  const floor = minOutFloor(f);
  return {
    route: {
      version: d.table.version,
      sha256: d.sha256,
      token_in: pair.token_in,
      token_out: pair.token_out,
      hops: pair.hops.map((h) => h.pool_id),
      max_usd: pair.max_usd,
    },
    fee: {
      bps: f.fee.bps,
      class: "major" as const,
      tier: f.fee.tier,
      shield: f.req.shield,
      side: pair.fee_side,
      token: pair.fee_side === "input" ? pair.address_in : pair.address_out,
      recipient: d.config.feeRecipient,
    },
    min_out: f.minOut.toString(),
    min_out_floor: floor.floor?.toString() ?? null,
    checks: [...FAST_RULES],
    simulation: f.simulation,
  };
}

const refOf = (d: FastDeps, a: Address, symbol: string): TokenRef => {
  const t = d.market.core(a);
  return { token: symbol, address: a, symbol, name: t?.name ?? symbol, decimals: t?.decimals ?? 18 };
};

/**
 * Written before it is sent (the pending trade keyed by its hash, which is unique, and its plan, in one statement):
 * a second call with the same bytes cannot claim it and waits for the first; the sequencer's
 * refusal forgets the trade; a lost answer keeps it pending for the watcher.
 */
async function relay(
  d: FastDeps,
  f: Gathered,
  pair: FastPair,
  key: KeyRecord,
  answer: FastAnswer,
): Promise<{ repeat: boolean; timings?: Record<string, number> } & Partial<FastAnswer>> {
  const { tx } = f;
  const t0 = performance.now();
  const tokenIn = refOf(d, pair.address_in, pair.token_in);
  const tokenOut = refOf(d, pair.address_out, pair.token_out);
  const planTx: PlanTx = { to: tx.to!, data: tx.data, value: tx.value.toString(), chain_id: tx.chainId };
  const plan = {
    keyId: key.keyId,
    wallet: f.wallet,
    kind: "fast",
    execution: "router" as const,
    tokenIn,
    tokenOut,
    amountIn: f.amountIn.toString(),
    amountOutMin: f.minOut.toString(),
    feeBps: f.fee.bps,
    deadline: f.req.deadline,
    txs: [{ kind: "swap", tx: planTx }],
    summary: {
      route: `fast:${pair.token_in}>${pair.token_out}`,
      fee: {
        bps: f.fee.bps,
        side: pair.fee_side,
        token: pair.fee_side === "input" ? pair.address_in : pair.address_out,
        recipient: d.config.feeRecipient,
        command: pair.fee_side === "input" ? "TRANSFER" : "PAY_PORTION",
        amount: feeAmountOf(f, pair).toString(),
      },
      routes_sha256: d.sha256,
      answer,
    },
  };
  const pending = {
    wallet: f.wallet,
    keyId: key.keyId,
    path: "fast",
    tokenIn,
    tokenOut,
    amountIn: f.amountIn.toString(),
    amountOutMin: f.minOut.toString(),
    txHash: tx.hash,
    rawTx: tx.raw,
  };
  const claimed = await d.ledger.recordClientBuilt(plan, pending);
  if (!claimed) return waitForTwin(d, tx.hash);
  const planId = claimed.planId;
  const stored = msSince(t0);
  const t1 = performance.now();
  try {
    await sendRaw(d.sequencer, tx.raw);
  } catch (err) {
    if (!(err instanceof Refusal)) throw err;
    if (err.code === "SEQUENCER_UNREACHABLE") {
      await d.ledger.markRelay(tx.hash, "lost");
      throw err;
    }
    // Refused, yet the node holds these bytes (sent before, even mined): they are out.
    if (!(await nodeKnows(d.chain, tx.hash))) {
      await d.ledger.forgetRelay(tx.hash, planId);
      if (/nonce/i.test(err.message)) throw await nonceRefusal(d, tx, err);
      throw err;
    }
  }
  // Not awaited: a trade left 'sending' (this write lost) is sent again by the watcher with the same bytes,
  // which the node already holds.
  void d.ledger.markRelay(tx.hash, "sent").catch(() => {});
  return { repeat: false, timings: { store_ms: stored, send_ms: msSince(t1) } };
}

/**
 * The fee in atoms: exactly bps of the input, or for an output fee bps of the output the minimum
 * implies (at least).
 */
function feeAmountOf(f: Gathered, pair: FastPair): bigint {
  if (pair.fee_side === "input") return bpsOf(f.amountIn, f.fee.bps);
  const delivered = f.simulation?.ok && f.simulation.amount_out ? BigInt(f.simulation.amount_out) : f.minOut;
  return bpsOf((delivered * 10_000n) / BigInt(10_000 - f.fee.bps), f.fee.bps);
}

/**
 * Another call holds these bytes: wait for its relay to answer, then answer what it did (IN_FLIGHT if
 * it takes too long or was refused).
 */
async function waitForTwin(d: FastDeps, hash: Hex): Promise<Repeat> {
  const until = Date.now() + IN_FLIGHT_WAIT_MS;
  for (;;) {
    const t = await d.ledger.tradeByHash(hash);
    if (!t)
      throw new Refusal(
        "IN_FLIGHT",
        "another call with the same signed bytes was refused; retry to see why",
        {},
        { retryAfterS: 1 },
      );
    if (t.relay !== "sending") return repeatOf(d, hash, t);
    if (Date.now() > until)
      throw new Refusal(
        "IN_FLIGHT",
        "the same signed bytes are being relayed by another call; look for the hash, or retry",
        {},
        { retryAfterS: 1 },
      );
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * These bytes are a trade already: a repeat when the sequencer took them or the chain settled
 * them; while another call is sending them, wait for it; when that call's answer was lost, send
 * the same bytes once more (same hash) before saying they are out. A repeat answers what the
 * relaying call answered (kept with its plan); a trade relayed before answers were kept answers without it.
 */
async function repeatOf(
  d: FastDeps,
  hash: Hex,
  t: NonNullable<Awaited<ReturnType<Ledger["tradeByHash"]>>>,
): Promise<Repeat> {
  if (t.relay === "sending" && t.status === "pending") return waitForTwin(d, hash);
  const first = async (): Promise<Repeat> => ({ repeat: true, ...(await answeredFirst(d, t.planId)) });
  if (t.status !== "pending" || t.relay === "sent" || t.relay === null) return first();
  // Past its plan's deadline the bytes could only revert: their hash, never a send (live/submit's rule; the
  // ledger's claim refuses them too).
  if (await pastDeadline(d, t.planId)) return first();
  const raw = await d.ledger.claimResend(hash, { staleBefore: Math.floor(d.clock() / 1000) + 1 });
  const state = raw ? await resend(d.sequencer, d.ledger, hash, raw) : "sending";
  if (state === "sent" || (await nodeKnows(d.chain, hash))) return first();
  throw new Refusal(
    "SEQUENCER_UNREACHABLE",
    "these bytes were relayed once without an answer and the sequencer does not take them now; " +
      "they may have arrived: look for the hash before signing another with the same nonce",
    {},
    { retryAfterS: 2 },
  );
}

/** The plan's deadline (unix s) is behind the clock; a trade without a plan has none. */
async function pastDeadline(d: FastDeps, planId: number | null): Promise<boolean> {
  const plan = planId === null ? null : await d.ledger.planById(planId);
  return !!plan && plan.deadline < Math.floor(d.clock() / 1000);
}

type Repeat = { repeat: true } & Partial<FastAnswer>;
/** The answer kept with the relayed trade's plan; none for a trade relayed before answers were kept. */
async function answeredFirst(d: FastDeps, planId: number | null): Promise<Partial<FastAnswer>> {
  const plan = planId === null ? null : await d.ledger.planById(planId);
  return (plan?.summary.answer as FastAnswer | undefined) ?? {};
}

/**
 * NONCE: the sequencer refused the nonce and the chain does not hold these bytes; spent when a
 * transaction took the nonce.
 */
async function nonceRefusal(d: FastDeps, tx: FastTx, cause: Refusal): Promise<Refusal> {
  const next = await d.chain.getTransactionCount({ address: tx.from, blockTag: "latest" }).catch(() => null);
  const spent = next !== null && next > tx.nonce;
  return new Refusal(
    "NONCE",
    spent
      ? `nonce ${tx.nonce} was taken by another transaction: this one can never land; sign again at nonce ${next}`
      : `the sequencer refused nonce ${tx.nonce}: ${cause.message}`,
    { chain: { spent, nonce: tx.nonce, next } },
    { cause },
  );
}
