import { parseUnits, type Address } from "viem";
import { parseBody, Refusal } from "../errors/index.js";
import { privateHost } from "./brains.js";
import {
  AI_LIMITS,
  aiParams,
  ruleParams,
  webhookParams,
  type AttestationParameters,
  type CreateParameters,
  type LogsParameters,
  type SessionParameters,
  type UpdateParameters,
} from "./request.js";
import { AI_TEMPLATES, aiParamsOf } from "./ai.js";
import { todayOf } from "./spend.js";
import type { Scheduler } from "./scheduler.js";
import { isLive, newAgentId, newWebhookSecret, type PaperBook, type StoredAgent, type Terms } from "./store.js";
import { ownerKey, type TickDeps } from "./tick.js";
import type { Who } from "../trading/index.js";
import { attestationView, notBefore, recordAttestation, revokeAttestation } from "./attestation.js";
import {
  executorOf,
  executorView,
  newExecutor,
  refundableExecutor,
  refundGas,
  retireExecutor,
  signerRequired,
  type ExecutorDeps,
} from "./executor.js";
import type { HostedSession } from "./deps.js";
import type { Caller } from "../http/caller.js";
import { agentTerms, sessionTerms, termsMisfit, type TermsView } from "./terms.js";
import { liveStatsOf, type LiveStats, type LiveStatsDeps } from "./liveStats.js";
import { watchFor, type Watch } from "./watch.js";

export const MAX_AGENTS_PER_WALLET = 20;
const DEFAULT_BOOK = { USDG: "10000" };

export type HostedDeps = TickDeps &
  ExecutorDeps &
  LiveStatsDeps & {
    scheduler: Pick<Scheduler, "dueAt">;
    sessionOf: (id: string) => Promise<HostedSession | null>;
    /** Revokes a session at the service as its wallet's key would (live/session/revoke); answers its on-chain steps. */
    revokeSession: (sessionId: string, who: Who) => Promise<{ on_chain: unknown }>;
    /** A stopped or deleted agent leaves what it plays in (the league). */
    onStopped?: (agentId: string) => Promise<void>;
    /** Refuses settings an agent may not take while it plays in the league (LEAGUE_PAIRS, LEAGUE_INTERVAL). */
    beforeSettings?: (agentId: string, next: { pairs: string[]; intervalS: number }) => Promise<void>;
  };
/** The signed-in owner the hosted actions act for (its key bound to a wallet: api/http/caller.ts). */
export type Owner = Caller;
/** WALLET_NOT_BOUND's words on the hosted routes (their `first` step: api/hosted/routes.ts). */
export const HOSTED_WALLET = "hosted agents need a key bound to a wallet";

/** The agent for this owner: 404 unknown (or deleted, unless `deleted`), 403 another wallet's. */
export async function owned(
  d: Pick<HostedDeps, "store">,
  id: string,
  who: Owner,
  o: { deleted?: boolean } = {},
): Promise<StoredAgent> {
  const wallet = who.wallet;
  const a = /^ha_[A-Za-z0-9_-]{1,32}$/.test(id) ? await d.store.get(id) : null;
  if (!a || (a.deletedAt !== null && !o.deleted)) throw new Refusal("NOT_FOUND", `no hosted agent ${id}`);
  if (a.wallet.toLowerCase() !== wallet.toLowerCase())
    throw new Refusal("FORBIDDEN", `hosted agent ${id} belongs to another wallet`);
  return a;
}

/** What the view shows beside the stored agent, read by viewOf. */
type Shown = {
  executor: Address | null;
  terms: TermsView;
  session_terms: TermsView | null;
  live_stats: LiveStats | null;
  watch: Watch;
};

