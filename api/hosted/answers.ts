import { z } from "zod";
import { address, atoms, hex, named, txHash, unixS, usd } from "../http/answers.js";

/**
 * The answers of SPEC "Hosted agents" as zod schemas, in SPEC's words: the OpenAPI document's (api/openapi), and
 * test/answers.test.ts checks the code's answer types fit them.
 */

/** The agent's terms, or its session's (SPEC "Hosted agent" terms / session_terms). */
const termsView = z
  .object({
    fee_schedule: z.number().int().describe("2 (1 for a session granted before schedule 2, which keeps fee_bps)"),
    fees: z.object({ major_max_bps: z.number(), major_min_bps: z.number(), other_bps: z.number() }),
    fee_bps: z.number().optional().describe("schedule 1 only"),
    accept_risks: z.array(z.string()),
    shield: z.boolean(),
    policies: z.object({ block_risks: z.array(z.string()), shield_policies: z.array(z.string()).optional() }),
  })
  .describe("Terms: fees {major_max_bps, major_min_bps, other_bps}, fee_schedule, risks accepted, Shield.");

/** Atoms of a token with its decimals. */
const held = z.object({ atoms: atoms, decimals: z.number().int() });

/** The executor's gas against what about twenty redeems cost. */
const gasState = z.object({
  executor: address,
  balance_wei: atoms,
  min_balance_wei: atoms,
  enough: z.boolean(),
  top_up: z.object({ wei: atoms, usd: usd.nullable(), to: address }).nullable(),
});

/** What the agent waits on (null when nothing). */
const watch = z
  .object({
    next_tick_at: unixS.nullable().describe("its next tick; null when it does not tick"),
    hold: z
      .object({ code: z.string(), message: z.string().nullable(), since: unixS, tick: z.number().int() })
      .nullable()
      .describe("the hold its newest tick met, and since when"),
    session_ending: z
      .object({ session_id: z.string(), expires: unixS, seconds_left: z.number() })
      .nullable()
      .describe("its attached session, when it ends soon"),
    executor_gas: gasState.nullable().describe("its executor, when the gas is under about twenty redeems"),
  })
  .nullable();

/** A live agent's stats from its mined live trades. */
const liveStats = z
  .object({
    trades: z.number().int(),
    pending: z.number().int().describe("relayed, not yet mined"),
    volume_usd: usd,
    fees_usd: usd,
    realised_usd: usd,
    open_usd: usd,
    profit_usd: usd,
    positions: z.record(held).describe("net atoms each token moved, by symbol"),
  })
  .nullable()
  .describe("null for a paper agent");

/** The AI-model brain's `ai` object: model, funding, today's spend. */
const aiView = z.object({
  model: z.string(),
  funding: z.enum(["service", "own"]),
  fallback_own: z.boolean(),
  budget_usd_day: usd,
  max_orders: z.number().int(),
  template: z.string().nullable(),
  today_usd: usd,
  today_calls: z.number().int(),
});

/** The stock-token attestation of a live agent (detail only). */
const stockAttestation = z
  .object({
    session_id: z.string(),
    issued: unixS,
    expires: unixS,
    signed_at: unixS,
    valid: z.boolean(),
    why_not: z.string().nullable().describe("REVOKED, EXPIRED or SESSION_MISMATCH; null when valid"),
  })
  .nullable();

