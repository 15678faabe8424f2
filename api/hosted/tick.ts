import type { Logger } from "pino";
import { formatUnits, parseUnits, zeroAddress, type Address, type PublicClient } from "viem";
import type { Config, TokenEntry } from "../../lib/config.js";
import { feeFor, majorSymbols } from "../../lib/fees.js";
import { quoteExactInputSingle } from "../../lib/quoter.js";
import type { Market } from "../market/index.js";
import { ruleBrain, webhookBrain, type Decision, type TickState } from "./brains.js";
import type { Order } from "./request.js";
import type { HostedStore, PaperBook, StoredAgent } from "./store.js";

export type TickDeps = {
  config: Config;
  chain: PublicClient;
  market: Pick<Market, "mark">;
  store: HostedStore;
  clock: () => number;
  logger?: Logger;
  /** Webhooks on loopback and private addresses: the devnet's stand-in only. */
  allowPrivateWebhooks: boolean;
  webhookTimeoutMs?: number;
};

type Fill = { token_in: string; token_out: string; amount_in: string; amount_out: string; amount_usd: number; fee_bps: number; fee_class: string; fee_tier: number; fee: string; block: number };
type Entry = { kind: "decision" | "trade" | "hold" | "error"; code: string | null; body: Record<string, unknown> };

const lc = (a: string) => a.toLowerCase();
const DAY_MS = 86_400_000;

/** The tick's tokens by symbol (the agent's pairs name config symbols). */
const tokensOf = (config: Config, pairs: string[]) => {
  const out = new Map<string, TokenEntry>();
  for (const p of pairs) for (const sym of p.split("/")) if (Object.hasOwn(config.tokens, sym)) out.set(sym, config.tokens[sym]!);
  return out;
};

/** Orders checked against the agent's pairs and per-trade limit: the first that breaks a rule refuses the whole answer. */
export function checkOrders(agent: StoredAgent, orders: Order[]): { code: string; message: string } | null {
  const tokens = new Set(agent.pairs.flatMap((p) => p.split("/")));
  for (const o of orders) {
    if (!tokens.has(o.token_in) || !tokens.has(o.token_out)) return { code: "AI_TOKEN", message: `${tokens.has(o.token_in) ? o.token_out : o.token_in} is not in the agent's pairs` };
    if (!agent.pairs.includes(`${o.token_in}/${o.token_out}`) && !agent.pairs.includes(`${o.token_out}/${o.token_in}`)) return { code: "AI_PAIR", message: `${o.token_in}/${o.token_out} is not one of the agent's pairs` };
    if (o.amount_usd < 1 || o.amount_usd > agent.limits.max_trade_usd) return { code: "AI_SIZE", message: `$${o.amount_usd} is outside 1 to ${agent.limits.max_trade_usd}` };
  }
  return null;
}

