import type { Address } from "viem";
import type { AiConfig } from "../../lib/config.js";
import type { Db } from "../ports/store/db.js";
import { aiCalls, aiSpendUsd } from "../../lib/metrics.js";

/**
 * The AI brain's spend ledger (SPEC "AI spend row"): amounts in nano-USD integers so sums are
 * exact. A call's worst case is written before the call (status `pending`) and settled from its
 * answer; a process that dies mid-call leaves the worst case counted, the safe side. Every budget
 * (the agent's day budget, the owner's pool share, the pool, the owner's own day cap) is checked
 * and reserved under one owner lock (and the pool's lock first for pool-paid calls), so concurrent
 * ticks of one owner, on any instance, never spend past a cap.
 */
export const NANO = 1_000_000_000;
/** Worst cases round up, costs to the nearest nano-USD. */
export const nanoUp = (usd: number) => Math.ceil(usd * NANO - 1e-6);
export const usdOf = (nusd: number | string | bigint) => Number(nusd) / NANO;
export const dayOf = (ms: number) => Math.floor(ms / 86_400_000);
const DAY_MS = 86_400_000;

export type Source = "service" | "own";
export type SpendStatus = "pending" | "ok" | "invalid" | "error" | "hold";

/** Who pays for a tick's call, and why the pool did not when the owner pays. */
export type Reservation =
  | { rowId: number; source: Source; poolHold: string | null; sealedKey: string | null }
  | { hold: string; message: string; poolHold: string | null };

export type PoolView = {
  eligible: boolean;
  kind: "live" | "trial" | null;
  why_not: string | null;
  share_usd: number;
  owner_used_usd: number;
  share_left_usd: number;
  pool_usd: number;
  pool_left_usd: number;
};

/** The pool's advisory lock (two-key form: this, 0): every pool-paid reservation of the fleet takes it. */
export const LOCK_POOL = 4663006;
const LOCK_OWNER = 4663005;

type AgentForSpend = {
  id: string;
  wallet: Address;
  intervalS: number;
  live: boolean;
  model: string;
  funding: Source;
  fallbackOwn: boolean;
  budgetUsdDay: number;
};

/** The day totals a row counts in: the pool and the owner's share (service), or the owner's own cap; and its agent. */
const scopesOf = (r: { source: Source | null; wallet: string; agentId: string; poolKind?: string | null }) =>
  r.source === "service"
    ? [
        "pool",
        `svc:${r.wallet.toLowerCase()}`,
        `agent:${r.agentId}`,
        `svcagent:${r.wallet.toLowerCase()}:${r.agentId}`,
        ...(r.poolKind === "trial" ? ["trial"] : []),
      ]
    : r.source === "own"
      ? [`own:${r.wallet.toLowerCase()}`, `agent:${r.agentId}`]
      : [];

async function totals(db: Pick<Db, "query">, day: number, scopes: string[]): Promise<Map<string, number>> {
  const rows = await db.query<{ scope: string; nusd: string }>(
    "SELECT scope, nusd::text AS nusd FROM app.ai_totals WHERE day = $1 AND scope = ANY($2)",
    [day, scopes],
  );
  return new Map(rows.map((r) => [r.scope, Number(r.nusd)]));
}

async function addTotals(db: Pick<Db, "query">, day: number, scopes: string[], nusd: number): Promise<void> {
  if (!scopes.length || nusd === 0) return;
  await db.query(
    `INSERT INTO app.ai_totals (day, scope, nusd) SELECT $1, s, $3 FROM unnest($2::text[]) AS s
     ON CONFLICT (day, scope) DO UPDATE SET nusd = app.ai_totals.nusd + EXCLUDED.nusd`,
    [day, scopes, nusd],
  );
}