/** SPEC "Hosted agent": the public shape; detail adds brain_state and last_trade. Never the webhook secret. */
export function agentView(d: Pick<HostedDeps, "config">, a: StoredAgent, detail: boolean, shown: Shown) {
  const tokens = [...new Set(a.pairs.flatMap((p) => p.split("/")))].map((sym) => {
    const t = d.config.tokens[sym]!;
    return { symbol: sym, address: t.address, decimals: t.decimals };
  });
  const start = Number(a.brainState?.start_usd ?? NaN);
  const value = Number(a.brainState?.value_usd ?? NaN);
  return {
    id: a.id,
    name: a.name,
    brain: a.brain,
    params: a.params,
    interval_s: a.intervalS,
    pairs: a.pairs,
    limits: a.limits,
    mode: a.mode,
    live: isLive(a),
    status: a.status,
    pause_reason: a.pauseReason,
    trading: a.status === "active" && a.deletedAt === null,
    session_id: a.sessionId,
    executor: shown.executor,
    terms: shown.terms,
    session_terms: shown.session_terms,
    tokens,
    pnl:
      Number.isFinite(start) && Number.isFinite(value)
        ? {
            start_usd: round2(start),
            value_usd: round2(value),
            usd: round2(value - start),
            pct: start > 0 ? round2(((value - start) / start) * 100) : null,
          }
        : null,
    last_decision: a.lastDecision,
    live_stats: shown.live_stats,
    watch: shown.watch,
    created_at: a.createdAt,
    ...(a.deletedAt !== null ? { deleted_at: a.deletedAt } : {}),
    ...(detail
      ? {
          brain_state: a.brainState,
          last_trade: a.lastTrade,
          ...(a.mode === "paper"
            ? { paper_book: bookView(d, a.paperBook) }
            : {
                session_root_hash: null,
                session_expires: null,
                stock_attestation: null,
                stock_attestation_not_before: null,
                stock_tokens: [],
              }),
        }
      : {}),
  };
}

/**
 * The view with what is read beside the stored agent: a live agent's current executor and attached
 * session, its terms at the owner's volume tier, the session's terms, live_stats and watch.
 */
async function viewOf(d: HostedDeps, a: StoredAgent, detail = false) {
  const live = a.mode === "live";
  const [executor, session, volume] = await Promise.all([
    live ? executorOf(d, a.id) : null,
    live && a.sessionId ? d.sessionOf(a.sessionId) : null,
    d.volume30d(a.wallet),
  ]);
  const [liveStats, watch] = await Promise.all([liveStatsOf(d, a), watchFor(d, a, session, executor)]);
  const shown: Shown = {
    executor,
    terms: agentTerms(a.terms, volume),
    session_terms: session ? sessionTerms(session) : null,
    live_stats: liveStats,
    watch,
  };
  const view = {
    ...agentView(d, a, detail, shown),
    ...(a.brain === "partner_llm" ? { ai: await aiView(d, a) } : {}),
  };
  if (!detail || !live) return view;
  const [r] = await d.store.db.query<{ tx_hash: string; status: string; value: string; block: string | null }>(
    "SELECT tx_hash, status, value, block FROM app.executor_refunds WHERE agent_id = $1 ORDER BY id DESC LIMIT 1",
    [a.id],
  );
  const stockTokens = [...new Set(a.pairs.flatMap((p) => p.split("/")))].filter(
    (sym) => d.config.tokens[sym]?.kind === "stock",
  );
  return {
    ...view,
    session_root_hash: session?.root_hash ?? null,
    session_expires: session?.expires ?? null,
    stock_attestation: await attestationView(d.store, a, Math.floor(d.clock() / 1000)),
    stock_attestation_not_before: await notBefore(d.store, a.id),
    stock_tokens: stockTokens,
    gas_refund: r
      ? { tx_hash: r.tx_hash, status: r.status, value_wei: r.value, block: r.block === null ? null : Number(r.block) }
      : null,
  };
}

