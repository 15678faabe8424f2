import type { Context } from "hono";
import type { Address } from "viem";
import { z } from "zod";
import type { AppEnv } from "../http/env.js";
import { WALLET } from "../errors/groups.js";
import { Refusal } from "../errors/index.js";
import { route } from "../http/route.js";
import { RATE_RULES, type BucketRule } from "../http/rateLimit.js";
import type { Ledger } from "../trading/index.js";
import type { Portfolio } from "./index.js";

/**
 * me/portfolio's overall bucket (SPEC.md: "key; overall"). A miss costs the instance one block
 * number read, one multicall and a few indexed reads; the 5 s reuse absorbs repeats. The ceiling
 * is the per-key numbers times 100, like PUBLIC_OVERALL: a hundred keys refreshing at full pace
 * (50 chain reads a second) is what one instance spends on portfolios, not a second per-key limit.
 */
export const PORTFOLIO_OVERALL: BucketRule = {
  burst: RATE_RULES.portfolio.burst * 100,
  perSecond: RATE_RULES.portfolio.perSecond * 100,
};

/** What SPEC "Your account" reads: the wallet's trades from the ledger and its portfolio. */
export type AccountService = {
  trades: Ledger["list"];
  portfolio: (wallet: Address) => Promise<Portfolio>;
};

/** me/trades' query as the document shows it; the handler checks it by hand, in SPEC's words. */
const tradesQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(100).optional(),
    before: z.coerce.number().int().optional(),
    refused: z.enum(["1"]).optional(),
  })
  .strict();
/** What the trades tool takes (booleans become the REST flag `1`). */
const tradesInput = z.object({
  limit: z.number().int().min(1).max(100).optional(),
  before: z.number().int().optional(),
  refused: z.boolean().optional(),
});

/** The key's wallet: every account route acts for it and names none. */
function walletOf(c: Context<AppEnv>): Address {
  const wallet = c.get("key").wallet;
  if (!wallet) throw new Refusal("WALLET_NOT_BOUND", "this key is bound to no wallet");
  return wallet;
}

/** SPEC.md "Your account": the key's own wallet; nothing names a wallet. */
export const accountRoutes = [
  route<AccountService>({
    method: "get",
    path: "/me/trades",
    auth: "key(wallet)",
    limits: [["meList", RATE_RULES.meList, "key"]],
    summary: "The wallet's trades, newest first",
    // Checked by hand (each refusal names its field as SPEC does), before the wallet: documented only.
    documents: { query: tradesQuery },
    answer: ["wallet", "trades", "next_before"],
    errors: [...WALLET, "BAD_REQUEST"],
    mcp: {
      name: "trades",
      description: "The key's wallet trades, newest first (GET /api/v1/me/trades).",
      input: tradesInput,
      readOnly: true,
    },
    handle: async ({ query: q, c }, s) => {
      const extra = Object.keys(q).filter((k) => !["limit", "before", "refused"].includes(k));
      if (extra.length)
        throw new Refusal(
          "BAD_REQUEST",
          `unknown query parameter ${extra[0]}; this route takes limit, before, refused`,
        );
      const lim = q.limit === undefined ? 50 : /^\d{1,3}$/.test(q.limit) ? Number(q.limit) : NaN;
      if (!(lim >= 1 && lim <= 100)) throw new Refusal("BAD_REQUEST", "limit must be an integer from 1 to 100");
      if (q.before !== undefined && !/^\d{1,18}$/.test(q.before))
        throw new Refusal("BAD_REQUEST", "before must be a trade id");
      if (q.refused !== undefined && q.refused !== "1" && q.refused !== "0")
        throw new Refusal("BAD_REQUEST", "refused must be 1");
      const wallet = walletOf(c);
      const refused = q.refused === "1";
      const page = await s.trades(wallet, {
        limit: lim,
        before: q.before === undefined ? null : Number(q.before),
        refused,
      });
      return {
        wallet: wallet.toLowerCase(),
        trades: page.trades,
        next_before: page.next_before,
        refused_included: refused,
      };
    },
  }),
  route<AccountService>({
    method: "get",
    path: "/me/portfolio",
    auth: "key(wallet)",
    limits: [
      ["portfolio", RATE_RULES.portfolio, "key"],
      ["portfolio", PORTFOLIO_OVERALL, "overall"],
    ],
    summary: "The wallet's holdings at independent marks",
    answer: ["wallet", "block", "holdings", "total_usd", "volume"],
    errors: [...WALLET, "RPC_UNAVAILABLE", "LIVE_UNAVAILABLE"],
    mcp: {
      name: "portfolio",
      description: "The key's wallet holdings and 30-day volume (GET /api/v1/me/portfolio).",
      input: z.object({}),
      readOnly: true,
    },
    handle: ({ c }, s) => {
      const extra = Object.keys(c.req.query());
      if (extra.length) throw new Refusal("BAD_REQUEST", `unknown query parameter ${extra[0]}; this route takes none`);
      return s.portfolio(walletOf(c));
    },
  }),
];
