import { z } from "zod";
import { inOwnWords } from "../errors/index.js";
import type { Caller } from "../http/caller.js";
import type { Ledger } from "../trading/index.js";

/** A value of the query as a string of at most `digits` digits. */
const digits = (v: unknown, n: number) => typeof v === "string" && new RegExp(`^\\d{1,${n}}$`).test(v);
/** me/trades' query, each parameter refused in SPEC's words (and in this order), after `first`. */
export const tradesQuery = z
  .object({
    limit: inOwnWords(z.coerce.number().int().min(1).max(100).default(50), (v) =>
      v === undefined || (digits(v, 3) && Number(v) >= 1 && Number(v) <= 100)
        ? null
        : "limit must be an integer from 1 to 100",
    ),
    before: inOwnWords(z.coerce.number().int().optional(), (v) =>
      v === undefined || digits(v, 18) ? null : "before must be a trade id",
    ),
    refused: inOwnWords(
      z
        .enum(["0", "1"])
        .optional()
        .transform((v) => v === "1"),
      (v) => (v === undefined || v === "0" || v === "1" ? null : "refused must be 1"),
    ),
  })
  .strict();
/** GET me/trades' parameters as the edge parsed them. */
export type TradesParameters = z.infer<typeof tradesQuery>;

/** GET me/trades: a page of the caller's wallet's trades, newest first. */
export async function myTrades(s: { trades: Ledger["list"] }, q: TradesParameters, who: Caller) {
  const page = await s.trades(who.wallet, { limit: q.limit, before: q.before ?? null, refused: q.refused });
  return {
    wallet: who.wallet.toLowerCase(),
    trades: page.trades,
    next_before: page.next_before,
    refused_included: q.refused,
  };
}