/** An AI agent's `ai` object: model, funding, today's spend. */
async function aiView(d: HostedDeps, a: StoredAgent) {
  const p = aiParamsOf(a);
  const today = await todayOf(d.store.db, { agentId: a.id }, d.clock());
  return {
    model: p.model,
    funding: p.funding,
    fallback_own: p.fallback_own,
    budget_usd_day: p.budget_usd_day,
    max_orders: p.max_orders,
    template: p.template ?? null,
    today_usd: today.usd,
    today_calls: today.calls,
  };
}

const round2 = (x: number) => Math.round(x * 100) / 100;
const bookView = (d: Pick<HostedDeps, "config">, book: PaperBook | null) =>
  book
    ? Object.fromEntries(
        Object.values(d.config.tokens)
          .filter((t) => book[t.address.toLowerCase()] !== undefined)
          .map((t) => [t.symbol, { atoms: book[t.address.toLowerCase()]!, decimals: t.decimals }]),
      )
    : null;

/** Pairs, params and terms as the create and update calls may set them; throws the route's refusals. */
function checkSettings(
  d: HostedDeps,
  s: {
    brain: StoredAgent["brain"];
    params: Record<string, unknown>;
    pairs: string[];
    mode: string;
    accept_risks?: string[];
    policies?: { block_risks?: string[] };
  },
) {
  for (const p of s.pairs) {
    const [a, b] = p.split("/") as [string, string];
    for (const sym of [a, b]) {
      const t = Object.hasOwn(d.config.tokens, sym) ? d.config.tokens[sym] : undefined;
      if (!t) throw new Refusal("BAD_REQUEST", `pairs: ${sym} is not a token of this server (use config symbols)`);
      if (t.kind === "stock" && s.mode === "paper")
        throw new Refusal("TOKEN_STOCK", `${sym} is a stock token: paper agents do not trade stock tokens`);
    }
    if (a === b) throw new Refusal("BAD_REQUEST", `pairs: ${p} names one token twice`);
  }
  const tokens = new Set(s.pairs.flatMap((p) => p.split("/")));
  if (s.brain === "rule") {
    const p = parseBody(ruleParams, s.params, { unknownField: "UNKNOWN_FIELD" });
    const outside = Object.keys(p.targets).find((sym) => !tokens.has(sym));
    if (outside) throw new Refusal("BAD_REQUEST", `params.targets: ${outside} is not in the agent's pairs`);
    return p as unknown as Record<string, unknown>;
  }
  if (s.brain === "webhook") {
    const p = parseBody(webhookParams, s.params, { unknownField: "UNKNOWN_FIELD" });
    if (!d.allowPrivateWebhooks && privateHost(new URL(p.url).hostname))
      throw new Refusal("BAD_REQUEST", "params.url: private and loopback addresses are refused");
    return p;
  }
  return checkAiParams(d, s.params);
}

/** partner_llm params: the server must call a model (HOSTED_UNAVAILABLE), offer the model and template asked. */
function checkAiParams(d: HostedDeps, raw: Record<string, unknown>) {
  if (!d.config.ai.gatewayUrl)
    throw new Refusal(
      "HOSTED_UNAVAILABLE",
      "the AI-model brain (partner_llm) is not running on this server",
      {},
      { retryAfterS: 3600 },
    );
  const p = parseBody(aiParams, raw, { unknownField: "UNKNOWN_FIELD" });
  if (!d.config.ai.models.some((m) => m.id === p.model))
    throw new Refusal(
      "BAD_REQUEST",
      `params.model: ${p.model} is not offered here (GET /api/v1/hosted/ai lists the models)`,
    );
  if (p.template !== undefined && !AI_TEMPLATES.some((t) => t.id === p.template))
    throw new Refusal("BAD_REQUEST", `params.template: no template ${p.template}`);
  if (p.funding === "own" && !d.config.ai.ownKeysSecret)
    throw new Refusal("BAD_REQUEST", "params.funding: this server keeps no owners' own gateway keys");
  return p as unknown as Record<string, unknown>;
}

