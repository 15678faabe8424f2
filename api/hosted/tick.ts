import type { Logger } from "pino";
import { formatUnits, parseUnits, zeroAddress, type Address } from "viem";
import type { Config, TokenEntry } from "../../lib/config.js";
import { erc20Abi } from "../../abis/erc20.js";
import type { KeyRecord } from "../auth/index.js";
import {
  feeClassOf,
  recordRisks,
  riskVerdict,
  type Risk,
  type Sides,
  type SubmitParameters,
  type TokenInfo,
  type Who,
} from "../trading/index.js";
import type { SessionTradeParameters } from "../sessions/index.js";
import { feeFor, type FeeClass } from "../../lib/fees.js";
import { fillAtQuote, paperPool } from "../../lib/paperFill.js";
import { poolId } from "../../lib/v4.js";
import { checkOrders, ruleBrain, webhookBrain, type Decision, type TickState } from "./brains.js";
import { aiDecision, aiNotLive, type AiDeps } from "./ai.js";
import type { Order } from "./request.js";
import type { PaperBook, StoredAgent, Terms, TickSlot } from "./store.js";
import type { HostedContext } from "./deps.js";
import type { ExecutorPort } from "../ports/executors.js";
import { Refusal } from "../errors/index.js";
import { attestationView } from "./attestation.js";
import { holdCodeOf, refusalHold, stockHold } from "./holds.js";
import { executorGas } from "./executor.js";
import { stockRegistryAbi, stockTokenAbi } from "../../abis/fixtures.js";
import { stockMarketOpen } from "../../lib/marketHours.js";
import { lc } from "../../lib/address.js";

/** What a live tick uses of sessions and the relay (the same calls an agent makes with its key). */
export type LiveDeps = {
  sessionOf: (
    id: string,
  ) => Promise<{ id: string; wallet: Address; executor: Address; status: string; expires: number } | null>;
  /** Sessions' trade with its typed input (the same call a key's request makes once the edge parsed it). */
  trade: (
    q: SessionTradeParameters,
    who: Who,
  ) => Promise<{
    simulated_ok: boolean;
    tx: { to: Address; data: `0x${string}`; gas: number; chain_id: number };
    fee_bps: number;
    fee_class: string;
    fee_tier: number;
    shield: boolean;
    swap: { amount_in: string; amount_out_min: string; notional_usd: number };
  }>;
  submit: (q: SubmitParameters, key: KeyRecord, as?: { path?: "hosted" }) => Promise<{ tx_hash: `0x${string}` }>;
  signTrade: ExecutorPort["signTrade"] | null;
  executorOf: (agentId: string) => Promise<Address | null>;
};

export type TickDeps = HostedContext & {
  /** Both sides of an order as a key's trade reads them (the token registry's records and their risks). */
  sides: Pick<Sides, "pair">;
  /** A wallet's 30-day volume in USD, as trading's volume tier counts it (its major fee rate). */
  volume30d: (wallet: Address) => Promise<number>;
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
  shield: boolean;
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
 * The limit an order of either tick meets before it is sized: the day's (USD filled in the last
 * 24 h, `day`, plus this order), then the position's (the token bought would be worth more than
 * max_position_usd at the tick's book; USDG has none). null: the limits let it go.
 */
export function orderHolds(
  agent: Pick<StoredAgent, "limits">,
  order: Order,
  book: TickState["book"],
  day: number,
): { code: "MAX_DAY" | "MAX_POSITION"; message: string } | null {
  const { max_day_usd, max_position_usd } = agent.limits;
  if (day + order.amount_usd > max_day_usd)
    return {
      code: "MAX_DAY",
      message: `$${order.amount_usd} would pass the day's $${max_day_usd} (filled $${day.toFixed(2)})`,
    };
  const outAfter = (book[order.token_out]?.usd ?? 0) + order.amount_usd;
  if (order.token_out !== "USDG" && outAfter > max_position_usd)
    return {
      code: "MAX_POSITION",
      message: `${order.token_out} would be worth $${outAfter.toFixed(2)}, over $${max_position_usd}`,
    };
  return null;
}

/**
 * Why an order does not go: SPEC's hold code, and what its log row carries beside the message: the
 * refusal it stands for when one was raised, the co-signer's failed rules, the executor's top-up.
 */
type OrderHold = { code: string; message: string; refusal?: string; [field: string]: unknown };