/** SPEC "Hosted agent": the list's shape; the detail adds the fields marked "detail". */
export const agentAnswer = named(
  "HostedAgent",
  z
    .object({
      id: z.string().describe("ha_<id>"),
      name: z.string(),
      brain: z.enum(["rule", "webhook", "partner_llm"]).describe("partner_llm is the AI-model brain"),
      params: z.record(z.unknown()).describe("the brain's settings"),
      interval_s: z.number().int(),
      pairs: z.array(z.string()).describe("pairs as SYMBOL/SYMBOL"),
      limits: z.object({ max_trade_usd: usd, max_day_usd: usd, max_position_usd: usd }),
      mode: z.enum(["paper", "live"]),
      live: z.boolean().describe("a live agent running with its session attached"),
      status: z.enum(["active", "paused", "stopped"]),
      pause_reason: z
        .object({ code: z.string().describe("OWNER when the owner paused"), message: z.string().optional() })
        .nullable(),
      trading: z.boolean(),
      session_id: z.string().nullable(),
      executor: address.nullable(),
      terms: termsView,
      session_terms: termsView.nullable(),
      tokens: z.array(z.object({ symbol: z.string(), address: address, decimals: z.number().int() })),
      pnl: z
        .object({ start_usd: usd, value_usd: usd, usd: usd, pct: z.number().nullable() })
        .nullable()
        .describe("the brain's book against its start"),
      last_decision: z.record(z.unknown()).nullable(),
      live_stats: liveStats,
      watch,
      created_at: z.number(),
      deleted_at: z.number().optional(),
      ai: aiView.optional().describe("AI agents: model, funding, today's spend"),
      brain_state: z.record(z.unknown()).nullable().optional().describe("detail"),
      last_trade: z.record(z.unknown()).nullable().optional().describe("detail"),
      paper_book: z.record(held).nullable().optional().describe("detail, paper agents: atoms by symbol"),
      session_root_hash: hex.nullable().optional().describe("detail, live agents"),
      session_expires: unixS.nullable().optional().describe("detail, live agents"),
      stock_attestation: stockAttestation.optional().describe("detail, live agents"),
      stock_attestation_not_before: unixS.nullable().optional().describe("detail, live agents"),
      stock_tokens: z.array(z.string()).optional().describe("detail, live agents"),
      gas_refund: z
        .object({
          tx_hash: txHash,
          status: z.string().describe("mined, reverted, sent or uncertain"),
          value_wei: atoms,
          block: z.number().int().nullable(),
        })
        .nullable()
        .optional()
        .describe("detail, live agents: the last refund"),
    })
    .describe("A hosted agent: the agents the service runs for a wallet (paper or live)."),
);

/** GET hosted. */
export const agentsAnswer = named("HostedAgents", z.object({ agents: z.array(agentAnswer) }));

/** The signing service's attestation that it holds the executor's key for this agent only. */
const executorAttestation = z.object({
  executor: address,
  agent_id: z.string(),
  owner: address,
  chain_id: z.number().int(),
  issued_at: unixS,
  message: z.string(),
  signature: hex,
});

/** The agent with fields an action adds beside it. */
const agentWith = <T extends z.ZodRawShape>(name: string, extra: T, description: string) =>
  named(name, agentAnswer.and(z.object(extra)).describe(description));

/** POST hosted (201): the agent; a live one comes back paused with its executor's attestation. */
export const createdAnswer = agentWith(
  "HostedAgentCreated",
  {
    executor_attestation: z
      .unknown()
      .describe("live agents: {executor, agent_id, owner, chain_id, issued_at, message, signature}"),
    webhook_secret: z.string().optional().describe("webhook agents: shown once"),
  },
  "The new agent; a live agent comes back paused with executor and executor_attestation.",
);

/** The session revoked at the service by stop or rotate-executor: steps for the main key to send on chain. */
const sessionRevoke = z.record(z.unknown()).nullable().describe("the session revoked at the service, or null");

/** POST hosted/<id>/stop. */
export const stoppedAnswer = agentWith(
  "HostedAgentStopped",
  { session_revoke: sessionRevoke },
  "The stopped agent (final); its session revoked at the service, with on-chain steps for the main key.",
);

/** POST hosted/<id>/delete. */
export const deletedAnswer = agentWith(
  "HostedAgentDeleted",
  { deleted: z.boolean().describe("always true") },
  "The deleted agent.",
);

/** POST hosted/<id>/rotate-webhook-secret. */
export const webhookSecretAnswer = agentWith(
  "HostedAgentWebhookSecret",
  { webhook_secret: z.string().describe("shown once; the old one stops at once") },
  "The agent with its new webhook secret.",
);

