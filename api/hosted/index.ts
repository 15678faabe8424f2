import { upTo } from "../../lib/cacheClock.js";
import type { Address } from "viem";
import type { Market } from "../market/index.js";
import type { Db } from "../ports/store/db.js";
import {
  addStockAttestation,
  agentDetail,
  agentExecutor,
  agentLogs,
  agentRefundGas,
  attachSession,
  createAgent,
  deleteAgent,
  listAgents,
  pauseAgent,
  resumeAgent,
  revokeStockAttestation,
  rotateExecutor,
  rotateWebhookSecret,
  stopAgent,
  updateAgent,
  owned,
  type HostedDeps,
  type Owner,
} from "./agents.js";
import type { ExecutorPort } from "../ports/executors.js";
import type { Sequencer } from "../ports/sequencer.js";
import { createScheduler } from "./scheduler.js";
import { createHostedStore, isLive, type HostedStore, type StoredAgent } from "./store.js";
import { runTick, type LiveDeps, type TickDeps } from "./tick.js";
import { executorOf } from "./executor.js";
import type { HostedSession } from "./deps.js";
import type { AiDeps } from "./ai.js";
import { ownerSince, poolDay } from "./spend.js";
import {
  agentSpend,
  aiInfo,
  connectOwn,
  disconnectOwn,
  ownedAi,
  takesOwnKeys,
  type OwnConnectParameters,
} from "./aiAccount.js";
import type {
  AttestationParameters,
  CreateParameters,
  LogsParameters,
  SessionParameters,
  SpendParameters,
  UpdateParameters,
} from "./request.js";
import { openaiGateway, type GatewayPort } from "../ports/gateway.js";
import { LRUCache } from "lru-cache";

export { webhookSignature, webhookVerifies } from "./brains.js";
export { MAX_AGENTS_PER_WALLET } from "./agents.js";
export { nextDue } from "./scheduler.js";
export type { Owner } from "./agents.js";
/** Request schemas, for the OpenAPI document (api/openapi). */
export {
  createRequest as hostedCreateRequest,
  updateRequest as hostedUpdateRequest,
  sessionBody as hostedSessionBody,
  attestationBody as hostedAttestationBody,
} from "./request.js";
import type { Common } from "../ports/common.js";
export { ownConnect } from "./aiAccount.js";

/** What another domain attaches to hosted agents' announcements and ticks (HostedService.attach). */
export type HostedHooks = {
  /** A stopped or deleted agent (it leaves the league at once). */
  onStopped?: HostedDeps["onStopped"];
  /** Pairs or interval about to change: may refuse (a practice entrant's LEAGUE_PAIRS, LEAGUE_INTERVAL). */
  beforeSettings?: HostedDeps["beforeSettings"];
  /** The practice board's gate before a paper tick. */
  practice?: NonNullable<TickDeps["practice"]>;
};

/** What createHosted is given (api/services.ts). */
export type HostedInput = Common & {
  /** `book`: the indexer's pool book, when fresh (paper fills computed from it, issue 31 point 2). */
  market: Pick<Market, "mark"> & Partial<Pick<Market, "book">>;
  db: Db;
  executors: ExecutorPort | null;
  sequencer: Sequencer;
  liveSessionsOf: (executor: Address) => Promise<string[]>;
  assertNotSanctioned: HostedDeps["assertNotSanctioned"];
  sessionOf: (id: string) => Promise<HostedSession | null>;
  revokeSession: HostedDeps["revokeSession"];
  trade: LiveDeps["trade"];
  submit: LiveDeps["submit"];
  /** Trading's sides: an order's tokens and their risks, read as a key's trade reads them. */
  sides: TickDeps["sides"];
  /** Trading's volume tier: the owner wallet's 30-day volume (the fee its agents' trades pay). */
  volume30d: TickDeps["volume30d"];
  /** The wallet's trades by hash as me/trades lists them (live_stats). */
  tradesOf: HostedDeps["tradesOf"];
  scheduler?: {
    intervalMs?: number;
    leaseMs?: number;
    concurrency?: number;
    tickTimeoutMs?: number;
    instance?: string;
  };
  webhookTimeoutMs?: number;
};

/**
 * Hosted agents: the owner's routes and the scheduler that ticks them (started by createApp).
 * Paper and live agents with the rule or webhook brain run here; live agents trade through the
 * session attached to their executor, whose key the signing service holds.
 */
export function createHosted(d: HostedInput) {
  const store = createHostedStore(d.db);
  const hooks: HostedHooks = {};
  const tickDeps = tickDepsOf(d, store, hooks);
  const scheduler = createScheduler({
    db: d.db,
    clock: d.clock,
    logger: d.logger,
    ...d.scheduler,
    runTick: (c, instance) => runTick(tickDeps, c.agentId, c.seq, c.dueMs, instance),
  });
  const h: HostedDeps = {
    ...tickDeps,
    scheduler,
    executors: d.executors,
    sequencer: d.sequencer,
    liveSessionsOf: d.liveSessionsOf,
    assertNotSanctioned: d.assertNotSanctioned,
    sessionOf: d.sessionOf,
    revokeSession: d.revokeSession,
    tradesOf: d.tradesOf,
    onStopped: async (id) => await hooks.onStopped?.(id),
    beforeSettings: async (id, next) => await hooks.beforeSettings?.(id, next),
  };
  return {
    store,
    scheduler,
    /**
     * Hosted announces, it calls no other domain by name: the league attaches what a stop and a
     * settings change mean to it, and its practice gate (api/services.ts wires it once).
     */
    attach: (h: HostedHooks) => void Object.assign(hooks, h),
    ...ownerActions(h),
    /** me/sessions' hosted rows: id, name, status, strategy, mode, live, trading, pairs, session_id, pause_reason. */
    summaries: (wallet: Address) => summaries(store, wallet),
    /** stats.ai_pool: null when the pool is off. */
    aiPool: () => aiPool(d),
  };
}