/** The pool's state for this agent today: whether it would pay, the owner's share and what is left. */
export async function poolFor(
  db: Pick<Db, "query">,
  ai: AiConfig,
  a: Pick<AgentForSpend, "id" | "wallet" | "intervalS" | "live" | "model">,
  ownerSinceMs: number | null,
  nowMs: number,
  read?: Map<string, number>,
): Promise<PoolView> {
  const p = ai.pool;
  const day = dayOf(nowMs);
  const t = read ?? (await totals(db, day, ["pool", `svc:${a.wallet.toLowerCase()}`]));
  const poolUsed = t.get("pool") ?? 0;
  const ownerUsed = t.get(`svc:${a.wallet.toLowerCase()}`) ?? 0;
  const trialOpen = ownerSinceMs !== null && nowMs < ownerSinceMs + p.trialDays * DAY_MS;
  const kind = a.live ? "live" : trialOpen ? "trial" : null;
  const share = Math.min(p.ownerShareMaxUsd, kind === "live" ? p.liveShareUsd : kind === "trial" ? p.trialShareUsd : 0);
  let why: string | null = null;
  if (!ai.gatewayUrl || p.usdDay <= 0) why = "AI_POOL_OFF";
  else if (p.models && !p.models.includes(a.model)) why = "AI_POOL_MODEL";
  else if (a.intervalS < p.minIntervalS) why = "AI_POOL_INTERVAL";
  else if (!kind) why = p.liveShareUsd > 0 ? "POOL_NOT_LIVE" : "AI_NOT_ELIGIBLE";
  else if (share <= 0) why = "AI_NOT_ELIGIBLE";
  else if (poolUsed >= nanoUp(p.usdDay)) why = "AI_POOL_SPENT";
  else if (ownerUsed >= nanoUp(share)) why = "AI_SHARE_SPENT";
  else {
    // The owner's pool-paid agents today: a range of the totals' key.
    const prefix = `svcagent:${a.wallet.toLowerCase()}:`;
    const [funded] = await db.query<{ n: string }>(
      "SELECT count(*)::text AS n FROM app.ai_totals WHERE day = $1 AND scope >= $2 AND scope < $3 AND scope <> $4",
      [day, prefix, `${prefix}~`, `${prefix}${a.id}`],
    );
    if (Number(funded?.n ?? 0) >= p.agentsPerOwner) why = "POOL_AGENT";
  }
  const r6 = (x: number) => Math.round(x * 1e6) / 1e6;
  return {
    eligible: why === null,
    kind,
    why_not: why,
    share_usd: share,
    owner_used_usd: r6(usdOf(ownerUsed)),
    share_left_usd: r6(Math.max(0, share - usdOf(ownerUsed))),
    pool_usd: p.usdDay,
    pool_left_usd: r6(Math.max(0, p.usdDay - usdOf(poolUsed))),
  };
}

/**
 * Whether the pool pays a call of `worst` nano-USD for this agent: its kind, and why not (its own
 * reason, AI_POOL_SPENT, AI_SHARE_SPENT) or null.
 */
async function poolPays(
  tx: Db,
  ai: AiConfig,
  a: AgentForSpend,
  o: { ownerSinceMs: number | null; nowMs: number; worst: number; t: Map<string, number> },
) {
  const pool = await poolFor(tx, ai, a, o.ownerSinceMs, o.nowMs, o.t);
  // The call must fit what is left of the pool and of the owner's share, worst case.
  // New owners' trials together take at most their part of the pool: many fresh wallets cannot empty it.
  const trialsFull =
    pool.kind === "trial" && (o.t.get("trial") ?? 0) + o.worst > nanoUp((ai.pool.usdDay * ai.pool.trialPoolPct) / 100);
  const why =
    pool.why_not ??
    (nanoUp(pool.pool_left_usd) < o.worst || trialsFull
      ? "AI_POOL_SPENT"
      : nanoUp(pool.share_left_usd) < o.worst
        ? "AI_SHARE_SPENT"
        : null);
  return { pool, why };
}

/** How long a pool-paid reservation waits for the pool's lock before the pool counts as unavailable. */
export const POOL_LOCK_MS = 5_000;

/** The store's answer to a lock not had within lock_timeout (SQLSTATE 55P03), as it comes or as its cause. */
const lockTimedOut = (err: unknown): boolean =>
  [err, (err as { cause?: unknown } | null)?.cause].some((e) => (e as { code?: unknown } | null)?.code === "55P03");

/**
 * Reserves a call's worst case for the agent, paid by the pool when its funding is `service` and
 * the pool pays, else by the owner's own gateway account (when fallback_own allows). Holds with
 * SPEC's code when nothing may pay: AI_BUDGET, the pool's reasons, NOT_CONNECTED, DISCONNECTED,
 * OWN_DAY_CAP. The pool is one lock every pool-paid call of the fleet takes: when it cannot be had
 * within `poolLockMs` (POOL_LOCK_MS), the pool is AI_POOL_UNAVAILABLE for this call, a reason of
 * its own like AI_POOL_SPENT (the owner's own account pays with it as pool_hold, or the tick holds),
 * rather than a tick that waits out its timeout. A store that fails otherwise fails the tick.
 */
