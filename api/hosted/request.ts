import type { Hex } from "viem";
import { z } from "zod";
import { Refusal } from "../errors/index.js";

/** Symbols or addresses of tokens a pair names ("ETH/USDG"). */
const pair = z.string().regex(/^[A-Za-z0-9x]{1,42}\/[A-Za-z0-9x]{1,42}$/, 'a pair is "TOKEN/TOKEN", e.g. "ETH/USDG"');
const usd = (max: number) => z.number().finite().positive().max(max);

export const limitsSchema = z
  .object({
    max_trade_usd: usd(1_000),
    max_day_usd: usd(100_000),
    max_position_usd: usd(1_000_000),
  })
  .strict()
  .refine((l) => l.max_day_usd >= l.max_trade_usd && l.max_day_usd <= 100 * l.max_trade_usd, {
    message: "max_day_usd must be from max_trade_usd to 100 times it",
    path: ["max_day_usd"],
  });

export const ruleParams = z
  .object({
    /** Target weight per token (symbols of the agent's pairs), summing to 1. */
    targets: z.record(z.string().min(1).max(42), z.number().finite().min(0).max(1)),
    /** Drift from a target, in bps of the book's value, before the agent trades. */
    band_bps: z.number().int().min(10).max(5_000).default(200),
  })
  .strict()
  .refine((p) => Math.abs(Object.values(p.targets).reduce((s, w) => s + w, 0) - 1) < 1e-6, {
    message: "targets must sum to 1",
    path: ["targets"],
  });

