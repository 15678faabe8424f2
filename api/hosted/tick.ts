import type { Logger } from "pino";
import { formatUnits, parseUnits, zeroAddress, type Address } from "viem";
import type { Config, TokenEntry } from "../../lib/config.js";
import { erc20Abi } from "../../abis/erc20.js";
import type { KeyRecord } from "../auth/index.js";
import type { Who } from "../trading/index.js";
import { feeFor, majorSymbols } from "../../lib/fees.js";
import { quoteExactInputSingle } from "../../lib/quoter.js";
import { checkOrders, ruleBrain, webhookBrain, type Decision, type TickState } from "./brains.js";
import { aiDecision, type AiDeps } from "./ai.js";
import type { Order } from "./request.js";
import type { PaperBook, StoredAgent } from "./store.js";
import type { HostedContext } from "./deps.js";
import type { ExecutorPort } from "../ports/executors.js";
import { Refusal } from "../errors/index.js";
import { attestationView } from "./attestation.js";
import { holdCodeOf, stockHold } from "./holds.js";
import { stockRegistryAbi, stockTokenAbi } from "../../abis/fixtures.js";
import { stockMarketOpen } from "../../lib/marketHours.js";
import { lc } from "../../lib/address.js";

/** What a live tick uses of sessions and the relay (the same calls an agent makes with its key). */
export type LiveDeps = {
  sessionOf: (
    id: string,
  ) => Promise<{ id: string; wallet: Address; executor: Address; status: string; expires: number } | null>;
  trade: (
    body: Record<string, unknown>,
    who: Who,
  ) => Promise<{
    simulated_ok: boolean;
    tx: { to: Address; data: `0x${string}`; gas: number; chain_id: number };
    fee_bps: number;
    fee_class: string;
    fee_tier: number;
    swap: { amount_in: string; amount_out_min: string; notional_usd: number };
  }>;
  submit: (
    body: Record<string, unknown>,
    key: KeyRecord,
    as?: { path?: "hosted" },
  ) => Promise<{ tx_hash: `0x${string}` }>;
  signTrade: ExecutorPort["signTrade"] | null;
  executorOf: (agentId: string) => Promise<Address | null>;
};

export type TickDeps = HostedContext & {
  live?: LiveDeps;
  /** The AI-model brain's gateway and budgets; absent: AI agents hold AI_OFF. */
  ai?: AiDeps;
  logger?: Logger;
  /** Webhooks on loopback and private addresses: the devnet's stand-in only. */
  allowPrivateWebhooks: boolean;
  webhookTimeoutMs?: number;
  /**
   * The practice board's gate for a paper agent (passed in by services.ts; hosted does not import
   * the league): null when it does not play, a hold, or the season with a fresh book to start.
   */
  practice?: (agent: StoredAgent) => Promise<PracticeGate | null>;
};

/** The league's answer for one tick of a practice entrant (api/league practiceGate). */
export type PracticeGate =
  | { hold: "SEASON_CLOSED" | "LEAGUE_BOOK_PENDING"; message: string }
  | { season: number; reset: PaperBook | null };

type Fill = {
  token_in: string;
  token_out: string;
  amount_in: string;
  amount_out: string;
  amount_usd: number;
  fee_bps: number;
  fee_class: string;
  fee_tier: number;
  fee: string;
  block: number;
};
type Entry = { kind: "decision" | "trade" | "hold" | "error"; code: string | null; body: Record<string, unknown> };

const DAY_MS = 86_400_000;

/** The tick's tokens by symbol (the agent's pairs name config symbols). */
const tokensOf = (config: Config, pairs: string[]) => {
  const out = new Map<string, TokenEntry>();
  for (const p of pairs)
    for (const sym of p.split("/")) if (Object.hasOwn(config.tokens, sym)) out.set(sym, config.tokens[sym]!);
  return out;
};

/** The tick's view of the book: whole units and USD per token at the service's marks. */
async function stateOf(
  d: TickDeps,
  agent: StoredAgent,
  tick: number,
  block: number,
  book: PaperBook,
): Promise<TickState> {
  const tokens = tokensOf(d.config, agent.pairs);
  const marks: Record<string, number | null> = {};
  const view: TickState["book"] = {};
  let value = 0;
  for (const [sym, t] of tokens) {
    const m = await d.market.mark(t.address);
    marks[sym] = m?.usd ?? null;
    const atoms = BigInt(book[lc(t.address)] ?? "0");
    const usd = m ? Number(formatUnits(atoms, t.decimals)) * m.usd : null;
    view[sym] = { amount: formatUnits(atoms, t.decimals), usd };
    value += usd ?? 0;
  }
  return {
    agent: {
      id: agent.id,
      name: agent.name,
      mode: agent.mode,
      pairs: agent.pairs,
      limits: agent.limits,
      interval_s: agent.intervalS,
    },
    tick,
    at: d.clock(),
    block,
    book: view,
    marks,
    value_usd: value,
    last_decision: agent.lastDecision,
  };
}

