import { Hono } from "hono";
import { z } from "zod";
import { answerJson } from "../../lib/answerJson.js";
import type { AppEnv } from "../http/env.js";
import { WALLET } from "../errors/groups.js";
import { PUBLIC, publicLimit } from "../http/limits.js";
import type { HttpKit } from "../http/kit.js";
import { routesFor } from "../http/route.js";
import {
  booksAnswer,
  enteredAnswer,
  entryView,
  leagueAnswer,
  leagueMeAnswer,
  leftAnswer,
  practiceOrderAnswer,
  reserveAnswer,
  seasonDetailAnswer,
  seasonsAnswer,
  standingsAnswer,
  statementAnswer,
} from "./answers.js";
import { Refusal } from "../errors/index.js";
import {
  confirmBody,
  enterBody,
  leaveBody,
  statementBody,
  type ConfirmParameters,
  type EnterParameters,
  type LeagueWho,
  type LeaveParameters,
  type StatementParameters,
} from "./entries.js";
import { boundCaller } from "../http/caller.js";
import { RATE_RULES } from "../http/rateLimit.js";
import { practiceOrderBody, type PracticeOrderParameters } from "./practiceOrders.js";
import { leagueMissingPage, leaguePage, leagueSeasonPage } from "./page.js";
import { standingsQuery, type createLeagueReader } from "./read.js";

/** The reading routes' answers (read.ts), unkeyed. */
type LeagueReads = Pick<
  ReturnType<typeof createLeagueReader>,
  "league" | "standings" | "standingsWithCurves" | "seasons" | "books" | "seasonDetail" | "reserve"
>;

/**
 * What SPEC "League" routes use: the public reads and the keyed entry actions (entries.ts), as the signed-in wallet.
 */
export type LeagueService = {
  reader: LeagueReads;
  statement: (q: StatementParameters, who: LeagueWho) => Promise<unknown>;
  enter: (q: EnterParameters, who: LeagueWho) => Promise<unknown>;
  confirm: (q: ConfirmParameters, who: LeagueWho) => Promise<unknown>;
  leave: (q: LeaveParameters, who: LeagueWho) => Promise<unknown>;
  me: (who: LeagueWho) => Promise<unknown>;
  practiceOrder: (q: PracticeOrderParameters, who: LeagueWho) => Promise<unknown>;
};

export const SIGN_STATEMENT_NOTE =
  "Unsigned league statement: the owner of the partner agent signs this exact text with personal_sign (EIP-191) in " +
  "their own wallet, after " +
  "reading it (it states eligibility: 18 or older, not a US person, not sanctioned), then sends it to POST " +
  "/api/v1/league/enter or /league/confirm.";

// passthrough: the REST route, not this schema, decides which other fields are allowed.
const statementInput = z
  .object({
    agent_id: z.number().int().describe("your partner agent's id"),
    board: z.enum(["prize", "practice"]).optional().describe("the board to enter (default prize)"),
    hosted_id: z.string().optional().describe("enter this hosted agent of yours instead of an API account"),
  })
  .passthrough();

const route = routesFor<LeagueService>({
  name: "League",
  description:
    "The trading league: a prize board with real trades and a practice board with paper trades, in two-week seasons.",
});
/** The keyed entry actions act for the key's wallet: WALLET_NOT_BOUND before a bad field. */
const caller = boundCaller("the league needs a key bound to a wallet");

/**
 * SPEC "League": the unkeyed reading routes (the public buckets) and the keyed entry routes, whose
 * `first` step finds the key's wallet (WALLET_NOT_BOUND comes before a bad field).
 */
