import type { Address } from "viem";
import { z } from "zod";
import { WALLET } from "../errors/groups.js";
import { boundCaller } from "../http/caller.js";
import { noQuery, onlyQuery } from "../http/query.js";
import { routesFor } from "../http/route.js";
import { portfolioAnswer, tradesAnswer } from "./answers.js";
import { RATE_RULES, type BucketRule } from "../http/rateLimit.js";
import type { Ledger } from "../trading/index.js";
import type { Portfolio } from "./index.js";
import { myTrades, tradesQuery } from "./trades.js";

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

/** What the trades tool takes (booleans become the REST flag `1`). */
const tradesInput = z
  .object({
    limit: z.number().int().min(1).max(100).optional().describe("rows, 1 to 100 (default 50)"),
    before: z.number().int().optional().describe("only trades older than this trade id (next_before pages)"),
    refused: z.boolean().optional().describe("also list refused and dropped trades"),
  })
  .strict();

const route = routesFor<AccountService>({
  name: "Your account",
  description:
    "Reads for the key's own wallet: trades, portfolio, sessions (nothing names a wallet; no fee is reported).",
});
/** Every account route acts for the key's wallet and names none. */
const caller = boundCaller();

/** SPEC.md "Your account": the key's own wallet; nothing names a wallet. */
export const accountRoutes = [
  route({
    method: "get",
    path: "/me/trades",
    auth: "key(wallet)",
    limits: [["meList", RATE_RULES.meList, "key"]],
    summary: "The wallet's trades, newest first",
    description:
      "The wallet's trades, newest first, paged by `before`: path, status (pending, mined or reverted; " +
      "with refused=1 also dropped and refused), tokens, amounts (amount_out is what arrived once " +
      "mined, else the plan's minimum), hash and block. A session or hosted trade belongs to the " +
      "session's wallet.",
    first: onlyQuery(["limit", "before", "refused"]),
    query: tradesQuery,
    answer: tradesAnswer,
    errors: [...WALLET, "BAD_REQUEST"],
    mcp: {
      name: "trades",
      description: "The key's wallet trades, newest first (GET /api/v1/me/trades).",
      input: tradesInput,
      readOnly: true,
    },
    // The query is refused before the wallet (SPEC's order): the caller is found after the parse.
    handle: (call, s) => myTrades(s, call.query, caller(call)),
  }),
  route({
    method: "get",
    path: "/me/portfolio",
    auth: "key(wallet)",
    limits: [
      ["portfolio", RATE_RULES.portfolio, "key"],
      ["portfolio", PORTFOLIO_OVERALL, "overall"],
    ],
    summary: "The wallet's holdings at independent marks",
    description:
      "The wallet's balances of ETH, core tokens, listed stock tokens and up to 40 address-named tokens" +
      " it traded, valued only at independent marks (USDG $1, oracle feeds, the partner token's pool " +
      "TWAP), with its 30-day volume and fee tier. One answer per wallet is reused for 5 s (cached).",
    answer: portfolioAnswer,
    errors: [...WALLET, "RPC_UNAVAILABLE", "LIVE_UNAVAILABLE"],
    mcp: {
      name: "portfolio",
      description: "The key's wallet holdings and 30-day volume (GET /api/v1/me/portfolio).",
      input: z.object({}).strict(),
      readOnly: true,
    },
    first: (call) => {
      noQuery(call);
      return caller(call);
    },
    handle: ({ found }, s) => s.portfolio(found.wallet),
  }),
];