/**
 * Fills one order on the paper book at the V4Quoter's output for the pair's pool at the tick's
 * block, after the fee a live trade would pay (taken from the input): deterministic, no
 * randomness. Holds (no fill) for a pair without a pool, the day's limit, the position limit, or
 * a book that cannot pay.
 */
async function fillPaper(
  d: TickDeps,
  agent: StoredAgent,
  o: Order,
  s: TickState,
  book: PaperBook,
  filledTodayUsd: number,
): Promise<{ fill: Fill } | { hold: string; message: string }> {
  const tin = d.config.tokens[o.token_in]!;
  const tout = d.config.tokens[o.token_out]!;
  const markIn = s.marks[o.token_in];
  if (!markIn || !s.marks[o.token_out])
    return { hold: "TOKEN_STALE", message: `no mark for ${markIn ? o.token_out : o.token_in}` };
  if (filledTodayUsd + o.amount_usd > agent.limits.max_day_usd)
    return {
      hold: "MAX_DAY",
      message: `$${o.amount_usd} would pass the day's $${agent.limits.max_day_usd} (filled $${filledTodayUsd.toFixed(2)})`,
    };
  const outAfter = (s.book[o.token_out]?.usd ?? 0) + o.amount_usd;
  if (tout.symbol !== "USDG" && outAfter > agent.limits.max_position_usd)
    return {
      hold: "MAX_POSITION",
      message: `${o.token_out} would be worth $${outAfter.toFixed(2)}, over $${agent.limits.max_position_usd}`,
    };
  const pool = d.config.pools.find(
    (p) =>
      (lc(p.currency0) === lc(tin.address) && lc(p.currency1) === lc(tout.address)) ||
      (lc(p.currency0) === lc(tout.address) && lc(p.currency1) === lc(tin.address)),
  );
  if (!pool || lc(pool.hooks) !== lc(zeroAddress))
    return { hold: "PAIR", message: `no hookless pool for ${o.token_in}/${o.token_out}` };
  const held = BigInt(book[lc(tin.address)] ?? "0");
  const wanted = parseUnits((o.amount_usd / markIn).toFixed(tin.decimals), tin.decimals);
  const amountIn = wanted < held ? wanted : held;
  if (Number(formatUnits(amountIn, tin.decimals)) * markIn < 1)
    return { hold: "PAPER_BALANCE", message: `the book holds ${formatUnits(held, tin.decimals)} ${o.token_in}` };
  const major = new Set(majorSymbols(d.config.tokens));
  const feeClass = major.has(o.token_in) && major.has(o.token_out) ? "major" : "other";
  const fee = feeFor({ feeClass, volume30dUsd: 0, shield: agent.terms.shield });
  const feeAtoms = (amountIn * BigInt(fee.bps)) / 10_000n;
  const zeroForOne = lc(pool.currency0) === lc(tin.address);
  const out = await quoteExactInputSingle(
    d.chain,
    d.config.contracts.v4Quoter,
    pool,
    zeroForOne,
    amountIn - feeAtoms,
    BigInt(s.block),
  );
  book[lc(tin.address)] = (held - amountIn).toString();
  book[lc(tout.address)] = (BigInt(book[lc(tout.address)] ?? "0") + out).toString();
  // The tick's later orders see this fill: positions and balances run with the book.
  const filledUsd = Number(formatUnits(amountIn, tin.decimals)) * markIn;
  s.book[o.token_in] = {
    amount: formatUnits(held - amountIn, tin.decimals),
    usd: (s.book[o.token_in]?.usd ?? 0) - filledUsd,
  };
  s.book[o.token_out] = {
    amount: formatUnits(BigInt(book[lc(tout.address)]!), tout.decimals),
    usd: (s.book[o.token_out]?.usd ?? 0) + Number(formatUnits(out, tout.decimals)) * s.marks[o.token_out]!,
  };
  return {
    fill: {
      token_in: o.token_in,
      token_out: o.token_out,
      amount_in: amountIn.toString(),
      amount_out: out.toString(),
      amount_usd: Number(formatUnits(amountIn, tin.decimals)) * markIn,
      fee_bps: fee.bps,
      fee_class: feeClass,
      fee_tier: fee.tier,
      fee: feeAtoms.toString(),
      block: s.block,
    },
  };
}