/** What a tick reads: the context, live trading's calls, the AI brain's gateway, the practice gate. */
function tickDepsOf(d: HostedInput, store: HostedStore, hooks: HostedHooks): TickDeps {
  const live: LiveDeps = {
    sessionOf: d.sessionOf,
    trade: d.trade,
    submit: d.submit,
    signTrade: d.executors ? (e, tx) => d.executors!.signTrade(e, tx) : null,
    executorOf: (id) => executorOf({ store }, id),
  };
  return {
    config: d.config,
    chain: d.chain,
    market: d.market,
    sides: d.sides,
    volume30d: d.volume30d,
    store,
    clock: d.clock,
    logger: d.logger,
    allowPrivateWebhooks: d.config.devnet,
    webhookTimeoutMs: d.webhookTimeoutMs,
    live,
    ai: aiDepsOf(d),
    practice: (agent) => (hooks.practice ? hooks.practice(agent) : Promise.resolve(null)),
  };
}

/**
 * The owner's actions (SPEC "Hosted agents"), each with its input as the route parsed it. Those
 * on one agent take the agent the route's first step found: `owned` (NOT_FOUND, FORBIDDEN), or
 * `ownedAi` for spend (NOT_AI too); `takesOwnKeys` is ai/own's first step.
 */
function ownerActions(h: HostedDeps) {
  return {
    owned: (id: string, who: Owner, o?: { deleted?: boolean }) => owned(h, id, who, o),
    ownedAi: (id: string, who: Owner) => ownedAi(h, id, who),
    takesOwnKeys: () => takesOwnKeys(h),
    create: (q: CreateParameters, who: Owner) => createAgent(h, q, who),
    list: (who: Owner) => listAgents(h, who),
    detail: (a: StoredAgent) => agentDetail(h, a),
    update: (a: StoredAgent, q: UpdateParameters) => updateAgent(h, a, q),
    pause: (a: StoredAgent) => pauseAgent(h, a),
    resume: (a: StoredAgent) => resumeAgent(h, a),
    stop: (a: StoredAgent) => stopAgent(h, a),
    remove: (a: StoredAgent) => deleteAgent(h, a),
    logs: (a: StoredAgent, q: LogsParameters) => agentLogs(h, a, q),
    rotateWebhookSecret: (a: StoredAgent) => rotateWebhookSecret(h, a),
    executor: (a: StoredAgent) => agentExecutor(h, a),
    refundGas: (a: StoredAgent) => agentRefundGas(h, a),
    rotateExecutor: (a: StoredAgent) => rotateExecutor(h, a),
    attachSession: (a: StoredAgent, q: SessionParameters) => attachSession(h, a, q),
    stockAttestation: (a: StoredAgent, q: AttestationParameters) => addStockAttestation(h, a, q),
    revokeStockAttestation: (a: StoredAgent) => revokeStockAttestation(h, a),
    aiInfo: (who: Owner) => aiInfo(h, who),
    spend: (a: StoredAgent, q: SpendParameters) => agentSpend(h, a, q),
    connectOwn: (q: OwnConnectParameters, who: Owner) => connectOwn(h, q, who),
    disconnectOwn: (who: Owner) => disconnectOwn(h, who),
  };
}

/** me/sessions' hosted rows. */
async function summaries(store: HostedStore, wallet: Address) {
  return (await store.list(wallet)).map((a) => ({
    id: a.id,
    name: a.name,
    status: a.status,
    strategy: a.brain === "partner_llm" ? String(a.params.strategy ?? "") : a.brain,
    mode: a.mode,
    live: isLive(a),
    trading: a.status === "active",
    pairs: a.pairs,
    session_id: a.sessionId,
    pause_reason: a.pauseReason,
  }));
}

/** stats.ai_pool: null when the pool is off. */
async function aiPool(d: Pick<HostedInput, "config" | "db" | "clock">) {
  if (!d.config.ai.gatewayUrl || d.config.ai.pool.usdDay <= 0) return null;
  const p = await poolDay(d.db, d.config.ai, d.clock());
  return {
    pool_usd: p.pool_usd,
    left_usd: p.left_usd,
    owners_funded: p.owners_funded,
    agents_funded: p.agents_funded,
  };
}

export type Hosted = ReturnType<typeof createHosted>;

/** The AI brain's gateway clients (one per key: the service's, or an owner's own) and the owner's trial start. */
function aiDepsOf(d: Pick<Common, "config" | "clock"> & { db: Db }): AiDeps | undefined {
  const url = d.config.ai.gatewayUrl;
  if (!url) return undefined;
  const clients = new LRUCache<string, GatewayPort>({ max: 1_000 });
  // An account's creation time never changes: read once per owner.
  const since = new LRUCache<string, number>(upTo(100_000));
  return {
    ai: d.config.ai,
    db: d.db,
    clock: d.clock,
    gatewayFor: (apiKey) =>
      clients.get(apiKey) ?? (clients.set(apiKey, openaiGateway({ baseURL: url, apiKey })), clients.get(apiKey)!),
    ownerSince: async (wallet) => {
      const hit = since.get(wallet.toLowerCase());
      if (hit !== undefined) return hit;
      const t = await ownerSince(d.db, wallet);
      if (t !== null) since.set(wallet.toLowerCase(), t);
      return t;
    },
  };
}