/**
 * Why the agent's own risk terms hold an order whose tokens carry `risks`: TOKEN_BLOCKED for a
 * code its policies.block_risks names, else RISKS_MISSING for a severe one it does not accept
 * (riskVerdict: the reading a key's trade gets from the policy). null: its terms let it go.
 */
export function riskHold(risks: Risk[], terms: Terms): Required<OrderHold> | null {
  const v = riskVerdict(risks, {
    acceptRisks: terms.accept_risks,
    shieldPolicies: null,
    blockRisks: terms.policies.block_risks,
  });
  const r = v.blocked ?? v.notAccepted;
  return r ? { code: holdCodeOf(r.code), message: r.message, refusal: r.code } : null;
}

/**
 * The fee of an order under the agent's terms, as live sets it (lib/fees feeFor): the class's
 * rate (major at the owner wallet's 30-day volume tier, as its session trades are charged), plus
 * Shield's only when the terms ask for Shield.
 */
export function termsFee(feeClass: FeeClass, terms: Pick<Terms, "shield">, volume30dUsd: number) {
  const fee = feeFor({ feeClass, volume30dUsd, shield: terms.shield });
  return { fee_bps: fee.bps, fee_class: feeClass, fee_tier: fee.tier, shield: terms.shield };
}

/**
 * The order's sides as a key's trade reads them (sides.pair: the registry's records), held by
 * the agent's risk terms (riskHold); a side that cannot be read holds with its refusal's code.
 */
async function orderSides(
  d: TickDeps,
  agent: StoredAgent,
  o: Order,
): Promise<{ tin: TokenInfo; tout: TokenInfo } | { hold: OrderHold }> {
  try {
    const s = await d.sides.pair(o, { key: ownerKey(agent), clientAddr: "hosted" });
    const why = riskHold(recordRisks(s.tin, s.tout), agent.terms);
    return why ? { hold: why } : s;
  } catch (err) {
    if (!(err instanceof Refusal)) throw err;
    return { hold: refusalHold(err) };
  }
}

/**
 * Fills one order on the paper book at the V4Quoter's output for the pair's pool at the tick's
 * block, after the fee a live trade would pay (termsFee, taken from the input): deterministic, no
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
): Promise<{ fill: Fill } | { hold: OrderHold }> {
  const tin = d.config.tokens[o.token_in]!;
  const tout = d.config.tokens[o.token_out]!;
  const markIn = s.marks[o.token_in];
  if (!markIn || !s.marks[o.token_out])
    return { hold: { code: "TOKEN_STALE", message: `no mark for ${markIn ? o.token_out : o.token_in}` } };
  const limit = orderHolds(agent, o, s.book, filledTodayUsd);
  if (limit) return { hold: limit };
  const sides = await orderSides(d, agent, o);
  if ("hold" in sides) return sides;
  const pool = paperPool(d.config, tin, tout);
  if (!pool) return { hold: { code: "PAIR", message: `no hookless pool for ${o.token_in}/${o.token_out}` } };
  const held = BigInt(book[lc(tin.address)] ?? "0");
  const wanted = parseUnits((o.amount_usd / markIn).toFixed(tin.decimals), tin.decimals);
  const amountIn = wanted < held ? wanted : held;
  if (Number(formatUnits(amountIn, tin.decimals)) * markIn < 1)
    return {
      hold: { code: "PAPER_BALANCE", message: `the book holds ${formatUnits(held, tin.decimals)} ${o.token_in}` },
    };
  const feeClass = feeClassOf(sides.tin, sides.tout);
  // The owner's tier as trading reads it for the session wallet (the owner's wallet): one volume, no second count.
  const fee = termsFee(feeClass, agent.terms, feeClass === "major" ? await d.volume30d(agent.wallet) : 0);
  // The pool from the indexer's book, used where it is at the tick's block: no round trip (issue 31 point 2).
  const pools = (await d.market.book?.([poolId(pool)]))?.book ?? null;
  const { amountOut: out, feeAtoms } = await fillAtQuote(
    d.chain,
    d.config,
    { pool, tin, tout, amountIn, feeBps: fee.fee_bps, block: BigInt(s.block) },
    book,
    pools,
  );
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
      ...fee,
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

/**
 * What the agent's brain decides this tick (rule, webhook or the AI model; AI_OFF where the server
 * calls no model). A refusal without a kind is an error row.
 */
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
    `SELECT sum((body::json->>'amount_usd')::float8)::text AS usd FROM app.hosted_logs
     WHERE agent_id = $1 AND kind = 'trade' AND created_at >= $2`,
    [agentId, d.clock() - DAY_MS],
  );
  return Number(r?.usd ?? 0);
}

