import { z } from "zod";

/** Decimal atoms below 2^bits (the router's and Permit2's argument widths). */
const atomsBelow = (bits: number) =>
  z
    .string()
    .regex(/^[0-9]{1,78}$/, "must be an atom string (decimal digits)")
    .refine((v) => BigInt(v) < 1n << BigInt(bits), `must be below 2^${bits}`);
const atoms = atomsBelow(256);
const uint48 = z
  .number()
  .int()
  .nonnegative()
  .max(2 ** 48 - 1);
const hex = z.string().regex(/^0x[0-9a-fA-F]*$/, "must be 0x hex");

/**
 * SPEC "POST /api/v1/live/fast": the request; amount_usd and max_notional_usd are the client's own
 * bounds (AMOUNT_USD, CLIENT_CAP).
 */
export const fastRequest = z
  .object({
    raw_tx: hex.min(4).max(20_000),
    token_in: z.string().min(1).max(64),
    token_out: z.string().min(1).max(64),
    amount_in: atoms,
    min_out: atoms,
    deadline: uint48,
    fee_bps: z.number().int().min(0).max(10_000),
    shield: z.boolean().default(false),
    permit: z
      .object({
        amount: atomsBelow(160),
        expiration: uint48,
        nonce: uint48,
        sig_deadline: uint48,
        signature: hex.max(200),
      })
      .strict()
      .optional(),
    simulate: z.boolean().default(true),
    check_only: z.boolean().default(false),
    fund: z.boolean().default(false),
    owner_attests_non_us: z.boolean().default(false),
    amount_usd: z.number().finite().positive().optional(),
    max_notional_usd: z.number().finite().positive().optional(),
  })
  .strict()
  .refine((r) => !r.fund || r.check_only, { message: "fund works with check_only only", path: ["fund"] });

/** live/fast's input as the edge parses it (api/fast/routes.ts). */
export type FastParameters = z.infer<typeof fastRequest>;