export async function reserve(
  db: Db,
  ai: AiConfig,
  a: AgentForSpend,
  o: { ownerSinceMs: number | null; nowMs: number; worstUsd: number; tickSeq: number; poolLockMs?: number },
): Promise<Reservation> {
  if (a.funding !== "service") return db.tx((tx) => reserveIn(tx, ai, a, o, null));
  try {
    return await db.tx((tx) => reserveIn(tx, ai, a, o, o.poolLockMs ?? POOL_LOCK_MS));
  } catch (err) {
    if (!lockTimedOut(err)) throw err;
    const why = "AI_POOL_UNAVAILABLE";
    if (!a.fallbackOwn)
      return { hold: why, message: "the service's credits could not be reached in time; no call", poolHold: null };
    return db.tx((tx) => reserveIn(tx, ai, { ...a, funding: "own" }, o, null, why));
  }
}

/**
 * One reservation in `tx`: the pool's lock (within `poolLockMs`) before the owner's for pool-paid
 * calls, then the budgets in turn. `poolHold`: why the pool does not pay, known before (reserve).
 */
async function reserveIn(
  tx: Db,
  ai: AiConfig,
  a: AgentForSpend,
  o: { ownerSinceMs: number | null; nowMs: number; worstUsd: number; tickSeq: number },
  poolLockMs: number | null,
  poolHoldBefore: string | null = null,
): Promise<Reservation> {
  const day = dayOf(o.nowMs);
  const worst = nanoUp(o.worstUsd);
  const wallet = a.wallet.toLowerCase();
  if (a.funding === "service") {
    // The pool's lock before the owner's, always in this order; only the pool's wait is bounded.
    await tx.query(`SET LOCAL lock_timeout = ${Math.max(1, Math.round(poolLockMs ?? POOL_LOCK_MS))}`);
    await tx.query("SELECT pg_advisory_xact_lock($1, 0)", [LOCK_POOL]);
    await tx.query("SET LOCAL lock_timeout = 0");
  }
  await tx.query("SELECT pg_advisory_xact_lock($1, hashtext($2))", [LOCK_OWNER, wallet]);
  // Every total this reservation may need, in one read.
  const t = await totals(tx, day, [`agent:${a.id}`, "pool", `svc:${wallet}`, `own:${wallet}`, "trial"]);
  const agentToday = t.get(`agent:${a.id}`) ?? 0;
  if (agentToday + worst > nanoUp(a.budgetUsdDay)) {
    return {
      hold: "AI_BUDGET",
      message:
        `this call may cost up to $${o.worstUsd.toFixed(6)}; ` +
        `$${usdOf(Math.max(0, nanoUp(a.budgetUsdDay) - agentToday)).toFixed(6)} ` +
        `of today's $${a.budgetUsdDay} budget is left`,
      poolHold: null,
    };
  }
  const insert = async (source: Source, poolKind: string | null = null) => {
    const [row] = await tx.query<{ id: string }>(
      `INSERT INTO app.ai_spend (agent_id, wallet, day, ts, tick_seq, source, model, status, cost_nusd,
       cost_source, pool_kind) VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending', $8, 'bound', $9) RETURNING id`,
      [a.id, wallet, day, o.nowMs, o.tickSeq, source, a.model, worst, poolKind],
    );
    await addTotals(tx, day, scopesOf({ source, wallet, agentId: a.id, poolKind }), worst);
    return Number(row!.id);
  };
  let poolHold = poolHoldBefore;
  if (a.funding === "service") {
    const { pool, why } = await poolPays(tx, ai, a, { ...o, worst, t });
    if (!why) return { rowId: await insert("service", pool.kind), source: "service", poolHold: null, sealedKey: null };
    if (!a.fallbackOwn)
      return { hold: why, message: `the service's credits do not pay for this call (${why})`, poolHold: null };
    poolHold = why;
  }
  return ownPays(tx, { wallet, worst, t, poolHold }, () => insert("own"));
}

/**
 * The owner's own gateway account pays, when connected and within its day cap (NOT_CONNECTED,
 * DISCONNECTED, OWN_DAY_CAP).
 */
