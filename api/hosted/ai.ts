import type { Address } from "viem";
import type { AiConfig, AiModel } from "../../lib/config.js";
import { sealer } from "../../lib/seal.js";
import {
  costUsd,
  estimatePromptTokens,
  worstCaseUsd,
  type CompletionResult,
  type GatewayPort,
} from "../ports/gateway.js";
import type { Db } from "../ports/store/db.js";
import { checkOrders, type Decision, type TickState } from "./brains.js";
import { aiAnswer, aiParams, type AiParams } from "./request.js";
import { recordHold, reserve, settle } from "./spend.js";
import type { StoredAgent } from "./store.js";

/** Completion tokens one decision may use: the worst case reserved before each call. */
export const MAX_COMPLETION_TOKENS = 600;
/** A tick this late acts on a stale view: no call (AI_LATE). */
export const AI_LATE_MS = 120_000;

export const AI_TEMPLATES = [
  {
    id: "rebalance",
    title: "Rebalance to even weights",
    interval_s: 3_600,
    strategy:
      "Keep the book near equal USD weights across the pair's tokens. " +
      "Trade only when a token drifts more than 5% from its weight; otherwise answer no orders.",
  },
  {
    id: "trend",
    title: "Follow the trend",
    interval_s: 1_800,
    strategy:
      "Compare each mark with the last decision's view. " +
      "Buy a token that rose since the last tick with a small part of the USDG held; sell one that fell. " +
      "Never hold more than half the book in one token.",
  },
  {
    id: "dca",
    title: "Dollar-cost average",
    interval_s: 86_400,
    strategy: "Each tick, buy the first token of the first pair with the smallest allowed order, while USDG lasts.",
  },
] as const;

/** Gateway failures logged as holds (the gateway's account, not the answer): everything else is an error. */
const HOLD_FAILURES = new Set(["PARTNER_BALANCE", "PARTNER_BUSY", "PARTNER_RATE"]);

export type AiDeps = {
  ai: AiConfig;
  db: Db;
  clock: () => number;
  /** The gateway client for a key: the service's, or an owner's own. */
  gatewayFor: (apiKey: string) => GatewayPort;
  /** When the owner's account was made (the pool's trial), or null. */
  ownerSince: (wallet: Address) => Promise<number | null>;
};

const SYSTEM = [
  "You are the decision step of an automated trading agent. " +
    "Each call gives you the agent's state as JSON and its owner's strategy.",
  "Answer with exactly one JSON object: " +
    '{"orders": [{"token_in": SYMBOL, "token_out": SYMBOL, "amount_usd": NUMBER}], "note": SHORT_REASON}.',
  "Use only the symbols of the agent's pairs, only pairs it lists, amounts from 1 to its max_trade_usd, " +
    "at most max_orders orders. No orders is a valid answer.",
].join("\n");

/** The strict JSON schema the gateway is asked to answer under (structured output). */
const ANSWER_SCHEMA = {
  type: "object",
  additionalProperties: false,
  required: ["orders", "note"],
  properties: {
    orders: {
      type: "array",
      items: {
        type: "object",
        additionalProperties: false,
        required: ["token_in", "token_out", "amount_usd"],
        properties: { token_in: { type: "string" }, token_out: { type: "string" }, amount_usd: { type: "number" } },
      },
    },
    note: { type: "string" },
  },
} as const;

export const aiParamsOf = (a: Pick<StoredAgent, "params">): AiParams => aiParams.parse(a.params);
const strategyOf = (p: AiParams) => p.strategy ?? AI_TEMPLATES.find((t) => t.id === p.template)?.strategy ?? "";

/** What the model reads: the tick's state and the owner's strategy; never a key, an address or a secret. */
export function promptOf(agent: StoredAgent, p: AiParams, s: TickState): string {
  return JSON.stringify({
    strategy: strategyOf(p),
    max_orders: p.max_orders,
    pairs: agent.pairs,
    limits: agent.limits,
    book: s.book,
    marks: s.marks,
    value_usd: s.value_usd,
    last_decision: s.last_decision,
    tick: s.tick,
    at: s.at,
  });
}

/**
 * Reads a model's answer strictly: AI_MALFORMED (not one JSON object), AI_SCHEMA (other fields or
 * types than asked), AI_TOO_MANY (more orders than max_orders), then the pairs and per-trade limit
 * (AI_TOKEN, AI_PAIR, AI_SIZE). The answer's text is data: it is parsed, never run or rendered.
 */