/**
 * The decision's log entry, the same for both ticks: a refusal (a hold, or an error row), or the
 * orders with checkOrders' verdict. `orders`: those that go on, null when none may (refused, or an
 * answer that breaks a rule).
 */
export function decisionEntry(
  agent: StoredAgent,
  decision: Decision,
  valueUsd: number,
): { entry: Entry; orders: Order[] | null } {
  if ("refused" in decision)
    return {
      entry: {
        kind: decision.kind ?? "error",
        code: decision.refused,
        body: { message: decision.message, ...paidBy(decision) },
      },
      orders: null,
    };
  const bad = checkOrders(agent, decision.orders);
  const body = {
    orders: decision.orders,
    note: decision.note ?? null,
    value_usd: valueUsd,
    ...paidBy(decision),
    ...(bad ? { message: bad.message } : {}),
  };
  return { entry: { kind: "decision", code: bad?.code ?? null, body }, orders: bad ? null : decision.orders };
}

/** A tick's slot as the scheduler hands it over: the store's TickSlot before the agent is named. */
type Slot = Omit<TickSlot, "agentId">;

/**
 * One tick of a paper agent: its brain decides, the orders are checked, filled on the paper
 * book, and everything (book, decision, logs) commits with the tick's row, unique per agent and
 * due slot: a slot that runs twice (its lease lapsed under a slow or killed instance) commits
 * once. Answers false when the tick had already run or the agent is not active.
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
  const t = { seq, dueMs, instance };
  return agent.mode === "live" ? runLiveTick(d, agent, t) : runPaperTick(d, agent, t);
}

async function runPaperTick(d: TickDeps, agent: StoredAgent, t: Slot): Promise<boolean> {
  const gate = await practiceGateOf(d, agent);
  let book: PaperBook = { ...(agent.paperBook ?? {}) };
  let brainState = agent.brainState ?? {};
  if (gate && "reset" in gate && gate.reset) {
    // A practice entrant's first tick of the season: the book starts again at 10,000 USDG.
    book = { ...gate.reset };
    brainState = { ...brainState, league_season: gate.season, start_usd: null };
  }
  // The indexer's checkpoint when fresh: the tick's block is its block, and fills can be computed from its book.
  const fresh = (await d.market.book?.([]))?.book.block;
  const block = fresh ?? Number(await d.chain.getBlockNumber());
  const s = await stateOf(d, agent, t.seq, block, book);
  const decision: Decision =
    gate && "hold" in gate
      ? { refused: gate.hold, message: gate.message, kind: "hold" }
      : await decide(d, agent, s, { seq: t.seq, dueMs: t.dueMs, live: false });
  const { entry, orders } = decisionEntry(agent, decision, s.value_usd);
  const practice = !!gate && "season" in gate;
  const run = orders?.length ? await paperOrders(d, agent, orders, { s, book, practice }) : { entries: [], fills: [] };
  const after = await stateOf(d, agent, t.seq, block, book);
  return commitPaper(d, agent, t, {
    book,
    brainState: { ...brainState, start_usd: Number(brainState.start_usd ?? s.value_usd), value_usd: after.value_usd },
    lastDecision: {
      tick: t.seq,
      at: s.at,
      block,
      ...("refused" in decision
        ? { code: decision.refused, message: decision.message }
        : { orders: decision.orders, note: decision.note ?? null }),
      fills: run.fills.length,
    },
    fills: run.fills,
    entries: [entry, ...run.entries],
  });
}

/** The paper tick's orders in turn, each seeing the fills before it: their log entries and fills. */
async function paperOrders(
  d: TickDeps,
  agent: StoredAgent,
  orders: Order[],
  p: { s: TickState; book: PaperBook; practice: boolean },
): Promise<{ entries: Entry[]; fills: Fill[] }> {
  const entries: Entry[] = [];
  const fills: Fill[] = [];
  let today = await filledToday(d, agent.id);
  for (const o of orders) {
    if (p.practice && o.token_in !== "USDG" && o.token_out !== "USDG") {
      const message = `the practice board counts orders against USDG only (${o.token_in}/${o.token_out})`;
      entries.push({ kind: "hold", code: "LEAGUE_PAIR", body: { message, order: o } });
      continue;
    }
    const r = await fillPaper(d, agent, o, p.s, p.book, today);
    if ("hold" in r) entries.push(holdEntry(r.hold, o));
    else {
      fills.push(r.fill);
      today += r.fill.amount_usd;
      entries.push({ kind: "trade", code: null, body: { ...r.fill, mode: "paper" } });
    }
  }
  return { entries, fills };
}