/** The practice board's gate; a league that cannot answer holds the tick (LEAGUE_UNAVAILABLE), never trades past it. */
async function practiceGateOf(
  d: TickDeps,
  agent: StoredAgent,
): Promise<PracticeGate | { hold: "LEAGUE_UNAVAILABLE"; message: string } | null> {
  if (!d.practice) return null;
  try {
    return await d.practice(agent);
  } catch (err) {
    d.logger?.warn({ err, agent: agent.id }, "league practice gate failed");
    return { hold: "LEAGUE_UNAVAILABLE", message: "the league could not be read; the tick trades nothing" };
  }
}

/** What the agent's brain decides this tick (rule, webhook or the AI model; AI_OFF where the server calls no model). A refusal without a kind is an error row. */
async function decide(
  d: TickDeps,
  agent: StoredAgent,
  s: TickState,
  t: { seq: number; dueMs: number; live: boolean },
): Promise<Decision> {
  if (agent.brain === "rule") return ruleBrain(agent, s);
  if (agent.brain === "webhook")
    return webhookBrain(agent, s, { allowPrivate: d.allowPrivateWebhooks, timeoutMs: d.webhookTimeoutMs });
  if (!d.ai) return { refused: "AI_OFF", message: "the AI-model brain is not running on this server", kind: "hold" };
  return aiDecision(d.ai, agent, s, t);
}

/** Who paid an AI decision (SPEC: decisions paid by the owner's own balance carry pool_hold). */
const paidBy = (x: Decision) => ({
  ...(x.source ? { source: x.source } : {}),
  ...(x.poolHold ? { pool_hold: x.poolHold } : {}),
});

/** USD filled in the last 24 h (trade rows). */
async function filledToday(d: TickDeps, agentId: string): Promise<number> {
  const [r] = await d.store.db.query<{ usd: string | null }>(
    "SELECT sum((body::json->>'amount_usd')::float8)::text AS usd FROM app.hosted_logs WHERE agent_id = $1 AND kind = 'trade' AND created_at >= $2",
    [agentId, d.clock() - DAY_MS],
  );
  return Number(r?.usd ?? 0);
}

/**
 * One tick of a paper agent: its brain decides, the orders are checked, filled on the paper
 * book, and everything (book, decision, logs) commits with the tick's row, unique per agent and
 * due slot: a slot that runs twice (its lease lapsed under a slow or killed instance) commits once. Answers false when the tick had already run or the agent is not
 * active.
 */