/** AI agents tick at most every 300 s (SPEC "Limits"). */
function checkAiInterval(brain: StoredAgent["brain"], intervalS: number) {
  if (brain === "partner_llm" && intervalS < AI_LIMITS.minIntervalS)
    throw new Refusal("BAD_REQUEST", `interval_s: an AI agent ticks at most every ${AI_LIMITS.minIntervalS} s`);
}

function termsOf(
  body: { accept_risks?: string[]; shield?: boolean; policies?: { block_risks?: string[] } },
  base?: Terms,
): Terms {
  const t: Terms = {
    accept_risks: body.accept_risks ?? base?.accept_risks ?? [],
    shield: body.shield ?? base?.shield ?? false,
    policies: { block_risks: body.policies?.block_risks ?? base?.policies.block_risks ?? [] },
  };
  const both = t.accept_risks.find((r) => t.policies.block_risks.includes(r));
  if (both)
    throw new Refusal("BAD_TERMS", `${both} is both accepted (accept_risks) and blocked (policies.block_risks)`);
  return t;
}

function paperBookOf(d: HostedDeps, given: Record<string, string> | undefined, pairs: string[]): PaperBook {
  const tokens = new Set(pairs.flatMap((p) => p.split("/")));
  const book: PaperBook = {};
  for (const [sym, amount] of Object.entries(given ?? DEFAULT_BOOK)) {
    const t = Object.hasOwn(d.config.tokens, sym) ? d.config.tokens[sym] : undefined;
    if (!t || !tokens.has(sym)) {
      if (!given) continue;
      throw new Refusal("BAD_REQUEST", `paper_book: ${sym} is not in the agent's pairs`);
    }
    book[t.address.toLowerCase()] = parseUnits(amount, t.decimals).toString();
  }
  return book;
}

export async function createAgent(d: HostedDeps, req: CreateParameters, who: Owner) {
  const wallet = who.wallet;
  const terms = termsOf(req);
  if (req.mode === "live" && !d.executors) throw signerRequired();
  if (req.mode === "live" && req.paper_book)
    throw new Refusal("BAD_REQUEST", "paper_book: a live agent trades the session wallet's funds, not a paper book");
  const params = checkSettings(d, { ...req, params: req.params });
  checkAiInterval(req.brain, req.interval_s);
  const now = d.clock();
  const agent: StoredAgent = {
    id: newAgentId(),
    wallet,
    keyId: who.keyId,
    name: req.name ?? `${req.brain} agent`,
    brain: req.brain,
    params,
    intervalS: req.interval_s,
    pairs: req.pairs,
    limits: req.limits,
    mode: req.mode,
    // A live agent starts paused: it trades only once a session granted to its executor is attached.
    status: req.mode === "live" ? "paused" : "active",
    pauseReason:
      req.mode === "live" ? { code: "NO_SESSION", message: "attach a session granted to the executor" } : null,
    terms,
    webhookSecret: req.brain === "webhook" ? newWebhookSecret() : null,
    paperBook: req.mode === "paper" ? paperBookOf(d, req.paper_book, req.pairs) : null,
    brainState: null,
    lastDecision: null,
    lastTrade: null,
    sessionId: null,
    createdAt: Math.floor(now / 1000),
    updatedAt: Math.floor(now / 1000),
    deletedAt: null,
  };
  const stored = await d.store.create(agent, now, MAX_AGENTS_PER_WALLET);
  if (!stored)
    throw new Refusal(
      "TOO_MANY_AGENTS",
      `a wallet runs at most ${MAX_AGENTS_PER_WALLET} hosted agents; delete one first`,
    );
  let attestation: unknown;
  if (stored.mode === "live") {
    try {
      attestation = (await newExecutor(d, stored)).attestation;
    } catch (err) {
      // No agent without its executor: the row goes (deleted) and the refusal stands.
      await d.store.update(
        stored.id,
        ["active", "paused"],
        { deletedAt: Math.floor(d.clock() / 1000) },
        Math.floor(d.clock() / 1000),
      );
      throw err;
    }
  }
  return {
    ...(await viewOf(d, stored, true)),
    ...(attestation ? { executor_attestation: attestation } : {}),
    ...(stored.webhookSecret ? { webhook_secret: stored.webhookSecret } : {}),
  };
}