/** A held order's log entry: SPEC's code, and the order beside what the hold carries (OrderHold). */
const holdEntry = ({ code, message, ...more }: OrderHold, o: Order): Entry => ({
  kind: "hold",
  code,
  body: { message, order: o, ...more },
});

/** The paper tick's book, state, decision and logs, committed with its slot or not at all (store.commitPaper). */
function commitPaper(
  d: TickDeps,
  agent: StoredAgent,
  t: Slot,
  c: {
    book: PaperBook;
    brainState: Record<string, unknown>;
    lastDecision: Record<string, unknown>;
    fills: Fill[];
    entries: Entry[];
  },
): Promise<boolean> {
  const now = d.clock();
  const lastTrade = c.fills.length ? { ...c.fills.at(-1), at: now } : null;
  return d.store.commitPaper({ agentId: agent.id, ...t }, { ...c, lastTrade }, now);
}

/** The owner's key as the service acts for it (session/trade, submit, revoke): the agent's creating key and wallet. */
export const ownerKey = (a: { keyId: number; wallet: Address }): KeyRecord => ({
  keyId: a.keyId,
  wallet: a.wallet,
  account: { id: 0, name: "hosted" },
  expiresAt: Number.MAX_SAFE_INTEGER,
});

/**
 * The session wallet's balances of the agent's tokens, as a paper book (atoms by address); read
 * together (one multicall).
 */
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
 * A live tick: the slot is claimed first (takeSlot, before anything moves on chain: a live slot
 * that runs twice trades once, a lost one never, the safe side); the brain sees the session
 * wallet's balances; each order goes through session/trade (the co-signer's checks) with the
 * owner's key, is signed by the executor at the signing service (a redeem to the DelegationManager
 * only) and relayed by submit, byte for byte as built. Any refusal is a hold with its code;
 * nothing else can move the wallet's funds than what the session's root and leaves allow.
 */
async function runLiveTick(d: TickDeps, agent: StoredAgent, t: Slot): Promise<boolean> {
  if (!(await d.store.takeSlot({ agentId: agent.id, ...t }, d.clock()))) return false;
  // A tick that outlives its timeout loses its lease when the scheduler moves on, and stillOurs
  // stops it before its next order: it cannot keep trading beside the next tick.
  await liveTickBody(d, agent, t);
  return true;
}

/**
 * The issuer's switches for the order's stock tokens and the session wallet, read together; null when
 * any read fails.
 */
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
    `SELECT (s.tick_seq = $2 AND s.lease_owner = $3 AND a.status = 'active' AND a.deleted_at IS NULL) AS ok
     FROM app.hosted_schedule s JOIN app.hosted_agents a ON a.id = s.agent_id WHERE s.agent_id = $1`,
    [agentId, seq, instance],
  );
  return !!r?.ok;
}

/** What a live tick's orders go through: the live calls, its session and executor, the owner's key. */
type LiveRun = {
  live: LiveDeps & { signTrade: NonNullable<LiveDeps["signTrade"]> };
  session: { id: string; wallet: Address };
  executor: Address;
  key: KeyRecord;
  seq: number;
  now: number;
};
type Hold = (code: string, message: string, extra?: Record<string, unknown>) => Promise<void>;

/** The live tick's calls and its active session for the agent's current executor, or why it holds (LIVE_OFF). */
async function liveReady(d: TickDeps, agent: StoredAgent, seq: number, now: number): Promise<LiveRun | string> {
  const live = d.live;
  if (d.config.hostedKillSwitch || !d.config.hostedLive || !live || !live.signTrade)
    return "live trading by hosted agents is off on this server";
  const session = agent.sessionId ? await live.sessionOf(agent.sessionId) : null;
  const executor = await live.executorOf(agent.id);
  if (
    !session ||
    session.status !== "active" ||
    session.expires * 1000 <= now ||
    !executor ||
    lc(session.executor) !== lc(executor)
  )
    return "the attached session is not active for the current executor";
  return { live: { ...live, signTrade: live.signTrade }, session, executor, key: ownerKey(agent), seq, now };
}

