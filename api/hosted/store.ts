import { randomBytes } from "node:crypto";
import type { Address } from "viem";
import type { Db } from "../ports/store/db.js";
import type { Limits } from "./request.js";

export type AgentStatus = "active" | "paused" | "stopped";
export type Terms = { accept_risks: string[]; shield: boolean; policies: { block_risks: string[] } };
/** A paper book: atoms per token address (lower case), as decimal strings. */
export type PaperBook = Record<string, string>;

export type StoredAgent = {
  id: string;
  wallet: Address;
  keyId: number;
  name: string;
  brain: "rule" | "webhook" | "partner_llm";
  params: Record<string, unknown>;
  intervalS: number;
  pairs: string[];
  limits: Limits;
  mode: "paper" | "live";
  status: AgentStatus;
  pauseReason: { code: string; message?: string } | null;
  terms: Terms;
  webhookSecret: string | null;
  paperBook: PaperBook | null;
  brainState: Record<string, unknown> | null;
  lastDecision: Record<string, unknown> | null;
  lastTrade: Record<string, unknown> | null;
  /** The session attached to a live agent's executor, or null. */
  sessionId: string | null;
  createdAt: number;
  updatedAt: number;
  deletedAt: number | null;
};

/** SPEC's `live`: a live agent running with its session attached. */
export const isLive = (a: Pick<StoredAgent, "mode" | "status" | "sessionId">) =>
  a.mode === "live" && a.status === "active" && a.sessionId !== null;

const json = (v: unknown) => (v === null || v === undefined ? null : JSON.stringify(v));
const parsed = <T>(v: unknown): T | null => (typeof v === "string" ? (JSON.parse(v) as T) : null);

function agentFrom(r: Record<string, unknown>): StoredAgent {
  return {
    id: r.id as string,
    wallet: r.wallet as Address,
    keyId: Number(r.key_id),
    name: r.name as string,
    brain: r.brain as StoredAgent["brain"],
    params: parsed(r.params) ?? {},
    intervalS: Number(r.interval_s),
    pairs: parsed(r.pairs) ?? [],
    limits: parsed(r.limits)!,
    mode: r.mode as StoredAgent["mode"],
    status: r.status as AgentStatus,
    pauseReason: parsed(r.pause_reason),
    terms: parsed(r.terms)!,
    webhookSecret: (r.webhook_secret as string | null) ?? null,
    paperBook: parsed(r.paper_book),
    brainState: parsed(r.brain_state),
    lastDecision: parsed(r.last_decision),
    lastTrade: parsed(r.last_trade),
    sessionId: (r.session_id as string | null) ?? null,
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
    deletedAt: r.deleted_at === null || r.deleted_at === undefined ? null : Number(r.deleted_at),
  };
}

export const newAgentId = () => `ha_${randomBytes(9).toString("base64url")}`;
/** A Standard Webhooks secret: 32 random bytes, base64, `whsec_` prefix. */
export const newWebhookSecret = () => `whsec_${randomBytes(32).toString("base64")}`;

export type LogRow = {
  id: number;
  agent_id: string;
  tick: number | null;
  kind: string;
  code: string | null;
  at: number;
  [k: string]: unknown;
};

/** The fields an owner's action (or a stop) may change. */
type AgentChange = Partial<
  Pick<
    StoredAgent,
    | "name"
    | "brain"
    | "params"
    | "intervalS"
    | "pairs"
    | "limits"
    | "status"
    | "pauseReason"
    | "terms"
    | "webhookSecret"
    | "deletedAt"
    | "sessionId"
  >
>;

const oneAgent = async (db: Db, text: string, params: unknown[]) => {
  const [r] = await db.query(text, params);
  return r ? agentFrom(r) : null;
};