export async function listAgents(d: HostedDeps, who: Owner) {
  return { agents: await Promise.all((await d.store.list(who.wallet)).map((a) => viewOf(d, a))) };
}

/** GET hosted/<id>: the agent the route's first step found (owned). */
export async function agentDetail(d: HostedDeps, a: StoredAgent) {
  return viewOf(d, a, true);
}

const stoppedRefusal = (a: StoredAgent) =>
  new Refusal("STOPPED", `hosted agent ${a.id} is stopped: it cannot change or resume`);

/** Writes a change that holds only from the states it was decided in; a concurrent stop wins. */
async function changed(d: HostedDeps, a: StoredAgent, set: Parameters<HostedDeps["store"]["update"]>[2]) {
  const after = await d.store.update(a.id, ["active", "paused"], set, Math.floor(d.clock() / 1000));
  if (!after) throw stoppedRefusal(a);
  return after;
}

export async function updateAgent(d: HostedDeps, a: StoredAgent, req: UpdateParameters) {
  if (a.status === "stopped") throw stoppedRefusal(a);
  if (req.live !== undefined && a.mode === "paper")
    throw new Refusal("PAPER_AGENT", "a paper agent has no session to trade live through; create a live agent");
  const brain = req.brain ?? a.brain;
  const pairs = req.pairs ?? a.pairs;
  const params =
    req.params !== undefined || req.brain !== undefined || req.pairs !== undefined
      ? checkSettings(d, { brain, params: req.params ?? a.params, pairs, mode: a.mode })
      : undefined;
  checkAiInterval(brain, req.interval_s ?? a.intervalS);
  if (req.pairs || req.interval_s !== undefined)
    await d.beforeSettings?.(a.id, { pairs, intervalS: req.interval_s ?? a.intervalS });
  const terms = termsOf(req, a.terms);
  const newTerms = req.accept_risks !== undefined || req.shield !== undefined || req.policies !== undefined;
  // Terms are held to the session while the agent runs on it; a paused agent may change them
  // (Shield must equal the session's: the owner changes it, then attaches a session binding it),
  // and resume, update live=true and attach check them.
  const runs = a.status === "active" && req.live !== false;
  if (req.live === true) await assertLiveReady(d, { ...a, pairs, terms }, req.limits ?? a.limits);
  else if (a.mode === "live" && a.sessionId && (req.limits || req.pairs || (newTerms && runs)))
    await assertFits(d, a, await sessionFor(d, a), {
      limits: req.limits ?? a.limits,
      pairs,
      terms: runs ? terms : null,
    });
  const newSecret = brain === "webhook" && !a.webhookSecret ? newWebhookSecret() : undefined;
  const after = await changed(d, a, {
    ...(req.live === true
      ? { status: "active" as const, pauseReason: null }
      : req.live === false && a.mode === "live"
        ? { status: "paused" as const, pauseReason: { code: "OWNER", message: "live trading turned off by the owner" } }
        : {}),
    name: req.name,
    brain: req.brain,
    params,
    intervalS: req.interval_s,
    pairs: req.pairs,
    limits: req.limits,
    terms,
    webhookSecret: newSecret,
  });
  if (req.interval_s !== undefined) await d.scheduler.dueAt(a.id, d.clock() + after.intervalS * 1000);
  return { ...(await viewOf(d, after, true)), ...(newSecret ? { webhook_secret: newSecret } : {}) };
}

export async function pauseAgent(d: HostedDeps, a: StoredAgent) {
  if (a.status === "stopped") throw stoppedRefusal(a);
  return viewOf(
    d,
    await changed(d, a, { status: "paused", pauseReason: { code: "OWNER", message: "paused by the owner" } }),
    true,
  );
}