export function readAnswer(agent: StoredAgent, p: AiParams, text: string): Decision {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { refused: "AI_MALFORMED", message: "the model's answer is not one JSON object", kind: "error" };
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed))
    return { refused: "AI_MALFORMED", message: "the model's answer is not one JSON object", kind: "error" };
  const r = aiAnswer.safeParse(parsed);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    return {
      refused: "AI_SCHEMA",
      message: `the model's answer is not exactly {orders, note} (${issue.path.join(".") || "answer"}: ${issue.code})`,
      kind: "error",
    };
  }
  if (r.data.orders.length > p.max_orders)
    return {
      refused: "AI_TOO_MANY",
      message: `${r.data.orders.length} orders; at most ${p.max_orders}`,
      kind: "error",
    };
  const bad = checkOrders(agent, r.data.orders);
  if (bad) return { refused: bad.code, message: bad.message, kind: "error" };
  return { orders: r.data.orders, note: r.data.note };
}

/** The cost of an answered or failed call, and where the number comes from (SPEC cost_source). */
export function costOf(
  res: CompletionResult,
  model: AiModel,
  worstUsd: number,
): { usd: number; source: "usage" | "header" | "bound"; prompt: number; completion: number } {
  if (res.ok) {
    const prompt = res.usage.prompt_tokens;
    const completion = res.usage.completion_tokens;
    const listed = costUsd(res.usage, model.price);
    // A gateway's header is its bill; it is taken when it is at least the usage at our price table
    // (a header under that is not trusted to lower what the budgets count).
    if (res.costHeaderUsd !== null && Number.isFinite(res.costHeaderUsd) && res.costHeaderUsd >= listed)
      return { usd: res.costHeaderUsd, source: "header", prompt, completion };
    return { usd: listed, source: res.usageEstimated ? "bound" : "usage", prompt, completion };
  }
  // A call that may have run unseen counts its worst case; one refused before running costs nothing.
  if (res.mayHaveRun)
    return {
      usd: worstUsd,
      source: "bound",
      prompt: res.usage?.prompt_tokens ?? 0,
      completion: res.usage?.completion_tokens ?? 0,
    };
  return { usd: 0, source: "usage", prompt: 0, completion: 0 };
}

/**
 * One AI decision: checks before any call (AI_OFF, MODEL_NOT_ALLOWED, AI_LATE, COST_BOUND), then
 * the worst case reserved against every budget that applies, the call, its cost settled, and the
 * answer read strictly. Every outcome is a spend row; a hold or refusal trades nothing.
 */
export async function aiDecision(
  d: AiDeps,
  agent: StoredAgent,
  s: TickState,
  t: { seq: number; dueMs: number; live: boolean },
): Promise<Decision> {
  const p = aiParamsOf(agent);
  const nowMs = d.clock();
  const hold = async (code: string, message: string, poolHold: string | null = null): Promise<Decision> => {
    await recordHold(
      d.db,
      { id: agent.id, wallet: agent.wallet, model: p.model },
      { nowMs, tickSeq: t.seq, code, poolHold },
    );
    return { refused: code, message, kind: "hold", ...(poolHold ? { poolHold } : {}) };
  };
  if (!d.ai.gatewayUrl || !d.ai.gatewayKey) return hold("AI_OFF", "this server calls no AI model");
  const model = d.ai.models.find((m) => m.id === p.model);
  if (!model) return hold("MODEL_NOT_ALLOWED", `${p.model} is no longer offered by this server`);
  if (nowMs - t.dueMs > AI_LATE_MS)
    return hold("AI_LATE", `the tick is ${Math.round((nowMs - t.dueMs) / 1000)} s late: no call on a stale view`);
  const user = promptOf(agent, p, s);
  const worstUsd = worstCaseUsd(estimatePromptTokens(SYSTEM + user), MAX_COMPLETION_TOKENS, model.price);
  if (worstUsd > p.budget_usd_day)
    return hold(
      "COST_BOUND",
      `one call may cost $${worstUsd.toFixed(6)}, more than the day's budget of $${p.budget_usd_day}`,
    );
  const r = await reserve(
    d.db,
    d.ai,
    {
      id: agent.id,
      wallet: agent.wallet,
      intervalS: agent.intervalS,
      live: t.live,
      model: p.model,
      funding: p.funding,
      fallbackOwn: p.fallback_own,
      budgetUsdDay: p.budget_usd_day,
    },
    { ownerSinceMs: await d.ownerSince(agent.wallet), nowMs, worstUsd, tickSeq: t.seq },
  );
  if ("hold" in r) return hold(r.hold, r.message, r.poolHold);
  return callModel(d, agent, { p, model, user, worstUsd, serviceKey: d.ai.gatewayKey }, r);
}