/** The hosted domain's tables: agents, schedule, ticks and logs. */
export function createHostedStore(db: Db) {
  return {
    db,
    /**
     * Inserts the agent and its schedule row (first tick at `firstTickMs`) in one transaction;
     * null past `maxPerWallet` live (not deleted) agents.
     */
    create: (a: StoredAgent, firstTickMs: number, maxPerWallet: number): Promise<StoredAgent | null> =>
      insertAgent(db, a, firstTickMs, maxPerWallet),
    /** The agent, deleted ones included (their executor stays viewable). */
    get: (id: string) => oneAgent(db, "SELECT * FROM app.hosted_agents WHERE id = $1", [id]),
    async list(wallet: Address): Promise<StoredAgent[]> {
      return (
        await db.query(
          "SELECT * FROM app.hosted_agents WHERE wallet = $1 AND deleted_at IS NULL ORDER BY created_at, id",
          [wallet.toLowerCase()],
        )
      ).map(agentFrom);
    },
    /**
     * Writes the fields given, only while the agent is in one of `from` (a state change that lost a
     * race answers null).
     */
    update: (id: string, from: AgentStatus[], set: AgentChange, now: number): Promise<StoredAgent | null> =>
      updateAgent(db, id, from, set, now),
    async log(
      agentId: string,
      tick: number | null,
      kind: string,
      code: string | null,
      body: Record<string, unknown>,
      now: number,
    ): Promise<void> {
      await db.query(
        `INSERT INTO app.hosted_logs (agent_id, tick_seq, kind, code, body, created_at)
         VALUES ($1, $2, $3, $4, $5, $6)`,
        [agentId, tick, kind, code, JSON.stringify(body), now],
      );
    },
    logs: (agentId: string, o: { limit: number; before?: number; kinds?: string[] }) => logRows(db, agentId, o),
    /**
     * Takes a tick's slot: only while this instance still holds the schedule's lease (a tick that
     * outlived its timeout, or whose lease another instance took, takes nothing), and once per agent
     * and seq (its app.hosted_ticks row). One statement.
     */
    takeSlot: async (slot: TickSlot, nowMs: number): Promise<boolean> =>
      (await db.query(`${SLOT_CTES} SELECT 1 FROM tick`, slotParams(slot, nowMs))).length === 1,
    commitPaper: (slot: TickSlot, c: PaperCommit, nowMs: number) => commitPaper(db, slot, c, nowMs),
  };
}

/** A tick's slot: the agent, its schedule's seq (the fencing token), the due time, the leasing instance. */
export type TickSlot = { agentId: string; seq: number; dueMs: number; instance: string };
/** What a paper tick writes with its slot: the agent's columns and its log entries, in order. */
export type PaperCommit = {
  book: PaperBook;
  brainState: Record<string, unknown>;
  lastDecision: Record<string, unknown>;
  lastTrade: Record<string, unknown> | null;
  entries: { kind: string; code: string | null; body: Record<string, unknown> }[];
};

/**
 * The slot is taken only while this instance holds the schedule row's lease (locked until the
 * statement commits, so a re-lease waits for it) and only once per (agent, seq) and (agent, due):
 * `tick` is empty otherwise. Parameters $1-$5 (slotParams).
 */
const SLOT_CTES = `WITH slot AS (
    SELECT 1 FROM app.hosted_schedule WHERE agent_id = $1 AND tick_seq = $2 AND lease_owner = $3 FOR UPDATE
  ), tick AS (
    INSERT INTO app.hosted_ticks (agent_id, tick_seq, due_ms, ran_at_ms, instance)
    SELECT $1, $2, $4, $5, $3 FROM slot ON CONFLICT DO NOTHING RETURNING tick_seq
  )`;
const slotParams = (t: TickSlot, nowMs: number) => [t.agentId, t.seq, t.instance, t.dueMs, nowMs];

/**
 * The paper tick's slot, book, state, decision and logs as one statement (one round trip, atomic as
 * a transaction): nothing is written unless the slot is taken. Log bodies go as text, byte for byte,
 * in the entries' order (ids rise with it).
 */
async function commitPaper(db: Db, slot: TickSlot, c: PaperCommit, nowMs: number): Promise<boolean> {
  const rows = await db.query(
    `${SLOT_CTES}, agent AS (
       UPDATE app.hosted_agents SET paper_book = $6, brain_state = $7, last_decision = $8,
         last_trade = COALESCE($9, last_trade), updated_at = $5 WHERE id = $1 AND EXISTS (SELECT 1 FROM tick)
     ), logs AS (
       INSERT INTO app.hosted_logs (agent_id, tick_seq, kind, code, body, created_at)
       SELECT $1, $2, e.kind, e.code, e.body, $5 FROM tick,
         unnest($10::text[], $11::text[], $12::text[]) WITH ORDINALITY AS e(kind, code, body, n) ORDER BY e.n
     )
     SELECT 1 FROM tick`,
    [
      ...slotParams(slot, nowMs),
      JSON.stringify(c.book),
      JSON.stringify(c.brainState),
      JSON.stringify(c.lastDecision),
      json(c.lastTrade),
      c.entries.map((e) => e.kind),
      c.entries.map((e) => e.code),
      c.entries.map((e) => JSON.stringify(e.body)),
    ],
  );
  return rows.length === 1;
}