async function ownPays(
  tx: Db,
  r: { wallet: string; worst: number; t: Map<string, number>; poolHold: string | null },
  insert: () => Promise<number>,
): Promise<Reservation> {
  const { wallet, worst, poolHold } = r;
  const [own] = await tx.query<{ sealed_key: string | null; day_cap_usd: number; disconnected_at: string | null }>(
    "SELECT sealed_key, day_cap_usd, disconnected_at FROM app.ai_own WHERE wallet = $1",
    [wallet],
  );
  if (!own?.sealed_key) {
    const code = own?.disconnected_at ? "DISCONNECTED" : "NOT_CONNECTED";
    return {
      hold: code,
      message:
        `the owner's own gateway account is ${code === "DISCONNECTED" ? "disconnected" : "not connected"}` +
        (poolHold ? `; the service's credits did not pay (${poolHold})` : ""),
      poolHold,
    };
  }
  const ownToday = r.t.get(`own:${wallet}`) ?? 0;
  if (ownToday + worst > nanoUp(Number(own.day_cap_usd)))
    return {
      hold: "OWN_DAY_CAP",
      message: `the owner's own day cap of $${own.day_cap_usd} would be passed`,
      poolHold,
    };
  return { rowId: await insert(), source: "own", poolHold, sealedKey: own.sealed_key };
}

export type Settlement = {
  status: Exclude<SpendStatus, "pending">;
  code: string | null;
  promptTokens: number;
  completionTokens: number;
  costUsd: number;
  costSource: "usage" | "header" | "bound";
  ms: number;
  poolHold: string | null;
};

/**
 * Replaces a reservation's worst case with what the call cost (or the worst case, when it may have
 * run unseen), and moves the day totals by the difference. A cost that is not a finite, non-negative
 * number (a lying gateway) counts the worst case.
 */
export async function settle(db: Db, rowId: number, s: Settlement): Promise<void> {
  // A cost beyond a million dollars is a lying gateway, not a bill: the worst case stands.
  const sane = Number.isFinite(s.costUsd) && s.costUsd >= 0 && s.costUsd <= 1e6;
  const tokens = (n: number) => Math.min(2e9, Math.max(0, Math.round(n) || 0));
  const settled = await db.tx(async (tx) => {
    const [r] = await tx.query<{
      cost_nusd: string;
      source: Source | null;
      wallet: string;
      agent_id: string;
      day: number;
      status: string;
      pool_kind: string | null;
    }>(
      `SELECT cost_nusd::text AS cost_nusd, source, wallet, agent_id, day, status, pool_kind FROM app.ai_spend
       WHERE id = $1 FOR UPDATE`,
      [rowId],
    );
    if (!r || r.status !== "pending") return null;
    const cost = !sane
      ? Number(r.cost_nusd)
      : s.costSource === "bound"
        ? nanoUp(s.costUsd)
        : Math.round(s.costUsd * NANO);
    await tx.query(
      `UPDATE app.ai_spend SET status = $2, code = $3, prompt_tokens = $4, completion_tokens = $5, cost_nusd = $6,
       cost_source = $7, ms = $8, pool_hold = $9 WHERE id = $1`,
      [
        rowId,
        s.status,
        s.code,
        tokens(s.promptTokens),
        tokens(s.completionTokens),
        cost,
        sane ? s.costSource : "bound",
        Math.round(s.ms),
        s.poolHold,
      ],
    );
    await addTotals(
      tx,
      Number(r.day),
      scopesOf({ source: r.source, wallet: r.wallet, agentId: r.agent_id, poolKind: r.pool_kind }),
      cost - Number(r.cost_nusd),
    );
    return { funding: r.source ?? "service", cost };
  });
  // Counted once committed (pit_ai_spend_usd_total, pit_ai_calls_total): a rolled-back settle spent nothing new.
  if (!settled) return;
  aiSpendUsd.inc({ funding: settled.funding }, usdOf(settled.cost));
  aiCalls.inc({ funding: settled.funding, status: s.status });
}

/** A tick that made no call: its hold, at no cost. */
export async function recordHold(
  db: Pick<Db, "query">,
  a: { id: string; wallet: Address; model: string },
  o: { nowMs: number; tickSeq: number; code: string; poolHold?: string | null },
): Promise<void> {
  await db.query(
    `INSERT INTO app.ai_spend (agent_id, wallet, day, ts, tick_seq, source, model, status, code, cost_nusd,
     cost_source, pool_hold, ms) VALUES ($1, $2, $3, $4, $5, NULL, $6, 'hold', $7, 0, NULL, $8, 0)`,
    [a.id, a.wallet.toLowerCase(), dayOf(o.nowMs), o.nowMs, o.tickSeq, a.model, o.code, o.poolHold ?? null],
  );
}

type Row = {
  id: string;
  ts: string;
  source: Source | null;
  model: string;
  /** A call in flight (or cut off by a crash) is `pending` until it settles. */
  status: "ok" | "invalid" | "error" | "hold" | "pending";
  code: string | null;
  prompt_tokens: number;
  completion_tokens: number;
  cost_nusd: string;
  cost_source: string | null;
  pool_hold: string | null;
  ms: number | null;
};