/**
 * A live AI agent's tick that cannot trade live (live trading off or killed on this server, or no
 * active session for its current executor) asks no model: its orders could not go, and the call
 * would be paid for nothing. It holds AI_NOT_LIVE (SPEC "AI agent holds (tick with no call)"),
 * kept in the spend rows at no cost like every AI hold; other brains hold LIVE_OFF there.
 */
export async function aiNotLive(
  db: Db,
  agent: StoredAgent,
  t: { seq: number; nowMs: number },
  why: string,
): Promise<Extract<Decision, { refused: string }>> {
  const model = aiParamsOf(agent).model;
  await recordHold(
    db,
    { id: agent.id, wallet: agent.wallet, model },
    { nowMs: t.nowMs, tickSeq: t.seq, code: "AI_NOT_LIVE" },
  );
  return { refused: "AI_NOT_LIVE", message: `no model call: this live agent cannot trade now (${why})`, kind: "hold" };
}

type Reserved = Extract<Awaited<ReturnType<typeof reserve>>, { rowId: unknown }>;

/**
 * The reserved call: the key it is paid with (the service's, or the owner's own opened), the
 * model's answer read strictly, its cost settled on the reserved row.
 */
async function callModel(
  d: AiDeps,
  agent: StoredAgent,
  c: { p: AiParams; model: AiModel; user: string; worstUsd: number; serviceKey: string },
  r: Reserved,
): Promise<Decision> {
  let apiKey: string;
  try {
    apiKey = r.source === "service" ? c.serviceKey : openOwnKey(d.ai, agent.wallet, r.sealedKey!);
  } catch {
    await settle(d.db, r.rowId, {
      status: "hold",
      code: "CONNECT_ERROR",
      promptTokens: 0,
      completionTokens: 0,
      costUsd: 0,
      costSource: "usage",
      ms: 0,
      poolHold: r.poolHold,
    });
    return {
      refused: "CONNECT_ERROR",
      message: "the owner's own gateway key could not be opened; connect it again",
      kind: "hold",
    };
  }
  const res = await d.gatewayFor(apiKey).complete({
    model: c.model.id,
    system: SYSTEM,
    user: c.user,
    schemaName: "orders",
    schema: ANSWER_SCHEMA as unknown as Record<string, unknown>,
    maxCompletionTokens: MAX_COMPLETION_TOKENS,
    timeoutMs: d.ai.callTimeoutMs,
  });
  const cost = costOf(res, c.model, c.worstUsd);
  const decision: Decision = res.ok
    ? readAnswer(agent, c.p, res.text)
    : { refused: res.code, message: res.message, kind: HOLD_FAILURES.has(res.code) ? "hold" : "error" };
  const status = res.ok ? ("refused" in decision ? "invalid" : "ok") : "error";
  await settle(d.db, r.rowId, {
    status,
    code: "refused" in decision ? decision.refused : null,
    promptTokens: cost.prompt,
    completionTokens: cost.completion,
    costUsd: cost.usd,
    costSource: cost.source,
    ms: res.ms,
    poolHold: r.poolHold,
  });
  return { ...decision, ...(r.poolHold ? { poolHold: r.poolHold } : {}), source: r.source } as Decision;
}

const OWN_KEYS = "pit-ai-own-keys";
const openOwnKey = (ai: AiConfig, wallet: Address, sealed: string) =>
  sealer(ai.ownKeysSecret ?? "", OWN_KEYS)
    .open(sealed, wallet.toLowerCase())
    .toString("utf8");

/** Seals an owner's own gateway key under AI_OWN_KEYS_SECRET, bound to the wallet. */
export function sealOwnKey(ai: AiConfig, wallet: Address, apiKey: string): string {
  if (!ai.ownKeysSecret) throw new Error("no AI_OWN_KEYS_SECRET");
  return sealer(ai.ownKeysSecret, OWN_KEYS).seal(Buffer.from(apiKey, "utf8"), wallet.toLowerCase());
}