/** POST hosted/<id>/rotate-executor. */
export const rotatedAnswer = agentWith(
  "HostedAgentRotated",
  {
    retired_executor: address.nullable(),
    session_revoke: sessionRevoke,
    executor_attestation: executorAttestation.optional(),
  },
  "The agent, paused, with a new executor; its session revoked at the service.",
);

/** POST hosted/<id>/stock-attestation/revoke. */
export const attestationRevokedAnswer = agentWith(
  "HostedAgentAttestationRevoked",
  { revoked: z.boolean(), signer_revoked: z.boolean().describe("revoked at the signing service too") },
  "The agent with its stock attestation revoked.",
);

/** GET hosted/<id>/executor (SPEC "Executor view"). */
export const executorAnswer = named(
  "HostedExecutor",
  z
    .object({
      executor: address,
      balance_wei: atoms,
      balance_usd: usd.nullable(),
      min_balance_wei: atoms,
      min_balance_usd: usd.nullable(),
      enough: z.boolean(),
      top_up: z.object({ wei: atoms, usd: usd.nullable(), to: address }).nullable(),
      refund: z.object({
        available: z.boolean(),
        why_not: z.string().nullable(),
        route: z.string(),
        last: z.record(z.unknown()).nullable(),
      }),
      executor_attestation: executorAttestation.nullable(),
    })
    .describe("The agent's executor: its gas, top-up and refund."),
);

/** GET hosted/<id>/logs. */
export const logsAnswer = named(
  "HostedLogs",
  z
    .object({
      id: z.string(),
      rows: z.array(
        z
          .object({
            id: z.number().int(),
            agent_id: z.string(),
            tick: z.number().int().nullable(),
            kind: z.string().describe("decision, trade, hold, session, watch..."),
            code: z.string().nullable(),
            at: z.number().describe("unix milliseconds"),
          })
          .catchall(z.unknown())
          .describe("a log row; a trade row records fee_bps, fee_class, fee_tier"),
      ),
      next_before: z.number().int().nullable(),
    })
    .describe("The agent's log, newest first."),
);

/** POST hosted/<id>/refund-gas. */
export const refundAnswer = named(
  "HostedGasRefund",
  z
    .object({
      id: z.string(),
      executor: address,
      to: address.describe("the owner the service recorded"),
      value_wei: atoms,
      balance_wei: atoms,
      tx_hash: txHash,
      raw: hex,
      nonce: z.number().int(),
      gas: z.number().int(),
      max_fee_per_gas: atoms,
      max_cost_wei: atoms,
      status: z.string().describe("mined, reverted, sent (no receipt yet) or uncertain"),
      block: z.number().int().nullable(),
      already: z.boolean().describe("a repeat before mined: the same signed transaction"),
      relay_error: z.string().nullable(),
      closed: z.boolean(),
    })
    .describe("The executor's ETH sent back to the owner."),
);

/** The owner's own gateway key: connected or not, and what it paid today (GET hosted/ai funding.own). */
export const ownFundingAnswer = named(
  "HostedAiOwnFunding",
  z
    .object({
      available: z.boolean().describe("this server takes owners' own gateway keys"),
      connected: z.boolean(),
      sub_hint: z.string().nullable().describe("the key's last four characters; the key is never shown"),
      connected_at: unixS.nullable(),
      day_cap_usd: usd.nullable().describe("the most the own key pays a day"),
      today_usd: usd,
    })
    .describe("The owner's own gateway key: whether it is connected and what it paid today."),
);

/** POST hosted/ai/own/disconnect. */
export const ownDisconnectedAnswer = named(
  "HostedAiOwnDisconnected",
  ownFundingAnswer
    .extend({ disconnected: z.boolean().describe("a key was connected and is erased now") })
    .describe("The owner's own gateway key erased; own-funded ticks hold DISCONNECTED."),
);