export const webhookParams = z
  .object({
    url: z
      .string()
      .url()
      .max(2_048)
      .refine((u) => /^https?:\/\//.test(u), "must be an http(s) URL"),
  })
  .strict();

/** SPEC GET hosted/ai: AI ticks at most every 300 s, up to 5 orders, a strategy of at most 2,000 characters. */
export const AI_LIMITS = {
  minIntervalS: 300,
  maxOrders: 5,
  defaultOrders: 3,
  strategyMax: 2_000,
  budgetDefaultUsd: 1,
  budgetMaxUsd: 20,
} as const;

export const aiParams = z
  .object({
    /** The owner's instructions to the model; a template's when only `template` is given. */
    strategy: z.string().trim().min(1).max(AI_LIMITS.strategyMax).optional(),
    model: z.string().min(1).max(100),
    funding: z.enum(["service", "own"]).default("service"),
    fallback_own: z.boolean().default(true),
    template: z.string().min(1).max(40).optional(),
    budget_usd_day: z.number().finite().positive().max(AI_LIMITS.budgetMaxUsd).default(AI_LIMITS.budgetDefaultUsd),
    max_orders: z.number().int().min(1).max(AI_LIMITS.maxOrders).default(AI_LIMITS.defaultOrders),
  })
  .strict()
  .refine((p) => p.strategy !== undefined || p.template !== undefined, {
    message: "strategy (or a template) is required",
    path: ["strategy"],
  });
export type AiParams = z.infer<typeof aiParams>;

/** What a model must answer: exactly orders and a note, nothing else (validated strictly: AI_SCHEMA). */
export const aiAnswer = z
  .object({
    orders: z.array(
      z
        .object({
          token_in: z.string().min(1).max(42),
          token_out: z.string().min(1).max(42),
          amount_usd: z.number().finite(),
        })
        .strict(),
    ),
    note: z.string().max(500),
  })
  .strict();

export const BRAINS = ["rule", "webhook", "partner_llm"] as const;

const common = {
  name: z.string().trim().min(1).max(64).optional(),
  interval_s: z.number().int().min(10).max(86_400),
  pairs: z.array(pair).min(1).max(10),
  limits: limitsSchema,
  accept_risks: z
    .array(z.string().regex(/^[A-Z_]{2,32}$/))
    .max(20)
    .optional(),
  shield: z.boolean().optional(),
  policies: z
    .object({
      block_risks: z
        .array(z.string().regex(/^[A-Z_]{2,32}$/))
        .max(20)
        .optional(),
    })
    .strict()
    .optional(),
};

export const createRequest = z
  .object({
    brain: z.enum(BRAINS),
    params: z.record(z.unknown()),
    mode: z.enum(["paper", "live"]).default("paper"),
    /** Paper book to start from: whole units per token symbol (default 10,000 USDG). */
    paper_book: z
      .record(z.string().min(1).max(42), z.string().regex(/^\d{1,15}(\.\d{1,18})?$/, "a decimal amount in whole units"))
      .optional(),
    ...common,
  })
  .strict();

export const updateRequest = z
  .object({
    brain: z.enum(BRAINS).optional(),
    params: z.record(z.unknown()).optional(),
    live: z.boolean().optional(),
    name: common.name,
    interval_s: common.interval_s.optional(),
    pairs: common.pairs.optional(),
    limits: common.limits.optional(),
    accept_risks: common.accept_risks,
    shield: common.shield,
    policies: common.policies,
  })
  .strict();

export type Limits = z.infer<typeof limitsSchema>;
export type RuleParams = z.infer<typeof ruleParams>;

/** Orders a brain may answer: at most 5 a tick, each inside the agent's pairs and per-trade limit. */
export const ordersAnswer = z
  .object({
    orders: z
      .array(
        z
          .object({
            token_in: z.string().min(1).max(42),
            token_out: z.string().min(1).max(42),
            amount_usd: z.number().finite().positive(),
          })
          .strict(),
      )
      .max(5),
    note: z.string().max(500).optional(),
  })
  .strict();
export type Order = z.infer<typeof ordersAnswer>["orders"][number];

/** POST hosted/<id>/session and hosted/<id>/stock-attestation bodies. */
export const sessionBody = z.object({ session_id: z.string().min(1).max(64) }).strict();
export const attestationBody = z
  .object({
    session_id: z.string().min(1).max(64),
    issued: z.number().int().nonnegative(),
    expires: z.number().int().nonnegative(),
    signature: z
      .string()
      .regex(/^0x[0-9a-fA-F]{130}$/, "a 65-byte signature")
      .transform((x) => x as Hex),
  })
  .strict();

export const LOG_KINDS = ["decision", "trade", "hold", "session", "watch", "error"] as const;

/**
 * limit (1 to 200, default 50) and before (a row id) of a paged hosted listing; any other
 * parameter but `also` is BAD_REQUEST, in these words.
 */
export function pageOf(
  query: Record<string, string>,
  also: string[] = [],
): { limit: number; before: number | undefined } {
  const extra = Object.keys(query).find((k) => !["limit", "before", ...also].includes(k));
  if (extra) throw new Refusal("BAD_REQUEST", `unknown query parameter ${extra}`);
  const limit = query.limit === undefined ? 50 : Number(query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 200)
    throw new Refusal("BAD_REQUEST", "limit must be an integer from 1 to 200");
  const before = query.before === undefined ? undefined : Number(query.before);
  if (before !== undefined && (!Number.isSafeInteger(before) || before < 1))
    throw new Refusal("BAD_REQUEST", "before must be a row id");
  return { limit, before };
}

/** kinds of GET hosted/<id>/logs: BAD_REQUEST for one that is not a log kind. */
function checkKinds(kinds: string | undefined) {
  const unknown = kinds?.split(",").find((k) => !(LOG_KINDS as readonly string[]).includes(k));
  if (unknown !== undefined)
    throw new Refusal("BAD_REQUEST", `kinds: ${unknown} is not one of ${LOG_KINDS.join(", ")}`);
}

const page = {
  limit: z.coerce.number().int().min(1).max(200).default(50),
  before: z.coerce.number().int().min(1).optional(),
};
/**
 * GET hosted/<id>/logs and spend's queries, parsed at the edge after the agent is found. Their
 * checks (pageOf, checkKinds) refuse in their own words before zod reads the object (which then
 * always parses): zod's would read "limit: Number must be..." where the route says "limit must be
 * an integer from 1 to 200". The document shows the inner object.
 */
export const logsQuery = z.preprocess(
  (q) => (pageOf(q as Record<string, string>, ["kinds"]), checkKinds((q as Record<string, string>).kinds), q),
  z.object({ ...page, kinds: z.string().optional() }).strict(),
);
export const spendQuery = z.preprocess((q) => (pageOf(q as Record<string, string>), q), z.object(page).strict());
export type LogsParameters = z.infer<typeof logsQuery>;
export type SpendParameters = z.infer<typeof spendQuery>;

/** A POST that takes no body: documented as empty; the route refuses any field first (its own message). */
export const noBody = z.object({}).strict();

/** The actions' input as the edge parses it (api/hosted/routes.ts). */
export type CreateParameters = z.infer<typeof createRequest>;
export type UpdateParameters = z.infer<typeof updateRequest>;
export type SessionParameters = z.infer<typeof sessionBody>;
export type AttestationParameters = z.infer<typeof attestationBody>;