async function liveTickBody(d: TickDeps, agent: StoredAgent, t: Slot): Promise<void> {
  const now = d.clock();
  const hold: Hold = async (code, message, extra = {}) =>
    d.store.log(agent.id, t.seq, "hold", code, { message, ...extra }, now);
  const run = await liveReady(d, agent, t.seq, now);
  if (typeof run === "string") {
    if (agent.brain !== "partner_llm") return void (await hold("LIVE_OFF", run));
    const off = await aiNotLive(d.store.db, agent, { seq: t.seq, nowMs: now }, run);
    return void (await hold(off.refused, off.message));
  }
  const block = Number(await d.chain.getBlockNumber());
  const s = await stateOf(d, agent, t.seq, block, await walletBook(d, agent, run.session.wallet));
  const decision = await decide(d, agent, s, { seq: t.seq, dueMs: t.dueMs, live: true });
  const { entry, orders } = decisionEntry(agent, decision, s.value_usd);
  await d.store.log(agent.id, t.seq, entry.kind, entry.code, entry.body, now);
  if (!orders || "refused" in decision) return;
  let today = await filledToday(d, agent.id);
  for (const o of orders) {
    if (!(await stillOurs(d, agent.id, t.seq, t.instance))) {
      const why = "the agent was stopped, paused or its tick timed out: the rest of this tick's orders are dropped";
      await hold("LIVE_OFF", why, { order: o });
      break;
    }
    const why: OrderHold | null =
      orderHolds(agent, o, s.book, today) ??
      (await stockHoldOf(d, agent, o, run)) ??
      (await riskHoldOf(d, agent, o)) ??
      (await gasHoldOf(d, run));
    if (why) {
      const e = holdEntry(why, o);
      await d.store.log(agent.id, t.seq, e.kind, e.code, e.body, now);
    } else today += await liveOrder(d, agent, o, s, run, hold);
  }
  await d.store.db.query("UPDATE app.hosted_agents SET last_decision = $2, brain_state = $3 WHERE id = $1", [
    agent.id,
    JSON.stringify({ tick: t.seq, at: now, block, orders: decision.orders, note: decision.note ?? null }),
    JSON.stringify({
      ...(agent.brainState ?? {}),
      start_usd: Number(agent.brainState?.start_usd ?? s.value_usd),
      value_usd: s.value_usd,
    }),
  ]);
}

/** The agent's risk terms on a live order's tokens, before session/trade builds it (orderSides); null: it may go. */
async function riskHoldOf(d: TickDeps, agent: StoredAgent, o: Order): Promise<OrderHold | null> {
  const r = await orderSides(d, agent, o);
  return "hold" in r ? r.hold : null;
}

/** The order's stock tokens (config addresses). */
const stocksOf = (d: TickDeps, o: Order) =>
  [o.token_in, o.token_out]
    .filter((sym) => d.config.tokens[sym]?.kind === "stock")
    .map((sym) => d.config.tokens[sym]!.address);

/** Why an order touching a stock token holds now (stockHold, then the owner's attestation); null: it may go. */
async function stockHoldOf(
  d: TickDeps,
  agent: StoredAgent,
  o: Order,
  run: LiveRun,
): Promise<{ code: string; message: string } | null> {
  const stocks = stocksOf(d, o);
  if (!stocks.length) return null;
  const nowS = Math.floor(run.now / 1000);
  const why = stockHold({ open: stockMarketOpen(nowS), read: await stockSwitches(d, stocks, run.session.wallet) });
  if (why) return why;
  const att = await attestationView(d.store, agent, nowS);
  if (att?.valid) return null;
  return {
    code: "STOCK_ATTESTATION",
    message: `stock tokens need the owner's valid attestation for this session (${att?.why_not ?? "none"})`,
  };
}

/**
 * The executor's gas before a live order is co-signed (executorGas, the executor view's own
 * reading): an executor that cannot pay one more redeem at today's gas price holds the order
 * INSUFFICIENT_FUNDS with the view's `top_up` (to about twenty redeems), and nothing is co-signed
 * (every co-signed trade counts toward the session's day) or relayed. Under the view's min balance
 * but able to pay, it trades and `watch.executor_gas` says to top up: holding at twenty would stop
 * an agent that can still trade. SPEC's hold list has no gas code; INSUFFICIENT_FUNDS is SPEC's
 * word for a sender that cannot pay its gas. A chain that does not answer holds too.
 */