export async function runTick(
  d: TickDeps,
  agentId: string,
  seq: number,
  dueMs: number,
  instance: string,
): Promise<boolean> {
  const agent = await d.store.get(agentId);
  if (!agent || agent.status !== "active" || agent.deletedAt !== null) return false;
  if (agent.mode === "live") return runLiveTick(d, agent, seq, dueMs, instance);
  const entries: Entry[] = [];
  const gate = await practiceGateOf(d, agent);
  let book: PaperBook = { ...(agent.paperBook ?? {}) };
  let brainState = agent.brainState ?? {};
  if (gate && "reset" in gate && gate.reset) {
    // A practice entrant's first tick of the season: the book starts again at 10,000 USDG.
    book = { ...gate.reset };
    brainState = { ...brainState, league_season: gate.season, start_usd: null };
  }
  const block = Number(await d.chain.getBlockNumber());
  const s = await stateOf(d, agent, seq, block, book);
  const decision: Decision =
    gate && "hold" in gate
      ? { refused: gate.hold, message: gate.message, kind: "hold" }
      : await decide(d, agent, s, { seq, dueMs, live: false });

  const fills: Fill[] = [];
  if ("refused" in decision) {
    entries.push({
      kind: decision.kind ?? "error",
      code: decision.refused,
      body: { message: decision.message, ...paidBy(decision) },
    });
  } else {
    const bad = checkOrders(agent, decision.orders);
    entries.push({
      kind: "decision",
      code: bad?.code ?? null,
      body: {
        orders: decision.orders,
        note: decision.note ?? null,
        value_usd: s.value_usd,
        ...paidBy(decision),
        ...(bad ? { message: bad.message } : {}),
      },
    });
    if (!bad) {
      let today = await filledToday(d, agent.id);
      for (const o of decision.orders) {
        if (gate && "season" in gate && o.token_in !== "USDG" && o.token_out !== "USDG") {
          entries.push({
            kind: "hold",
            code: "LEAGUE_PAIR",
            body: {
              message: `the practice board counts orders against USDG only (${o.token_in}/${o.token_out})`,
              order: o,
            },
          });
          continue;
        }
        const r = await fillPaper(d, agent, o, s, book, today);
        if ("hold" in r) entries.push({ kind: "hold", code: r.hold, body: { message: r.message, order: o } });
        else {
          fills.push(r.fill);
          today += r.fill.amount_usd;
          entries.push({ kind: "trade", code: null, body: { ...r.fill, mode: "paper" } });
        }
      }
    }
  }
  const after = await stateOf(d, agent, seq, block, book);
  const start = Number(brainState.start_usd ?? s.value_usd);
  const lastDecision = {
    tick: seq,
    at: s.at,
    block,
    ...("refused" in decision
      ? { code: decision.refused, message: decision.message }
      : { orders: decision.orders, note: decision.note ?? null }),
    fills: fills.length,
  };
  const now = d.clock();
  return d.store.db.tx(async (tx) => {
    // Only while this instance still holds the tick's lease: a tick that outlived its timeout (the
    // schedule moved on) or whose lease another instance took commits nothing.
    const held = await tx.query(
      "SELECT 1 FROM app.hosted_schedule WHERE agent_id = $1 AND tick_seq = $2 AND lease_owner = $3 FOR UPDATE",
      [agent.id, seq, instance],
    );
    if (!held.length) return false;
    const first = await tx.query(
      "INSERT INTO app.hosted_ticks (agent_id, tick_seq, due_ms, ran_at_ms, instance) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING RETURNING tick_seq",
      [agent.id, seq, dueMs, now, instance],
    );
    if (!first.length) return false;
    await tx.query(
      "UPDATE app.hosted_agents SET paper_book = $2, brain_state = $3, last_decision = $4, last_trade = COALESCE($5, last_trade), updated_at = $6 WHERE id = $1",
      [
        agent.id,
        JSON.stringify(book),
        JSON.stringify({ ...brainState, start_usd: start, value_usd: after.value_usd }),
        JSON.stringify(lastDecision),
        fills.length ? JSON.stringify({ ...fills.at(-1), at: now }) : null,
        now,
      ],
    );
    for (const e of entries) await d.store.log(agent.id, seq, e.kind, e.code, e.body, now, tx);
    return true;
  });
}

/** The owner's key as the service acts for it (session/trade, submit, revoke): the agent's creating key and wallet. */
export const ownerKey = (a: { keyId: number; wallet: Address }): KeyRecord => ({
  keyId: a.keyId,
  wallet: a.wallet,
  account: { id: 0, name: "hosted" },
  expiresAt: Number.MAX_SAFE_INTEGER,
});

/** Claims the tick's slot before anything moves on chain: a live slot that runs twice trades once (a lost one trades never, the safe side). */
async function claimSlot(d: TickDeps, agentId: string, seq: number, dueMs: number, instance: string): Promise<boolean> {
  return d.store.db.tx(async (tx) => {
    const held = await tx.query(
      "SELECT 1 FROM app.hosted_schedule WHERE agent_id = $1 AND tick_seq = $2 AND lease_owner = $3 FOR UPDATE",
      [agentId, seq, instance],
    );
    if (!held.length) return false;
    return (
      (
        await tx.query(
          "INSERT INTO app.hosted_ticks (agent_id, tick_seq, due_ms, ran_at_ms, instance) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING RETURNING 1",
          [agentId, seq, dueMs, d.clock(), instance],
        )
      ).length === 1
    );
  });
}

/** The session wallet's balances of the agent's tokens, as a paper book (atoms by address); read together (one multicall). */
async function walletBook(d: TickDeps, agent: StoredAgent, wallet: Address): Promise<PaperBook> {
  const tokens = [...tokensOf(d.config, agent.pairs).values()];
  const atoms = await Promise.all(
    tokens.map((t) =>
      t.address === zeroAddress
        ? d.chain.getBalance({ address: wallet })
        : d.chain.readContract({ address: t.address, abi: erc20Abi, functionName: "balanceOf", args: [wallet] }),
    ),
  );
  return Object.fromEntries(tokens.map((t, i) => [lc(t.address), atoms[i]!.toString()]));
}