export async function resumeAgent(d: HostedDeps, a: StoredAgent) {
  if (a.status === "stopped") throw stoppedRefusal(a);
  if (a.mode === "live") await assertLiveReady(d, a, a.limits);
  // The schedule keeps its slot: a paused agent's due row simply waits, so resume never ticks more often than
  // interval_s.
  const after = await changed(d, a, { status: "active", pauseReason: null });
  return viewOf(d, after, true);
}

export async function stopAgent(d: HostedDeps, a: StoredAgent) {
  if (a.status === "stopped") {
    // A stop whose league exit failed is healed by asking again.
    await d.onStopped?.(a.id);
    throw stoppedRefusal(a);
  }
  // The session first: a revoke that fails leaves the agent unstopped, so stop can be asked again.
  const sessionRevoke = await revokeAttached(d, a);
  const after = await changed(d, a, { status: "stopped", pauseReason: null });
  await d.onStopped?.(a.id);
  return { ...(await viewOf(d, after, true)), session_revoke: sessionRevoke };
}

export async function deleteAgent(d: HostedDeps, a: StoredAgent) {
  if (a.mode === "live" && a.status !== "stopped")
    throw new Refusal("STOP_FIRST", "stop a live agent before deleting it");
  const after = await d.store.update(
    a.id,
    a.mode === "live" ? ["stopped"] : ["active", "paused", "stopped"],
    { deletedAt: Math.floor(d.clock() / 1000) },
    Math.floor(d.clock() / 1000),
  );
  if (!after) throw new Refusal("NOT_FOUND", `no hosted agent ${a.id}`);
  await d.onStopped?.(a.id);
  return { ...(await viewOf(d, after)), deleted: true };
}

/** GET hosted/<id>/logs: the query as the edge parsed it (request.ts logsQuery). */
export async function agentLogs(d: HostedDeps, a: StoredAgent, q: LogsParameters) {
  const { limit, before } = q;
  const kinds = q.kinds === undefined ? undefined : q.kinds.split(",");
  const rows = await d.store.logs(a.id, { limit: limit + 1, before, kinds });
  const page = rows.slice(0, limit);
  return { id: a.id, rows: page, next_before: rows.length > limit ? page.at(-1)!.id : null };
}

/** POST stock-attestation: a live agent with an attached session; the owner's signed attestation (attestation.ts). */
export async function addStockAttestation(d: HostedDeps, a: StoredAgent, q: AttestationParameters) {
  if (a.mode === "paper") throw new Refusal("PAPER_AGENT", "a paper agent has no session or executor");
  if (a.status === "stopped") throw stoppedRefusal(a);
  if (!d.executors) throw signerRequired();
  const executor = await liveExecutor(d, a);
  const session = a.sessionId ? await d.sessionOf(a.sessionId) : null;
  await recordAttestation(
    { store: d.store, nowS: () => Math.floor(d.clock() / 1000), executors: d.executors },
    a,
    executor,
    session,
    q,
  );
  return viewOf(d, a, true);
}

/** POST stock-attestation/revoke: stock-token orders hold at once. */
export async function revokeStockAttestation(d: HostedDeps, a: StoredAgent) {
  if (a.mode === "paper") throw new Refusal("PAPER_AGENT", "a paper agent has no session or executor");
  const revoked = await revokeAttestation(d.store, a.id, Math.floor(d.clock() / 1000));
  // Here first (orders hold at once), then at the signing service, which then signs no stock redeem;
  // signer_revoked says whether it ended one it held (false too when it could not be reached).
  const executor = await executorOf(d, a.id);
  const signerRevoked =
    executor && d.executors ? await d.executors.revokeStockAttestation(executor).catch(() => false) : false;
  return { ...(await viewOf(d, a, true)), revoked, signer_revoked: signerRevoked };
}

