import { z } from "zod";
import { address, atoms, hex, named, unixS, usd } from "../http/answers.js";

/**
 * The answers of SPEC "League" as zod schemas, in SPEC's words: the OpenAPI document's (api/openapi), and
 * test/answers.test.ts checks the code's answer types fit them (rows are typed loosely in the code: the e2e suite
 * holds real rows to these schemas).
 */

const board = z.enum(["prize", "practice"]);

/** One eligibility rule of a prize row. */
const rule = z.object({
  rule: z.string().describe("CONFIRMED, SANCTIONS, HOUSE, ..."),
  name: z.string(),
  status: z.enum(["pass", "fail", "flag", "pending"]).describe("an unreadable rule is a flag, never a pass"),
  reason: z.string(),
  reviewed: z.boolean(),
});

/** SPEC "Standings rows": a prize row. */
export const prizeRow = named(
  "PrizeRow",
  z
    .object({
      rank: z.number().int(),
      entry_id: z.string(),
      agent_id: z.number().int(),
      board: z.literal("prize"),
      kind: z.literal("wallet"),
      label: z.string().describe("third-party text: show as text"),
      wallet: address.describe("the trading wallet"),
      symbol: z.string().describe("third-party text: show as text"),
      name: z.string().describe("third-party text: show as text"),
      token: address,
      owner: address,
      cluster: z.string().describe("the owner cluster: its smallest entry id"),
      cluster_size: z.number().int(),
      cluster_links: z.array(
        z.object({
          kind: z.enum(["address", "transfer", "funder"]),
          with: z.string().describe("the linked entry"),
          evidence: z.object({
            address: z.string().optional(),
            from: z.string().optional(),
            to: z.string().optional(),
            tx_hash: hex.optional(),
            block: z.number().int().optional(),
            token: z.string().optional(),
          }),
        }),
      ),
      profit_usd: usd,
      score: z.number().describe("profit, six decimals"),
      return_pct: z.number().nullable(),
      max_dd_pct: z.number().nullable(),
      capital_usd: usd,
      trades: z.number().int(),
      active_days: z.number().int(),
      active: z.boolean(),
      unvalued: z.number(),
      open_unpriced: z.number(),
      price_outliers: z.number(),
      uncredited_usd: usd.optional(),
      unmarked_realised_usd: usd.optional(),
      valued_at: unixS,
      left: z.boolean(),
      place: z.number().int().nullable(),
      prize_atoms: atoms.nullable(),
      live: z.boolean(),
      house: z.boolean().describe("the developer's own agents: rank, never take a paid place"),
      eligibility: z.object({
        status: z.enum(["pass", "fail", "flag", "pending"]),
        eligible: z.boolean(),
        checked_at: unixS,
        checked_block: z.number().int().optional(),
        rules: z.array(rule),
      }),
    })
    .describe('A prize board row (SPEC "Standings rows").'),
);

/** SPEC "Standings rows": a practice row (eligibility, place and prize_atoms null). */
export const practiceRow = named(
  "PracticeRow",
  z
    .object({
      rank: z.number().int(),
      entry_id: z.string(),
      agent_id: z.number().int(),
      board: z.literal("practice"),
      kind: z.enum(["account", "hosted"]),
      label: z.string().describe("third-party text: show as text"),
      symbol: z.string(),
      name: z.string(),
      token: address,
      owner: address,
      equity: usd,
      profit_usd: usd,
      score: z.number(),
      return_pct: z.number(),
      max_dd_pct: z.number(),
      trades: z.number().int(),
      active_days: z.number().int(),
      left: z.boolean(),
      live: z.boolean(),
      house: z.boolean(),
      eligibility: z.null(),
      place: z.null(),
      prize_atoms: z.null(),
    })
    .describe('A practice board row (SPEC "Standings rows").'),
);

/** The prize board's outcome: whether the season pays, and why. */
const outcome = z
  .object({
    eligible_agents: z.number().int().optional(),
    eligible_owners: z.number().int().optional(),
    active_clusters: z.number().int().optional(),
    pays: z.boolean(),
    why: z.string(),
  })
  .nullable();

/** GET league/standings. */
export const standingsAnswer = named(
  "Standings",
  z
    .object({
      board,
      season: z.number().int(),
      status: z.enum(["upcoming", "open", "closed"]),
      rows: z.array(z.union([prizeRow, practiceRow])),
      outcome,
      places: z.array(z.string().nullable()).nullable().describe("the entries in the three paid places"),
      amounts_atoms: z.array(atoms).nullable().describe("the three places' amounts (prize board)"),
      amounts_basis: z.enum(["estimate", "provisional", "decided"]).nullable(),
      decided: z.boolean(),
      valued_at: unixS.nullable(),
      entrants_next: z.number().int(),
      now: unixS,
    })
    .describe("A board's standings for a season."),
);