/** SPEC's spend row. */
export const spendRow = (r: Row) => ({
  id: Number(r.id),
  ts: Number(r.ts),
  source: r.source,
  model: r.model,
  // A call still in flight, or cut off by a crash, counts its worst case: shown as an error until it settles.
  status: r.status === "pending" ? "error" : r.status,
  ...(r.status === "pending" ? { pending: true as const } : {}),
  code: r.code,
  prompt_tokens: Number(r.prompt_tokens),
  completion_tokens: Number(r.completion_tokens),
  cost_usd: usdOf(r.cost_nusd),
  cost_source: r.cost_source,
  ms: r.ms === null ? null : Number(r.ms),
  ...(r.pool_hold ? { pool_hold: r.pool_hold } : {}),
});

/** An agent's rows, newest first, paged by id. */
export async function spendRows(db: Pick<Db, "query">, agentId: string, limit: number, before: number | null) {
  const rows = await db.query<Row>(
    `SELECT * FROM app.ai_spend WHERE agent_id = $1 ${before !== null ? "AND id < $3" : ""} ORDER BY id DESC LIMIT $2`,
    before !== null ? [agentId, limit + 1, before] : [agentId, limit + 1],
  );
  const page = rows.slice(0, limit).map(spendRow);
  return { rows: page, next_before: rows.length > limit ? page.at(-1)!.id : null };
}

/** Today's spend of an agent: USD, calls, USD by source, tokens. */
export async function todayOf(
  db: Pick<Db, "query">,
  where: { agentId?: string; wallet?: Address; source?: Source },
  nowMs: number,
) {
  const conds = ["day = $1"];
  const params: unknown[] = [dayOf(nowMs)];
  if (where.agentId) conds.push(`agent_id = $${params.push(where.agentId)}`);
  if (where.wallet) conds.push(`wallet = $${params.push(where.wallet.toLowerCase())}`);
  if (where.source) conds.push(`source = $${params.push(where.source)}`);
  const rows = await db.query<{ source: string | null; n: string; calls: string; p: string; c: string }>(
    `SELECT source, sum(cost_nusd)::text AS n, count(*) FILTER (WHERE status <> 'hold')::text AS calls,
       sum(prompt_tokens)::text AS p, sum(completion_tokens)::text AS c
     FROM app.ai_spend WHERE ${conds.join(" AND ")} GROUP BY source`,
    params,
  );
  const r6 = (x: number) => Math.round(x * 1e6) / 1e6;
  const bySource: Record<Source, number> = { service: 0, own: 0 };
  let usd = 0;
  let calls = 0;
  let prompt = 0;
  let completion = 0;
  for (const r of rows) {
    usd += usdOf(r.n);
    calls += Number(r.calls);
    prompt += Number(r.p);
    completion += Number(r.c);
    if (r.source === "service" || r.source === "own") bySource[r.source] = r6(usdOf(r.n));
  }
  return { usd: r6(usd), calls, by_source: bySource, prompt_tokens: prompt, completion_tokens: completion };
}

/**
 * The pool's day for /stats and GET hosted/ai: size, what is left, owners and agents it paid for today
 * (from the day totals).
 */
export async function poolDay(db: Pick<Db, "query">, ai: AiConfig, nowMs: number) {
  const [r] = await db.query<{ n: string | null; owners: string; agents: string }>(
    `SELECT sum(nusd) FILTER (WHERE scope = 'pool')::text AS n,
     count(*) FILTER (WHERE scope LIKE 'svc:%' AND nusd > 0)::text AS owners,
     count(*) FILTER (WHERE scope LIKE 'svcagent:%' AND nusd > 0)::text AS agents FROM app.ai_totals WHERE day = $1`,
    [dayOf(nowMs)],
  );
  const used = usdOf(r?.n ?? 0);
  return {
    pool_usd: ai.pool.usdDay,
    left_usd: Math.round(Math.max(0, ai.pool.usdDay - used) * 1e6) / 1e6,
    owners_funded: Number(r?.owners ?? 0),
    agents_funded: Number(r?.agents ?? 0),
    used_usd: Math.round(used * 1e6) / 1e6,
  };
}

/** When the owner's account was made (ms), the start of the pool's trial; null when it has none. */
export async function ownerSince(db: Pick<Db, "query">, wallet: string): Promise<number | null> {
  const [r] = await db.query<{ t: string | null }>(
    "SELECT min(created_at)::text AS t FROM app.accounts WHERE wallet = $1",
    [wallet.toLowerCase()],
  );
  return r?.t ? Number(r.t) * 1000 : null;
}