const lcs = (x: string) => x.toLowerCase();

/**
 * The attached session revoked at the service (stop, rotate-executor), with the steps the owner sends
 * on chain; null when none is attached or it ended already.
 */
async function revokeAttached(
  d: HostedDeps,
  a: StoredAgent,
): Promise<{ session_id: string; on_chain: unknown } | null> {
  if (!a.sessionId) return null;
  const s = await d.sessionOf(a.sessionId);
  if (!s || s.status !== "active") return null;
  const r = await d.revokeSession(s.id, { key: ownerKey(a), clientAddr: "hosted" });
  return { session_id: s.id, on_chain: r.on_chain };
}

/** The agent's attached session as sessions see it now (NO_SESSION when none is attached or it is gone). */
async function sessionFor(d: HostedDeps, a: StoredAgent) {
  const s = a.sessionId ? await d.sessionOf(a.sessionId) : null;
  if (!s)
    throw new Refusal("NO_SESSION", "no session is attached to this agent's executor", {}, { context: "hosted_agent" });
  return s;
}

/**
 * OUTSIDE_SESSION unless the agent's tokens are the session's, its limits within the session's and,
 * with `terms`, its terms no wider than the session's (terms.ts termsMisfit: the risks it accepts,
 * its Shield, the fees its trades pay at the owner's volume tier).
 */
async function assertFits(
  d: HostedDeps,
  a: StoredAgent,
  s: HostedSession,
  next: { limits: StoredAgent["limits"]; pairs: string[]; terms: Terms | null },
) {
  const { limits, pairs } = next;
  const tokens = [...new Set(pairs.flatMap((p) => p.split("/")))].map((sym) =>
    Object.hasOwn(d.config.tokens, sym) ? lcs(d.config.tokens[sym]!.address) : sym,
  );
  const missing = tokens.find((t) => !s.tokens.includes(t));
  if (missing) throw new Refusal("OUTSIDE_SESSION", `the session does not cover ${missing}`);
  if (limits.max_trade_usd > s.limits.max_trade_usd || limits.max_day_usd > s.limits.max_day_usd)
    throw new Refusal(
      "OUTSIDE_SESSION",
      `the agent's limits ($${limits.max_trade_usd} a trade, $${limits.max_day_usd} a day) ` +
        `pass the session's ($${s.limits.max_trade_usd}, $${s.limits.max_day_usd})`,
    );
  if (!next.terms) return;
  const why = termsMisfit(agentTerms(next.terms, await d.volume30d(a.wallet)), sessionTerms(s));
  if (why)
    throw new Refusal("OUTSIDE_SESSION", `the agent's terms are wider than the session's: ${why}`, {
      session_terms: sessionTerms(s),
    });
}

/**
 * Before a live agent trades: kill switch, live trading on, an attached session active for its current
 * executor that its limits fit.
 */
async function assertLiveReady(d: HostedDeps, a: StoredAgent, limits: StoredAgent["limits"]) {
  if (d.config.hostedKillSwitch) throw new Refusal("KILLED", "the kill switch holds every live agent on this server");
  if (!d.config.hostedLive) throw new Refusal("LIVE_DISABLED", "live trading by hosted agents is off on this server");
  const s = await sessionFor(d, a);
  const executor = await executorOf(d, a.id);
  if (s.status !== "active" || s.expires * 1000 <= d.clock() || !executor || lcs(s.executor) !== lcs(executor))
    throw new Refusal("SESSION_NOT_ACTIVE", "the attached session is not active for the agent's executor");
  await assertFits(d, a, s, { limits, pairs: a.pairs, terms: a.terms });
}

/**
 * POST session: attaches a session the owner granted to this agent's current executor. NO_SESSION
 * for a session that is not the owner's; BAD_SESSION for one granted to another executor or not
 * active; OUTSIDE_SESSION when the agent's tokens, limits or terms pass the session's. The agent stays
 * paused until resumed (or update live=true).
 */