async function insertAgent(db: Db, a: StoredAgent, firstTickMs: number, maxPerWallet: number) {
  return db.tx(async (tx) => {
    // One wallet's creates are serialised so two at once cannot both be the 20th.
    await tx.query("SELECT pg_advisory_xact_lock(4663002, hashtext($1))", [a.wallet.toLowerCase()]);
    const [n] = await tx.query<{ n: string }>(
      "SELECT count(*)::text AS n FROM app.hosted_agents WHERE wallet = $1 AND deleted_at IS NULL",
      [a.wallet.toLowerCase()],
    );
    if (Number(n?.n ?? 0) >= maxPerWallet) return null;
    await tx.query(
      `INSERT INTO app.hosted_agents (id, wallet, key_id, name, brain, params, interval_s, pairs, limits, mode,
         status, pause_reason, terms, webhook_secret, paper_book, brain_state, last_decision, last_trade,
         created_at, updated_at)
       VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,NULL,NULL,NULL,$16,$16)`,
      [
        a.id,
        a.wallet.toLowerCase(),
        a.keyId,
        a.name,
        a.brain,
        json(a.params),
        a.intervalS,
        json(a.pairs),
        json(a.limits),
        a.mode,
        a.status,
        json(a.pauseReason),
        json(a.terms),
        a.webhookSecret,
        json(a.paperBook),
        a.createdAt,
      ],
    );
    await tx.query("INSERT INTO app.hosted_schedule (agent_id, next_tick_ms) VALUES ($1, $2)", [a.id, firstTickMs]);
    return a;
  });
}

async function updateAgent(db: Db, id: string, from: AgentStatus[], set: AgentChange, now: number) {
  const cols: Record<string, unknown> = {
    name: set.name,
    brain: set.brain,
    params: set.params === undefined ? undefined : json(set.params),
    interval_s: set.intervalS,
    pairs: set.pairs === undefined ? undefined : json(set.pairs),
    limits: set.limits === undefined ? undefined : json(set.limits),
    status: set.status,
    pause_reason: set.pauseReason === undefined ? undefined : json(set.pauseReason),
    terms: set.terms === undefined ? undefined : json(set.terms),
    webhook_secret: set.webhookSecret,
    deleted_at: set.deletedAt,
    session_id: set.sessionId,
  };
  const keys = Object.keys(cols).filter((k) => cols[k] !== undefined);
  const params: unknown[] = [id, from, now, ...keys.map((k) => cols[k])];
  const assignments = ["updated_at = $3", ...keys.map((k, i) => `${k} = $${i + 4}`)].join(", ");
  return oneAgent(
    db,
    `UPDATE app.hosted_agents SET ${assignments}
     WHERE id = $1 AND status = ANY($2) AND deleted_at IS NULL RETURNING *`,
    params,
  );
}

async function logRows(
  db: Db,
  agentId: string,
  o: { limit: number; before?: number; kinds?: string[] },
): Promise<LogRow[]> {
  const rows = await db.query<{
    id: string;
    agent_id: string;
    tick_seq: string | null;
    kind: string;
    code: string | null;
    body: string;
    created_at: string;
  }>(
    `SELECT * FROM app.hosted_logs WHERE agent_id = $1 AND ($2::bigint IS NULL OR id < $2)
     AND ($3::text[] IS NULL OR kind = ANY($3)) ORDER BY id DESC LIMIT $4`,
    [agentId, o.before ?? null, o.kinds ?? null, o.limit],
  );
  return rows.map((r) => ({
    ...(JSON.parse(r.body) as Record<string, unknown>),
    id: Number(r.id),
    agent_id: r.agent_id,
    tick: r.tick_seq === null ? null : Number(r.tick_seq),
    kind: r.kind,
    code: r.code,
    at: Number(r.created_at),
  }));
}

export type HostedStore = ReturnType<typeof createHostedStore>;