export const leagueRoutes = [
  route({
    method: "get",
    path: "/league",
    auth: "none",
    limits: PUBLIC,
    summary: "The calendar, the reserve and the rules",
    description:
      "The league's calendar and money: the season playing (or next), the next four seasons, entrants " +
      "on each board, the prize reserve with its estimate for this season, the rules the rows are " +
      "computed by, and the last five decided seasons. Reading routes need no key.",
    answer: leagueAnswer,
    errors: ["RATE_LIMITED", "LEAGUE_UNAVAILABLE"],
    handle: (_, s) => s.reader.league(),
  }),
  route({
    method: "get",
    path: "/league/standings",
    auth: "none",
    limits: PUBLIC,
    summary: "A board's standings for a season",
    description:
      "A board's standings for a season (default the current, board prize): its rows ranked by profit, the " +
      "outcome, the paid places and their amounts, and whether the season is decided.",
    query: standingsQuery,
    answer: standingsAnswer,
    errors: ["BAD_REQUEST", "RATE_LIMITED", "LEAGUE_UNAVAILABLE"],
    // The rows' text is made once per pass's answer and served to every reader of it (lib/answerJson).
    handle: async ({ query, c }, s) =>
      c.body(answerJson(await s.reader.standings(query)), 200, { "Content-Type": "application/json" }),
  }),
  route({
    method: "get",
    path: "/league/seasons",
    auth: "none",
    limits: PUBLIC,
    summary: "Every season, newest first",
    description:
      "Every season on the calendar, newest first: status, entrants, whether it was decided and pays " +
      "(and why not), and its winners with their amounts and payout transactions.",
    answer: seasonsAnswer,
    errors: ["RATE_LIMITED", "LEAGUE_UNAVAILABLE"],
    handle: (_, s) => s.reader.seasons(),
  }),
  // Beyond SPEC: each entry's relayed trades with their plans, what `npm run league:verify` recomputes.
  route({
    method: "get",
    path: "/league/seasons/{n}/books",
    auth: "none",
    limits: PUBLIC,
    summary: "A season's published inputs for league:verify",
    description:
      "Beyond SPEC: a season's published inputs, what `npm run league:verify` recomputes the standings " +
      "from: the entries with their owners' signed statements, and each entry's relayed mined trades " +
      "with their plans.",
    answer: booksAnswer,
    errors: ["NO_SEASON", "RATE_LIMITED", "LEAGUE_UNAVAILABLE"],
    extra: true,
    handle: ({ param }, s) => s.reader.books(param("n")),
  }),
  route({
    method: "get",
    path: "/league/seasons/{n}",
    auth: "none",
    limits: PUBLIC,
    summary: "One season: standings, ledger, payouts, winners",
    description:
      "One season: the prize standings, its payout book (reserve before, gain added, cap, budget, " +
      "shares, what was paid), the stake withdrawal that fed the reserve, the payouts by place and the " +
      "winners. 404 NO_SEASON off the calendar.",
    answer: seasonDetailAnswer,
    errors: ["NO_SEASON", "RATE_LIMITED", "LEAGUE_UNAVAILABLE"],
    handle: ({ param }, s) => s.reader.seasonDetail(param("n")),
  }),
  route({
    method: "get",
    path: "/league/reserve",
    auth: "none",
    limits: PUBLIC,
    summary: "The prize reserve's ledger by season",
    description:
      "The prize reserve: one payout book per season, newest first (settled, provisional or incomplete," +
      " with why), the current season's estimate and the reserve's rules.",
    answer: reserveAnswer,
    errors: ["RATE_LIMITED", "LEAGUE_UNAVAILABLE"],
    handle: (_, s) => s.reader.reserve(),
  }),
  route({
    method: "post",
    path: "/league/statement",
    auth: "key(wallet)",
    limits: [],
    summary: "The statement an agent's owner signs to enter or confirm",
    description:
      "The text a partner agent's owner signs (personal_sign) to enter or confirm an entry: it names " +
      "the board and the entrant, and for the prize board the owner's eligibility confirmation (18 or " +
      "older, not a US person, not sanctioned, eligible under local law, rules accepted). The nonce " +
      "works once, for 10 minutes, for that board and entrant; the entry is pre-checked as enter would " +
      "check it.",
    body: statementBody,
    unknownField: "UNKNOWN_FIELD",
    first: caller,
    answer: statementAnswer,
    errors: [
      ...WALLET,
      "BAD_REQUEST",
      "UNKNOWN_FIELD",
      "FORBIDDEN",
      "NOT_FOUND",
      "NOT_AN_AGENT",
      "NOT_OWNER",
      "AGENT_ENTERED",
      "ALREADY_ENTERED",
      "PRIZE_IS_LIVE",
      "LEAGUE_PAPER_ONLY",
      "LEAGUE_PAIRS",
      "LEAGUE_INTERVAL",
      "SANCTIONED",
      "LEAGUE_UNAVAILABLE",
    ],
    mcp: {
      name: "prepare_league_statement",
      description: "The league statement a partner agent's owner signs to enter (POST /api/v1/league/statement).",
      input: statementInput,
      readOnly: false,
      notes: [SIGN_STATEMENT_NOTE],
    },
    handle: ({ body, found }, s) => s.statement(body, found),
  }),
  route({
    method: "post",
    path: "/league/enter",
    auth: "key(wallet)",
    limits: [],
    summary: "Enters a board from the next season",
    description:
      "Enters a board from the next season: the prize board makes the wallet the partner agent's " +
      "trading wallet; the practice board enters the wallet's exchange account, or with hosted_id a " +
      "hosted paper agent. The owner is the signed-in wallet, or signature is the owner's signature of " +
      "the statement with that nonce. Without a signed statement a prize entry plays but wins nothing " +
      "until confirmed (confirmed false).",
    body: enterBody,
    unknownField: "UNKNOWN_FIELD",
    first: caller,
    status: 201,
    answer: enteredAnswer,
    errors: [
      ...WALLET,
      "BAD_REQUEST",
      "UNKNOWN_FIELD",
      "STATEMENT_EXPIRED",
      "STATEMENT_MISMATCH",
      "BAD_SIGNATURE",
      "NOT_OWNER",
      "FORBIDDEN",
      "NOT_AN_AGENT",
      "NOT_FOUND",
      "AGENT_ENTERED",
      "ALREADY_ENTERED",
      "PRIZE_IS_LIVE",
      "LEAGUE_DIVISION",
      "LEAGUE_PAPER_ONLY",
      "LEAGUE_PAIRS",
      "LEAGUE_INTERVAL",
      "STOPPED",
      "SANCTIONED",
      "LEAGUE_UNAVAILABLE",
      "HOSTED_UNAVAILABLE",
    ],
    handle: ({ body, found }, s) => s.enter(body, found),
  }),
  route({
    method: "post",
    path: "/league/confirm",
    auth: "key(wallet)",
    limits: [],
    summary: "Confirms a prize entry with the owner's signed statement",
    description:
      "Confirms a prize entry with the owner's signed prize statement (recovering to the owner on " +
      "record), from the entry's trading wallet: the entry is confirmed from then on; seasons already " +
      "decided stay as decided.",
    body: confirmBody,
    unknownField: "UNKNOWN_FIELD",
    first: caller,
    answer: entryView,
    errors: [
      ...WALLET,
      "BAD_REQUEST",
      "UNKNOWN_FIELD",
      "STATEMENT_EXPIRED",
      "STATEMENT_MISMATCH",
      "BAD_SIGNATURE",
      "NOT_OWNER",
      "FORBIDDEN",
      "NOT_ENTERED",
      "SANCTIONED",
    ],
    handle: ({ body, found }, s) => s.confirm(body, found),
  }),
  // A sanctioned key may still leave (SPEC "Authentication").
  route({
    method: "post",
    path: "/league/leave",
    auth: "key(wallet)",
    evenSanctioned: true,
    limits: [],
    summary: "Leaves a board at once",
    description:
      "Takes the prize entry (default), the practice account, or a hosted agent out at once; with " +
      "agent_id, the entry for that partner agent (the entering wallet or the agent's owner may do it)." +
      " It may enter again for the next season.",
    body: leaveBody,
    unknownField: "UNKNOWN_FIELD",
    first: caller,
    answer: leftAnswer,
    errors: [...WALLET, "BAD_REQUEST", "FORBIDDEN", "NOT_ENTERED"],
    handle: ({ body, found }, s) => s.leave(body, found),
  }),
  // Beyond SPEC's table: SPEC's practice board takes "an API exchange account" and refuses its paper order
  // between seasons (SEASON_CLOSED); this is that order.
  route({
    method: "post",
    path: "/league/practice/order",
    auth: "key(wallet)",
    limits: [["leaguePractice", RATE_RULES.leaguePractice, "key"]],
    summary: "A paper order of the wallet's exchange account on the practice board, filled at the quoter's output",
    description:
      "Beyond SPEC's table: a paper order of the wallet's exchange account on the practice board, " +
      "filled at the V4Quoter's output at the latest block after the live fee, against the account's " +
      "season book (10,000 USDG at the start). Between seasons it is refused SEASON_CLOSED.",
    body: practiceOrderBody,
    unknownField: "UNKNOWN_FIELD",
    first: caller,
    answer: practiceOrderAnswer,
    errors: [
      ...WALLET,
      "BAD_REQUEST",
      "UNKNOWN_FIELD",
      "NOT_FOUND",
      "NOT_ENTERED",
      "SEASON_CLOSED",
      "LEAGUE_DIVISION",
      "SAME_TOKEN",
      "MIN_NOTIONAL",
      "NO_ROUTE",
      "NO_MARK",
      "VENUE_FAILED",
      "LEAGUE_UNAVAILABLE",
      // Also the season's cap of paper orders per account (PRACTICE_ORDERS_PER_SEASON).
      "RATE_LIMITED",
    ],
    extra: true,
    handle: ({ body, found }, s) => s.practiceOrder(body, found),
  }),
  route({
    method: "get",
    path: "/league/me",
    auth: "key(wallet)",
    limits: [],
    summary: "The wallet's league entries",
    description:
      "The wallet's league entries, newest first; an exchange account's practice entry carries its book" +
      " this season.",
    answer: leagueMeAnswer,
    errors: WALLET,
    first: caller,
    handle: ({ found }, s) => s.me(found),
  }),
];

/**
 * GET /league and /league/seasons/<n>: the same answers as pages (HTML, no script); a season off the calendar is an
 * HTML 404.
 */
export function leaguePageRoutes(s: Pick<LeagueService, "reader">, http: HttpKit) {
  const app = new Hono<AppEnv>();
  const read = s.reader;
  app.get("/league", publicLimit(http.limiter), async (c) => {
    const [league, prize, practice] = await Promise.all([
      read.league(),
      read.standingsWithCurves({ board: "prize" }),
      read.standings({ board: "practice" }),
    ]);
    return c.html(leaguePage({ league, prize: prize.answer, curves: prize.curves, practice }));
  });
  app.get("/league/seasons/:n", publicLimit(http.limiter), async (c) => {
    try {
      return c.html(leagueSeasonPage(await read.seasonDetail(c.req.param("n"))));
    } catch (err) {
      // A person asked for a page: answer one; other refusals (503 LEAGUE_UNAVAILABLE) stay the API's JSON.
      if (err instanceof Refusal && err.code === "NO_SEASON") return c.html(leagueMissingPage(err.message), 404);
      throw err;
    }
  });
  return app;
}
