import type { Logger } from "pino";
import type { Address, PublicClient } from "viem";
import type { Config } from "../../lib/config.js";
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
  type HostedDeps,
  type Owner,
} from "./agents.js";
import type { ExecutorPort } from "../ports/executors.js";
import type { Sequencer } from "../ports/sequencer.js";
import { createScheduler } from "./scheduler.js";
import { createHostedStore, isLive } from "./store.js";
import { runTick, type LiveDeps, type TickDeps } from "./tick.js";
import { executorOf } from "./executor.js";
import type { HostedSession } from "./deps.js";
import type { AiDeps } from "./ai.js";
import { ownerSince, poolDay } from "./spend.js";
import { agentSpend, aiInfo, connectOwn, disconnectOwn } from "./aiAccount.js";
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
export { ownConnect } from "./aiAccount.js";

/**
 * Hosted agents: the owner's routes and the scheduler that ticks them (started by createApp).
 * Paper and live agents with the rule or webhook brain run here; live agents trade through the
 * session attached to their executor, whose key the signing service holds.
 */
export function createHosted(d: {
  config: Config;
  chain: PublicClient;
  market: Pick<Market, "mark">;
  db: Db;
  clock: () => number;
  logger?: Logger;
  executors: ExecutorPort | null;
  sequencer: Sequencer;
  liveSessionsOf: (executor: Address) => Promise<string[]>;
  assertNotSanctioned: HostedDeps["assertNotSanctioned"];
  sessionOf: (id: string) => Promise<HostedSession | null>;
  revokeSession: HostedDeps["revokeSession"];
  trade: LiveDeps["trade"];
  submit: LiveDeps["submit"];
  onStopped?: HostedDeps["onStopped"];
  beforeSettings?: HostedDeps["beforeSettings"];
  practice?: TickDeps["practice"];
  scheduler?: {
    intervalMs?: number;
    leaseMs?: number;
    concurrency?: number;
    tickTimeoutMs?: number;
    instance?: string;
  };
  webhookTimeoutMs?: number;
}) {
  const store = createHostedStore(d.db);
  const live: LiveDeps = {
    sessionOf: d.sessionOf,
    trade: d.trade,
    submit: d.submit,
    signTrade: d.executors ? (e, tx) => d.executors!.signTrade(e, tx) : null,
    executorOf: (id) => executorOf({ store }, id),
  };
  const tickDeps = {
    config: d.config,
    chain: d.chain,
    market: d.market,
    store,
    clock: d.clock,
    logger: d.logger,
    allowPrivateWebhooks: d.config.devnet,
    webhookTimeoutMs: d.webhookTimeoutMs,
    live,
    ai: aiDepsOf(d),
    practice: d.practice,
  };
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
    onStopped: d.onStopped,
    beforeSettings: d.beforeSettings,
  };
  return {
    store,
    scheduler,
    create: (body: Record<string, unknown>, who: Owner) => createAgent(h, body, who),
    list: (who: Owner) => listAgents(h, who),
    /** me/sessions' hosted rows: id, name, status, strategy, mode, live, trading, pairs, session_id, pause_reason. */
    async summaries(wallet: Address) {
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
    },
    detail: (id: string, who: Owner) => agentDetail(h, id, who),
    update: (id: string, body: Record<string, unknown>, who: Owner) => updateAgent(h, id, body, who),
    pause: (id: string, who: Owner) => pauseAgent(h, id, who),
    resume: (id: string, who: Owner) => resumeAgent(h, id, who),
    stop: (id: string, who: Owner) => stopAgent(h, id, who),
    remove: (id: string, who: Owner) => deleteAgent(h, id, who),
    logs: (id: string, query: Record<string, string>, who: Owner) => agentLogs(h, id, query, who),
    rotateWebhookSecret: (id: string, who: Owner) => rotateWebhookSecret(h, id, who),
    executor: (id: string, who: Owner) => agentExecutor(h, id, who),
    refundGas: (id: string, who: Owner, body: Record<string, unknown>) => agentRefundGas(h, id, who, body),
    rotateExecutor: (id: string, who: Owner, body: Record<string, unknown>) => rotateExecutor(h, id, who, body),
    attachSession: (
      id: string,
      who: Owner,
      body: Record<string, unknown>,
      schema: Parameters<typeof attachSession>[4],
    ) => attachSession(h, id, who, body, schema),
    stockAttestation: (
      id: string,
      who: Owner,
      body: Record<string, unknown>,
      schema: Parameters<typeof addStockAttestation>[4],
    ) => addStockAttestation(h, id, who, body, schema),
    revokeStockAttestation: (id: string, who: Owner, body: Record<string, unknown>) =>
      revokeStockAttestation(h, id, who, body),
    aiInfo: (who: Owner) => aiInfo(h, who),
    spend: (id: string, query: Record<string, string>, who: Owner) => agentSpend(h, id, query, who),
    connectOwn: (who: Owner, body: Record<string, unknown>) => connectOwn(h, who, body),
    disconnectOwn: (who: Owner) => disconnectOwn(h, who),
    /** stats.ai_pool: null when the pool is off. */
    async aiPool() {
      if (!d.config.ai.gatewayUrl || d.config.ai.pool.usdDay <= 0) return null;
      const p = await poolDay(d.db, d.config.ai, d.clock());
      return {
        pool_usd: p.pool_usd,
        left_usd: p.left_usd,
        owners_funded: p.owners_funded,
        agents_funded: p.agents_funded,
      };
    },
  };
}

export type Hosted = ReturnType<typeof createHosted>;

/** The AI brain's gateway clients (one per key: the service's, or an owner's own) and the owner's trial start. */
function aiDepsOf(d: { config: Config; db: Db; clock: () => number }): AiDeps | undefined {
  const url = d.config.ai.gatewayUrl;
  if (!url) return undefined;
  const clients = new LRUCache<string, GatewayPort>({ max: 1_000 });
  // An account's creation time never changes: read once per owner.
  const since = new LRUCache<string, number>({ max: 100_000 });
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