/**
 * A live tick: the slot is claimed first; the brain sees the session wallet's balances; each
 * order goes through session/trade (the co-signer's checks) with the owner's key, is signed by the
 * executor at the signing service (a redeem to the DelegationManager only) and relayed by submit,
 * byte for byte as built. Any refusal is a hold with its code; nothing else can move the wallet's
 * funds than what the session's root and leaves allow.
 */
async function runLiveTick(
  d: TickDeps,
  agent: StoredAgent,
  seq: number,
  dueMs: number,
  instance: string,
): Promise<boolean> {
  if (!(await claimSlot(d, agent.id, seq, dueMs, instance))) return false;
  // A tick that outlives its timeout loses its lease when the scheduler moves on, and stillOurs
  // stops it before its next order: it cannot keep trading beside the next tick.
  await liveTickBody(d, agent, seq, dueMs, instance);
  return true;
}

/** The issuer's switches for the order's stock tokens and the session wallet, read together; null when any read fails. */
async function stockSwitches(
  d: TickDeps,
  tokens: Address[],
  wallet: Address,
): Promise<{ paused: boolean; walletBlocked: boolean } | null> {
  const registry = d.config.contracts.stockRegistry;
  try {
    const [registryPaused, walletBlocked, ...tokenPaused] = await Promise.all([
      d.chain.readContract({ address: registry, abi: stockRegistryAbi, functionName: "paused" }),
      d.chain.readContract({ address: registry, abi: stockRegistryAbi, functionName: "isBlocked", args: [wallet] }),
      ...tokens.map((t) => d.chain.readContract({ address: t, abi: stockTokenAbi, functionName: "paused" })),
    ]);
    return { paused: registryPaused || tokenPaused.some(Boolean), walletBlocked };
  } catch {
    return null;
  }
}

/** Still this tick's to act on: its lease held and the agent active (stop, pause or rotate end it between orders). */
async function stillOurs(d: TickDeps, agentId: string, seq: number, instance: string): Promise<boolean> {
  const [r] = await d.store.db.query<{ ok: boolean }>(
    "SELECT (s.tick_seq = $2 AND s.lease_owner = $3 AND a.status = 'active' AND a.deleted_at IS NULL) AS ok FROM app.hosted_schedule s JOIN app.hosted_agents a ON a.id = s.agent_id WHERE s.agent_id = $1",
    [agentId, seq, instance],
  );
  return !!r?.ok;
}

