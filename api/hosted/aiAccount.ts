import { z } from "zod";
import { Refusal } from "../errors/index.js";
import { estimatePromptTokens, worstCaseUsd } from "../ports/gateway.js";
import { AI_TEMPLATES, aiParamsOf, MAX_COMPLETION_TOKENS, sealOwnKey } from "./ai.js";
import { owned, type HostedDeps, type Owner } from "./agents.js";
import { AI_LIMITS, type SpendParameters } from "./request.js";
import type { StoredAgent } from "./store.js";
import { isLive } from "./store.js";
import { ownerSince, poolDay, poolFor, spendRows, todayOf } from "./spend.js";

/**
 * A typical decision's prompt (state of a two-pair book and a short strategy), for GET hosted/ai's
 * per-call estimate.
 */
const TYPICAL_PROMPT_CHARS = 2_400;
const DAY_MS = 86_400_000;

export const ownConnect = z
  .object({
    api_key: z
      .string()
      .min(8)
      .max(300)
      .regex(/^[\x21-\x7e]+$/, "printable ASCII, no spaces"),
    day_cap_usd: z.number().finite().positive().max(100).default(5),
  })
  .strict();
/** POST hosted/ai/own's body as the edge parses it. */
export type OwnConnectParameters = z.infer<typeof ownConnect>;

async function ownRow(d: HostedDeps, wallet: string) {
  const [r] = await d.store.db.query<{
    sealed_key: string | null;
    sub_hint: string | null;
    day_cap_usd: number;
    connected_at: string | null;
    disconnected_at: string | null;
  }>("SELECT * FROM app.ai_own WHERE wallet = $1", [wallet.toLowerCase()]);
  return r ?? null;
}

const ownerSinceMs = (d: HostedDeps, wallet: string) => ownerSince(d.store.db, wallet);

/** GET hosted/ai: what this server's AI brain offers, and this owner's funding. */
export async function aiInfo(d: HostedDeps, who: Owner) {
  const wallet = who.wallet;
  const ai = d.config.ai;
  const enabled = ai.gatewayUrl !== null && ai.gatewayKey !== null && ai.models.length > 0;
  const now = d.clock();
  const own = await ownRow(d, wallet);
  const pool = await poolDay(d.store.db, ai, now);
  const since = await ownerSinceMs(d, wallet);
  const trialUntil = since === null ? null : Math.floor((since + ai.pool.trialDays * DAY_MS) / 1000);
  const ownToday = await todayOf(d.store.db, { wallet, source: "own" }, now);
  const serviceToday = await todayOf(d.store.db, { wallet, source: "service" }, now);
  const poolState: "off" | "spent" | "open" =
    !enabled || ai.pool.usdDay <= 0 ? "off" : pool.left_usd <= 0 ? "spent" : "open";
  return {
    enabled,
    min_interval_s: AI_LIMITS.minIntervalS,
    max_orders: AI_LIMITS.maxOrders,
    strategy_max: AI_LIMITS.strategyMax,
    budget_default_usd: AI_LIMITS.budgetDefaultUsd,
    budget_max_usd: AI_LIMITS.budgetMaxUsd,
    templates: AI_TEMPLATES,
    models: ai.models.map((m) => ({
      id: m.id,
      price: m.price,
      available: enabled,
      // Beside SPEC's fields: true when no model is behind it (the devnet's stand-in gateway).
      stand_in: ai.standIn,
      estimate: {
        max_completion_tokens: MAX_COMPLETION_TOKENS,
        worst_case_usd_per_call: worstCaseUsd(
          estimatePromptTokens("x".repeat(TYPICAL_PROMPT_CHARS)),
          MAX_COMPLETION_TOKENS,
          m.price,
        ),
      },
    })),
    // The service adds nothing to a model's price.
    app_fee_pct: 0,
    funding: {
      own: {
        available: enabled && ai.ownKeysSecret !== null,
        connected: !!own?.sealed_key,
        sub_hint: own?.sealed_key ? own.sub_hint : null,
        connected_at: own?.sealed_key ? Number(own.connected_at) : null,
        day_cap_usd: own?.day_cap_usd ?? null,
        today_usd: ownToday.usd,
      },
      service: {
        available: enabled && ai.pool.usdDay > 0,
        pool_state: poolState,
        pool_usd: ai.pool.usdDay,
        pool_left_usd: pool.left_usd,
        basis: "utc_day" as const,
        owners_funded: pool.owners_funded,
        agents_funded: pool.agents_funded,
        models: ai.pool.models ?? ai.models.map((m) => m.id),
        min_interval_s: ai.pool.minIntervalS,
        owner_share_max_usd: ai.pool.ownerShareMaxUsd,
        live_share_usd: ai.pool.liveShareUsd,
        trial_share_usd: ai.pool.trialShareUsd,
        trial_days: ai.pool.trialDays,
        trial_until: trialUntil,
        trial_open: trialUntil !== null && now / 1000 < trialUntil,
        today_usd: serviceToday.usd,
      },
    },
  };
}