async function gasHoldOf(d: TickDeps, run: LiveRun): Promise<OrderHold | null> {
  let gas: Awaited<ReturnType<typeof executorGas>>;
  try {
    gas = await executorGas(d, run.executor);
  } catch (err) {
    if (!(err instanceof Refusal)) throw err;
    return refusalHold(err);
  }
  const { view } = gas;
  if (BigInt(view.balance_wei) >= gas.oneRedeemWei) return null;
  return {
    code: "INSUFFICIENT_FUNDS",
    message:
      `the executor ${run.executor} holds ${view.balance_wei} wei, under the ${gas.oneRedeemWei} wei ` +
      "one redeem costs now: top it up; nothing was co-signed or sent",
    executor: run.executor,
    balance_wei: view.balance_wei,
    min_balance_wei: view.min_balance_wei,
    top_up: view.top_up,
  };
}

/**
 * One live order: co-signed by session/trade, signed by the executor, relayed; logged as a trade
 * and the agent's last trade. A refusal on the way is a hold. Answers the USD it traded (0 held).
 */
async function liveOrder(
  d: TickDeps,
  agent: StoredAgent,
  o: Order,
  s: TickState,
  run: LiveRun,
  hold: Hold,
): Promise<number> {
  try {
    const t = await run.live.trade(
      {
        session_id: run.session.id,
        token_in: o.token_in,
        token_out: o.token_out,
        notional_usd: o.amount_usd,
        // The agent's Shield, never the session's alone: a session binding other terms holds (SHIELD_MISMATCH).
        shield: agent.terms.shield,
        ...(stocksOf(d, o).length ? { owner_attests_non_us: true } : {}),
      },
      { key: run.key, clientAddr: "hosted" },
    );
    // A redeem the simulation says reverts is not sent: the executor's gas would pay for nothing.
    if (!t.simulated_ok) {
      await hold("SIMULATION_FAILED", "the co-signed redeem does not simulate; nothing sent", { order: o });
      return 0;
    }
    const sent = await signAndSend(d, t, run);
    const usd = t.swap.notional_usd;
    s.book[o.token_out] = { amount: s.book[o.token_out]?.amount ?? "0", usd: (s.book[o.token_out]?.usd ?? 0) + usd };
    s.book[o.token_in] = { amount: s.book[o.token_in]?.amount ?? "0", usd: (s.book[o.token_in]?.usd ?? 0) - usd };
    await logLiveTrade(d, agent, o, t, sent.tx_hash, run);
    return usd;
  } catch (err) {
    if (!(err instanceof Refusal)) throw err;
    const { code, message, ...more } = refusalHold(err);
    await hold(code, message, { order: o, ...more });
    return 0;
  }
}

type Built = Awaited<ReturnType<LiveDeps["trade"]>>;

/** The co-signed redeem signed by the executor (its pending nonce, twice the fee estimate) and relayed by submit. */
async function signAndSend(d: TickDeps, t: Built, run: LiveRun): Promise<{ tx_hash: `0x${string}` }> {
  const [nonce, fees] = await Promise.all([
    d.chain.getTransactionCount({ address: run.executor, blockTag: "pending" }),
    d.chain.estimateFeesPerGas(),
  ]);
  const raw = await run.live.signTrade(run.executor, {
    to: t.tx.to,
    data: t.tx.data,
    chainId: t.tx.chain_id,
    nonce,
    gas: BigInt(t.tx.gas),
    maxFeePerGas: fees.maxFeePerGas * 2n,
    maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    feeBps: t.fee_bps,
  });
  return run.live.submit({ raw_tx: raw }, run.key, { path: "hosted" });
}

/** A live trade's log row and the agent's last trade. */
async function logLiveTrade(
  d: TickDeps,
  agent: StoredAgent,
  o: Order,
  t: Built,
  txHash: `0x${string}`,
  run: LiveRun,
): Promise<void> {
  await d.store.log(
    agent.id,
    run.seq,
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
      shield: t.shield,
      tx_hash: txHash,
      session_id: run.session.id,
    },
    run.now,
  );
  await d.store.db.query("UPDATE app.hosted_agents SET last_trade = $2, updated_at = $3 WHERE id = $1", [
    agent.id,
    JSON.stringify({ token_in: o.token_in, token_out: o.token_out, tx_hash: txHash, at: run.now }),
    run.now,
  ]);
}