/** GET hosted/ai (SPEC: prices are USD per million tokens). */
export const aiInfoAnswer = named(
  "HostedAi",
  z
    .object({
      enabled: z.boolean().describe("false if the server cannot call a model"),
      min_interval_s: z.number().int().describe("an AI agent ticks at most this often (300)"),
      max_orders: z.number().int(),
      strategy_max: z.number().int().describe("the longest strategy text"),
      budget_default_usd: usd,
      budget_max_usd: usd,
      templates: z.array(
        z.object({ id: z.string(), title: z.string(), interval_s: z.number().int(), strategy: z.string() }),
      ),
      models: z.array(
        z.object({
          id: z.string(),
          price: z
            .object({ input: usd, output: usd, structured: usd.nullable(), source: z.string() })
            .describe("USD per million tokens"),
          available: z.boolean(),
          stand_in: z.boolean().describe("no model is behind it (the devnet's stand-in gateway)"),
          estimate: z.object({
            max_completion_tokens: z.number().int(),
            worst_case_usd_per_call: usd,
          }),
        }),
      ),
      app_fee_pct: z.number().describe("the service adds nothing to a model's price (0)"),
      funding: z.object({
        own: ownFundingAnswer,
        service: z
          .object({
            available: z.boolean(),
            pool_state: z.enum(["off", "spent", "open"]),
            pool_usd: usd,
            pool_left_usd: usd,
            basis: z.literal("utc_day"),
            owners_funded: z.number().int(),
            agents_funded: z.number().int(),
            models: z.array(z.string()).describe("the models the pool pays for"),
            min_interval_s: z.number().int(),
            owner_share_max_usd: usd,
            live_share_usd: usd,
            trial_share_usd: usd,
            trial_days: z.number(),
            trial_until: unixS.nullable(),
            trial_open: z.boolean(),
            today_usd: usd,
          })
          .describe("the service's own credits: a daily pool shared by owners"),
      }),
    })
    .describe("The AI-model brain: its models and prices, templates, limits and this owner's funding."),
);

/** One AI call (or hold) of an agent (SPEC "AI spend row"). */
const spendRow = z.object({
  id: z.number().int(),
  ts: z.number().describe("unix milliseconds"),
  source: z.enum(["service", "own"]).nullable().describe("who paid: the service's credits or the owner's key"),
  model: z.string(),
  status: z.enum(["ok", "invalid", "error", "hold"]),
  pending: z.literal(true).optional().describe("in flight: counted at its worst case until it settles"),
  code: z.string().nullable(),
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  cost_usd: usd,
  cost_source: z.string().nullable().describe("usage, the gateway's cost header, or bound (the worst case)"),
  ms: z.number().nullable(),
  pool_hold: z.string().optional().describe("why the service's credits did not pay"),
});

/** GET hosted/<id>/spend. */
export const spendAnswer = named(
  "HostedAiSpend",
  z
    .object({
      id: z.string(),
      ai: z.object({
        model: z.string(),
        funding: z.enum(["service", "own"]),
        fallback_own: z.boolean(),
        budget_usd_day: usd,
        budget_left_usd: usd,
        today: z.object({
          usd,
          calls: z.number().int(),
          by_source: z.object({ service: usd, own: usd }),
          prompt_tokens: z.number().int(),
          completion_tokens: z.number().int(),
        }),
        last: spendRow.nullable(),
        pool: z
          .object({
            eligible: z.boolean(),
            kind: z.enum(["live", "trial"]).nullable(),
            why_not: z.string().nullable(),
            share_usd: usd,
            owner_used_usd: usd,
            share_left_usd: usd,
            pool_usd: usd,
            pool_left_usd: usd,
          })
          .nullable()
          .describe("the service's pool for this agent; null when its owner's key pays"),
      }),
      rows: z.array(spendRow).describe("newest first"),
      next_before: z.number().int().nullable(),
    })
    .describe("An AI agent's budget, today's spend, the pool's view of it and its calls."),
);