export async function attachSession(d: HostedDeps, a: StoredAgent, q: SessionParameters) {
  if (a.mode === "paper") throw new Refusal("PAPER_AGENT", "a paper agent has no session or executor");
  if (a.status === "stopped") throw stoppedRefusal(a);
  const s = await d.sessionOf(q.session_id);
  if (!s || lcs(s.wallet) !== lcs(a.wallet))
    throw new Refusal("NO_SESSION", `no session ${q.session_id} of this wallet`);
  const executor = await executorOf(d, a.id);
  if (!executor || lcs(s.executor) !== lcs(executor))
    throw new Refusal("BAD_SESSION", "the session was granted to another executor than this agent's");
  if (s.status !== "active" || s.expires * 1000 <= d.clock())
    throw new Refusal("BAD_SESSION", `the session is ${s.status === "active" ? "expired" : s.status}, not active`);
  await assertFits(d, a, s, { limits: a.limits, pairs: a.pairs, terms: a.terms });
  const after = await changed(d, a, {
    sessionId: s.id,
    status: "paused",
    pauseReason: { code: "OWNER", message: "session attached: resume to trade" },
  });
  return viewOf(d, after, true);
}

/** The live agent's executor (a deleted agent's too); NO_EXECUTOR for paper agents. */
async function liveExecutor(d: HostedDeps, a: StoredAgent): Promise<Address> {
  if (a.mode === "paper") throw new Refusal("NO_EXECUTOR", "a paper agent has no executor");
  const executor = await executorOf(d, a.id);
  if (!executor) throw new Refusal("NO_EXECUTOR", `hosted agent ${a.id} has no executor`);
  return executor;
}

/** GET hosted/<id>/executor: the agent found with its deleted ones (owned, deleted: true). */
export async function agentExecutor(d: HostedDeps, a: StoredAgent) {
  return executorView(d, a, await liveExecutor(d, a));
}

/** POST hosted/<id>/refund-gas: the agent found with its deleted ones (owned, deleted: true). */
export async function agentRefundGas(d: HostedDeps, a: StoredAgent) {
  if (a.mode === "paper") throw new Refusal("NO_EXECUTOR", "a paper agent has no executor");
  const executor = await refundableExecutor(d, a.id);
  if (!executor) throw new Refusal("NO_EXECUTOR", `hosted agent ${a.id} has no executor`);
  return refundGas(d, a, executor);
}

/**
 * rotate-executor: a new executor key, the old one retired at the signing service; the agent pauses
 * until a session is attached.
 */
export async function rotateExecutor(d: HostedDeps, a: StoredAgent) {
  if (a.mode === "paper") throw new Refusal("PAPER_AGENT", "a paper agent has no executor to rotate");
  if (a.status === "stopped") throw stoppedRefusal(a);
  const old = await liveExecutor(d, a);
  const sessionRevoke = await revokeAttached(d, a);
  await retireExecutor(d, a.id, old);
  const made = await newExecutor(d, a);
  const after = await changed(d, a, {
    status: "paused",
    sessionId: null,
    pauseReason: { code: "ROTATED", message: "a new executor: attach a session granted to it" },
  });
  return {
    ...(await viewOf(d, after, true)),
    executor_attestation: made.attestation,
    retired_executor: old,
    session_revoke: sessionRevoke,
  };
}

export async function rotateWebhookSecret(d: HostedDeps, a: StoredAgent) {
  if (a.brain !== "webhook")
    throw new Refusal("NOT_WEBHOOK", `hosted agent ${a.id}'s brain is ${a.brain}, not a webhook`);
  if (a.status === "stopped") throw stoppedRefusal(a);
  const secret = newWebhookSecret();
  const after = await changed(d, a, { webhookSecret: secret });
  return { ...(await viewOf(d, after, true)), webhook_secret: secret };
}