async function liveTickBody(
  d: TickDeps,
  agent: StoredAgent,
  seq: number,
  dueMs: number,
  instance: string,
): Promise<void> {
  const now = d.clock();
  const hold = async (code: string, message: string, extra: Record<string, unknown> = {}) =>
    d.store.log(agent.id, seq, "hold", code, { message, ...extra }, now);
  if (d.config.hostedKillSwitch || !d.config.hostedLive || !d.live || !d.live.signTrade)
    return void (await hold("LIVE_OFF", "live trading by hosted agents is off on this server"));
  const session = agent.sessionId ? await d.live.sessionOf(agent.sessionId) : null;
  const executor = await d.live.executorOf(agent.id);
  if (
    !session ||
    session.status !== "active" ||
    session.expires * 1000 <= now ||
    !executor ||
    lc(session.executor) !== lc(executor)
  )
    return void (await hold("LIVE_OFF", "the attached session is not active for the current executor"));
  const block = Number(await d.chain.getBlockNumber());
  const s = await stateOf(d, agent, seq, block, await walletBook(d, agent, session.wallet));
  const decision = await decide(d, agent, s, { seq, dueMs, live: true });
  if ("refused" in decision) {
    await d.store.log(
      agent.id,
      seq,
      decision.kind ?? "error",
      decision.refused,
      { message: decision.message, ...paidBy(decision) },
      now,
    );
    return;
  }
  const bad = checkOrders(agent, decision.orders);
  await d.store.log(
    agent.id,
    seq,
    "decision",
    bad?.code ?? null,
    {
      orders: decision.orders,
      note: decision.note ?? null,
      value_usd: s.value_usd,
      ...paidBy(decision),
      ...(bad ? { message: bad.message } : {}),
    },
    now,
  );
  if (bad) return;
  const key = ownerKey(agent);
  let today = await filledToday(d, agent.id);
  for (const o of decision.orders) {
    if (!(await stillOurs(d, agent.id, seq, instance))) {
      await hold(
        "LIVE_OFF",
        "the agent was stopped, paused or its tick timed out: the rest of this tick's orders are dropped",
        { order: o },
      );
      break;
    }
    if (today + o.amount_usd > agent.limits.max_day_usd) {
      await hold("MAX_DAY", `$${o.amount_usd} would pass the day's $${agent.limits.max_day_usd}`, { order: o });
      continue;
    }
    const outAfter = (s.book[o.token_out]?.usd ?? 0) + o.amount_usd;
    if (d.config.tokens[o.token_out]?.symbol !== "USDG" && outAfter > agent.limits.max_position_usd) {
      await hold(
        "MAX_POSITION",
        `${o.token_out} would be worth $${outAfter.toFixed(2)}, over $${agent.limits.max_position_usd}`,
        { order: o },
      );
      continue;
    }
    const stocks = [o.token_in, o.token_out]
      .filter((sym) => d.config.tokens[sym]?.kind === "stock")
      .map((sym) => d.config.tokens[sym]!.address);
    const stock = stocks.length > 0;
    if (stock) {
      const why = stockHold({
        open: stockMarketOpen(Math.floor(now / 1000)),
        read: await stockSwitches(d, stocks, session.wallet),
      });
      if (why) {
        await hold(why.code, why.message, { order: o });
        continue;
      }
      const att = await attestationView(d.store, agent, Math.floor(now / 1000));
      if (!att?.valid) {
        await hold(
          "STOCK_ATTESTATION",
          `stock tokens need the owner's valid attestation for this session (${att?.why_not ?? "none"})`,
          { order: o },
        );
        continue;
      }
    }
    try {
      const t = await d.live.trade(
        {
          session_id: session.id,
          token_in: o.token_in,
          token_out: o.token_out,
          notional_usd: o.amount_usd,
          ...(stock ? { owner_attests_non_us: true } : {}),
        },
        { key, clientAddr: "hosted" },
      );
      // A redeem the simulation says reverts is not sent: the executor's gas would pay for nothing.
      if (!t.simulated_ok) {
        await hold("SIMULATION_FAILED", "the co-signed redeem does not simulate; nothing sent", { order: o });
        continue;
      }
      const [nonce, fees] = await Promise.all([
        d.chain.getTransactionCount({ address: executor, blockTag: "pending" }),
        d.chain.estimateFeesPerGas(),
      ]);
      const raw = await d.live.signTrade(executor, {
        to: t.tx.to,
        data: t.tx.data,
        chainId: t.tx.chain_id,
        nonce,
        gas: BigInt(t.tx.gas),
        maxFeePerGas: fees.maxFeePerGas * 2n,
        maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
        feeBps: t.fee_bps,
      });
      const sent = await d.live.submit({ raw_tx: raw }, key, { path: "hosted" });
      today += t.swap.notional_usd;
      s.book[o.token_out] = {
        amount: s.book[o.token_out]?.amount ?? "0",
        usd: (s.book[o.token_out]?.usd ?? 0) + t.swap.notional_usd,
      };
      s.book[o.token_in] = {
        amount: s.book[o.token_in]?.amount ?? "0",
        usd: (s.book[o.token_in]?.usd ?? 0) - t.swap.notional_usd,
      };
      await d.store.log(
        agent.id,
        seq,
        "trade",
        null,
        {
          mode: "live",
          token_in: o.token_in,
          token_out: o.token_out,
          amount_in: t.swap.amount_in,
          amount_out_min: t.swap.amount_out_min,
          amount_usd: t.swap.notional_usd,
          fee_bps: t.fee_bps,
          fee_class: t.fee_class,
          fee_tier: t.fee_tier,
          tx_hash: sent.tx_hash,
          session_id: session.id,
        },
        now,
      );
      await d.store.db.query("UPDATE app.hosted_agents SET last_trade = $2, updated_at = $3 WHERE id = $1", [
        agent.id,
        JSON.stringify({ token_in: o.token_in, token_out: o.token_out, tx_hash: sent.tx_hash, at: now }),
        now,
      ]);
    } catch (err) {
      if (!(err instanceof Refusal)) throw err;
      await hold(holdCodeOf(err.code), err.message, { order: o, refusal: err.code });
    }
  }
  await d.store.db.query("UPDATE app.hosted_agents SET last_decision = $2, brain_state = $3 WHERE id = $1", [
    agent.id,
    JSON.stringify({ tick: seq, at: now, block, orders: decision.orders, note: decision.note ?? null }),
    JSON.stringify({
      ...(agent.brainState ?? {}),
      start_usd: Number(agent.brainState?.start_usd ?? s.value_usd),
      value_usd: s.value_usd,
    }),
  ]);
}
