import { z } from "zod";
import { address, atoms, hex, named, txHash, unixS, usd } from "../http/answers.js";

/**
 * GET treasury's answer (SPEC "treasury") as a zod schema, in SPEC's words: the OpenAPI document's (api/openapi), and
 * test/answers.test.ts checks the code's answer types fit it.
 */

/** A value per bucket: operations, buybacks, treasury. */
const perBucket = <T extends z.ZodTypeAny>(t: T) => z.object({ operations: t, buybacks: t, treasury: t });

/** A token's week in a week row. */
const tokenRow = z.object({
  token: address,
  symbol: z.string(),
  decimals: z.number().int(),
  received: atoms,
  trades: z.number().int(),
  outside: atoms,
  outside_trades: z.number().int().nullable(),
  carried_in: atoms,
  pool: atoms,
  status: z.enum(["split", "dust", "unpriced", "nothing"]),
  booked: perBucket(atoms),
  moved: perBucket(atoms),
  owed_in: perBucket(atoms),
  owed_out: perBucket(atoms),
  carried_out: atoms,
  value_usd: z.string().nullable().describe("the pool's value at mark, USD with 2 decimals; null when unpriced"),
  mark: z.string().nullable().describe("USD per whole token with 8 decimals when the week was closed"),
});

/** One week of the record, chained to the one before by SHA-256. */
export const weekRow = named(
  "TreasuryWeek",
  z
    .object({
      kind: z.literal("week"),
      seq: z.number().int(),
      status: z.enum(["moved", "booked", "preview"]),
      week: z.object({
        start: unixS,
        end: unixS,
        label: z.string(),
        first_block: z.number().int().nullable(),
        last_block: z.number().int().nullable(),
      }),
      tokens: z.array(tokenRow),
      transfers: z.array(
        z.object({
          bucket: z.enum(["operations", "buybacks", "treasury"]),
          to: address,
          token: address,
          symbol: z.string(),
          decimals: z.number().int(),
          amount: atoms,
          tx_hash: txHash,
          block: z.number().int(),
        }),
      ),
      reconciliation: z.object({
        status: z.enum(["agrees", "accepted"]),
        ledger: z.array(z.object({ token: address, symbol: z.string(), ledger: atoms, chain: atoms.nullable() })),
        eth: z.enum(["trace", "balance", "ledger"]),
        counts: z.object({
          ledger_trades: z.number().int(),
          chain_fee_transfers: z.number().int(),
          outside_transfers: z.number().int(),
          split_transfers: z.number().int(),
        }),
        accepted: z.string().nullable().describe("why a week that does not agree was recorded as the chain says"),
      }),
      prev_hash: z.string().nullable(),
      hash: z
        .string()
        .nullable()
        .describe("SHA-256 of the row's JSON (keys sorted, no spaces, ASCII) without the hash; null on a preview"),
      recorded_at: z.number(),
    })
    .describe("A week row: week ends Monday 00:00 UTC; amounts are atom strings."),
);

/** A season's prize payout as the treasury shows it. */
export const prizePayout = named(
  "PrizePayout",
  z
    .object({
      season: z.number().int(),
      token: address.nullable(),
      symbol: z.string().nullable(),
      decimals: z.number().int().nullable(),
      stake: z.object({ gain: atoms, to_reserve: atoms, kept_staked: atoms }),
      cap: z.object({
        usd: usd,
        orbio_usd: usd.nullable().describe("the partner token's mark in USD"),
        amount: atoms,
      }),
      reserve: z.object({
        before: atoms,
        added: atoms,
        ceiling: atoms,
        payout: atoms,
        paid: atoms,
        after: atoms,
      }),
      recipients: z.array(
        z.object({
          rank: z.number().int(),
          agent: z.number().int(),
          wallet: z.string().describe("the winning agent's own wallet, as the partner vault records it"),
          share_bps: z.number().int().optional(),
          amount: atoms,
          tx_hash: hex.nullable(),
        }),
      ),
      stake_withdrawal: z.object({
        tx_hash: z.string().nullable(),
        tx_hashes: z.array(z.string()),
        amount: atoms,
        note: z.string(),
      }),
      distributor: address.nullable(),
      note: z.string(),
    })
    .describe("A season's prize payout: stake, cap, reserve and every recipient's transfer."),
);

/** GET treasury. */
export const treasuryAnswer = named(
  "Treasury",
  z
    .object({
      platform_wallet: address.describe("every fee goes to it"),
      buckets: perBucket(address.nullable()).describe("null: the share is booked and held in the platform wallet"),
      split_bps: z.object({
        operations: z.literal(5000),
        buybacks: z.literal(4000),
        treasury: z.literal(1000),
      }),
      integrity: z.object({
        ok: z.boolean(),
        rows: z.number().int(),
        head: z.string(),
        broken_at: z.number().int().nullable(),
        why: z.string().nullable(),
      }),
      weeks: z.array(weekRow).describe("newest first; the week in progress as a preview row first"),
      totals: z.array(
        z.object({
          token: address,
          symbol: z.string(),
          decimals: z.number().int(),
          received: atoms,
          outside: atoms,
          trades: z.number().int(),
          booked: perBucket(atoms),
          moved: perBucket(atoms),
          owed: perBucket(atoms),
          held: atoms,
        }),
      ),
      prize_payouts: z.array(prizePayout).describe("newest first; empty until the first payout"),
      explorer_tx: z.string().nullable(),
      generated_at: unixS,
      cached_s: z.number(),
    })
    .describe("The public treasury record: fee splits, rows chained by SHA-256."),
);