/** GET hosted/<id>/spend: the agent's AI budget, today's spend, the pool's view, and its rows. */
/** The owner's AI agent (its deleted ones too) that GET hosted/<id>/spend reads: NOT_AI before the query is read. */
export async function ownedAi(d: Pick<HostedDeps, "store">, id: string, who: Owner): Promise<StoredAgent> {
  const a = await owned(d, id, who, { deleted: true });
  if (a.brain !== "partner_llm")
    throw new Refusal("NOT_AI", `hosted agent ${id} has a ${a.brain} brain, not an AI model`);
  return a;
}

export async function agentSpend(d: HostedDeps, a: StoredAgent, q: SpendParameters) {
  const { limit, before } = q;
  const p = aiParamsOf(a);
  const now = d.clock();
  const today = await todayOf(d.store.db, { agentId: a.id }, now);
  const page = await spendRows(d.store.db, a.id, limit, before ?? null);
  const last =
    before === undefined ? (page.rows[0] ?? null) : ((await spendRows(d.store.db, a.id, 1, null)).rows[0] ?? null);
  const live = isLive(a);
  const pool =
    p.funding === "service"
      ? await poolFor(
          d.store.db,
          d.config.ai,
          { id: a.id, wallet: a.wallet, intervalS: a.intervalS, live, model: p.model },
          await ownerSinceMs(d, a.wallet),
          now,
        )
      : null;
  return {
    id: a.id,
    ai: {
      model: p.model,
      funding: p.funding,
      fallback_own: p.fallback_own,
      budget_usd_day: p.budget_usd_day,
      budget_left_usd: Math.max(0, Math.round((p.budget_usd_day - today.usd) * 1e6) / 1e6),
      today,
      last,
      pool,
    },
    rows: page.rows,
    next_before: page.next_before,
  };
}

/**
 * POST hosted/ai/own: the owner's own gateway key (sealed at rest, never returned or logged; the
 * answer shows its last four characters) and a day cap for calls it pays. Not in SPEC's list: it is
 * how `funding.own.connected` becomes true.
 */
export async function connectOwn(d: HostedDeps, q: OwnConnectParameters, who: Owner) {
  takesOwnKeys(d);
  const wallet = who.wallet;
  const now = Math.floor(d.clock() / 1000);
  await d.store.db.query(
    `INSERT INTO app.ai_own (wallet, sealed_key, sub_hint, day_cap_usd, connected_at, disconnected_at)
     VALUES ($1, $2, $3, $4, $5, NULL) ON CONFLICT (wallet)
     DO UPDATE SET sealed_key = $2, sub_hint = $3, day_cap_usd = $4, connected_at = $5, disconnected_at = NULL`,
    [wallet.toLowerCase(), sealOwnKey(d.config.ai, wallet, q.api_key), `…${q.api_key.slice(-4)}`, q.day_cap_usd, now],
  );
  return (await aiInfo(d, who)).funding.own;
}

/** HOSTED_UNAVAILABLE where this server keeps no owners' own gateway keys (before ai/own's body is read). */
export function takesOwnKeys(d: Pick<HostedDeps, "config">): void {
  if (!d.config.ai.gatewayUrl || !d.config.ai.ownKeysSecret)
    throw new Refusal("HOSTED_UNAVAILABLE", "this server takes no owners' own gateway keys", {}, { retryAfterS: 3600 });
}

/** POST hosted/ai/own/disconnect: the key is erased; own-funded ticks hold DISCONNECTED. */
export async function disconnectOwn(d: HostedDeps, who: Owner) {
  const wallet = who.wallet;
  const r = await d.store.db.query(
    `UPDATE app.ai_own SET sealed_key = NULL, sub_hint = NULL, disconnected_at = $2
     WHERE wallet = $1 AND sealed_key IS NOT NULL RETURNING wallet`,
    [wallet.toLowerCase(), Math.floor(d.clock() / 1000)],
  );
  return { ...(await aiInfo(d, who)).funding.own, disconnected: r.length > 0 };
}