/** The tick's view of the book: whole units and USD per token at the service's marks. */
async function stateOf(d: TickDeps, agent: StoredAgent, tick: number, block: number, book: PaperBook): Promise<TickState> {
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
    agent: { id: agent.id, name: agent.name, mode: agent.mode, pairs: agent.pairs, limits: agent.limits, interval_s: agent.intervalS },
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
async function fillPaper(d: TickDeps, agent: StoredAgent, o: Order, s: TickState, book: PaperBook, filledTodayUsd: number): Promise<{ fill: Fill } | { hold: string; message: string }> {
  const tin = d.config.tokens[o.token_in]!;
  const tout = d.config.tokens[o.token_out]!;
  const markIn = s.marks[o.token_in];
  if (!markIn || !s.marks[o.token_out]) return { hold: "TOKEN_STALE", message: `no mark for ${markIn ? o.token_out : o.token_in}` };
  if (filledTodayUsd + o.amount_usd > agent.limits.max_day_usd) return { hold: "MAX_DAY", message: `$${o.amount_usd} would pass the day's $${agent.limits.max_day_usd} (filled $${filledTodayUsd.toFixed(2)})` };
  const outAfter = (s.book[o.token_out]?.usd ?? 0) + o.amount_usd;
  if (tout.symbol !== "USDG" && outAfter > agent.limits.max_position_usd) return { hold: "MAX_POSITION", message: `${o.token_out} would be worth $${outAfter.toFixed(2)}, over $${agent.limits.max_position_usd}` };
  const pool = d.config.pools.find((p) => (lc(p.currency0) === lc(tin.address) && lc(p.currency1) === lc(tout.address)) || (lc(p.currency0) === lc(tout.address) && lc(p.currency1) === lc(tin.address)));
  if (!pool || lc(pool.hooks) !== lc(zeroAddress)) return { hold: "PAIR", message: `no hookless pool for ${o.token_in}/${o.token_out}` };
  const held = BigInt(book[lc(tin.address)] ?? "0");
  const wanted = parseUnits((o.amount_usd / markIn).toFixed(tin.decimals), tin.decimals);
  const amountIn = wanted < held ? wanted : held;
  if (Number(formatUnits(amountIn, tin.decimals)) * markIn < 1) return { hold: "PAPER_BALANCE", message: `the book holds ${formatUnits(held, tin.decimals)} ${o.token_in}` };
  const major = new Set(majorSymbols(d.config.tokens));
  const feeClass = major.has(o.token_in) && major.has(o.token_out) ? "major" : "other";
  const fee = feeFor({ feeClass, volume30dUsd: 0, shield: agent.terms.shield });
  const feeAtoms = (amountIn * BigInt(fee.bps)) / 10_000n;
  const zeroForOne = lc(pool.currency0) === lc(tin.address);
  const out = await quoteExactInputSingle(d.chain, d.config.contracts.v4Quoter, pool, zeroForOne, amountIn - feeAtoms, BigInt(s.block));
  book[lc(tin.address)] = (held - amountIn).toString();
  book[lc(tout.address)] = (BigInt(book[lc(tout.address)] ?? "0") + out).toString();
  // The tick's later orders see this fill: positions and balances run with the book.
  const filledUsd = Number(formatUnits(amountIn, tin.decimals)) * markIn;
  s.book[o.token_in] = { amount: formatUnits(held - amountIn, tin.decimals), usd: (s.book[o.token_in]?.usd ?? 0) - filledUsd };
  s.book[o.token_out] = { amount: formatUnits(BigInt(book[lc(tout.address)]!), tout.decimals), usd: (s.book[o.token_out]?.usd ?? 0) + Number(formatUnits(out, tout.decimals)) * s.marks[o.token_out]! };
  return {
    fill: { token_in: o.token_in, token_out: o.token_out, amount_in: amountIn.toString(), amount_out: out.toString(), amount_usd: Number(formatUnits(amountIn, tin.decimals)) * markIn, fee_bps: fee.bps, fee_class: feeClass, fee_tier: fee.tier, fee: feeAtoms.toString(), block: s.block },
  };
}

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
export async function runTick(d: TickDeps, agentId: string, seq: number, dueMs: number, instance: string): Promise<boolean> {
  const agent = await d.store.get(agentId);
  if (!agent || agent.status !== "active" || agent.deletedAt !== null) return false;
  const entries: Entry[] = [];
  const book: PaperBook = { ...(agent.paperBook ?? {}) };
  const block = Number(await d.chain.getBlockNumber());
  const s = await stateOf(d, agent, seq, block, book);
  let decision: Decision;
  if (agent.mode !== "paper") decision = { refused: "LIVE_OFF", message: "live trading by hosted agents is not running on this server" };
  else if (agent.brain === "rule") decision = ruleBrain(agent, s);
  else if (agent.brain === "webhook") decision = await webhookBrain(agent, s, { allowPrivate: d.allowPrivateWebhooks, timeoutMs: d.webhookTimeoutMs });
  else decision = { refused: "AI_OFF", message: "the AI-model brain is not running on this server" };

  const fills: Fill[] = [];
  if ("refused" in decision) {
    entries.push({ kind: decision.refused === "LIVE_OFF" || decision.refused === "AI_OFF" ? "hold" : "error", code: decision.refused, body: { message: decision.message } });
  } else {
    const bad = checkOrders(agent, decision.orders);
    entries.push({ kind: "decision", code: bad?.code ?? null, body: { orders: decision.orders, note: decision.note ?? null, value_usd: s.value_usd, ...(bad ? { message: bad.message } : {}) } });
    if (!bad) {
      let today = await filledToday(d, agent.id);
      for (const o of decision.orders) {
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
  const start = Number(agent.brainState?.start_usd ?? s.value_usd);
  const lastDecision = { tick: seq, at: s.at, block, ...(("refused" in decision) ? { code: decision.refused, message: decision.message } : { orders: decision.orders, note: decision.note ?? null }), fills: fills.length };
  const now = d.clock();
  return d.store.db.tx(async (tx) => {
    // Only while this instance still holds the tick's lease: a tick that outlived its timeout (the
    // schedule moved on) or whose lease another instance took commits nothing.
    const held = await tx.query("SELECT 1 FROM app.hosted_schedule WHERE agent_id = $1 AND tick_seq = $2 AND lease_owner = $3 FOR UPDATE", [agent.id, seq, instance]);
    if (!held.length) return false;
    const first = await tx.query("INSERT INTO app.hosted_ticks (agent_id, tick_seq, due_ms, ran_at_ms, instance) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING RETURNING tick_seq", [agent.id, seq, dueMs, now, instance]);
    if (!first.length) return false;
    await tx.query(
      "UPDATE app.hosted_agents SET paper_book = $2, brain_state = $3, last_decision = $4, last_trade = COALESCE($5, last_trade), updated_at = $6 WHERE id = $1",
      [agent.id, JSON.stringify(book), JSON.stringify({ ...(agent.brainState ?? {}), start_usd: start, value_usd: after.value_usd }), JSON.stringify(lastDecision), fills.length ? JSON.stringify({ ...fills.at(-1), at: now }) : null, now],
    );
    for (const e of entries) await d.store.log(agent.id, seq, e.kind, e.code, e.body, now, tx);
    return true;
  });
}
