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

/** SPEC "League entities": a season on the calendar (Monday 00:00 UTC to Monday 00:00 UTC, two weeks). */
export const seasonView = named(
  "Season",
  z
    .object({
      number: z.number().int(),
      name: z.string(),
      starts_at: z.string().describe("ISO 8601, UTC"),
      ends_at: z.string().describe("ISO 8601, UTC"),
      starts: unixS.describe("play counts from here (inclusive)"),
      ends: unixS.describe("to here (exclusive)"),
      days: z.number().int(),
      state: z.enum(["starts in", "playing", "ended"]).describe("the status in words, for a page"),
      seconds_left: z.number().int().describe("until it starts (upcoming) or ends (open)"),
      day: z.number().int().nullable().describe("day of play (1 to 14) while open"),
      status: z.enum(["upcoming", "open", "closed"]),
    })
    .describe("A season: two weeks, Monday 00:00 UTC to Monday 00:00 UTC."),
);

/** A paid place of a decided season (SPEC seasons' winners). */
const winner = z.object({
  place: z.number().int(),
  entry_id: z.string(),
  agent_id: z.number().int(),
  symbol: z.string().describe("third-party text: show as text"),
  label: z.string().describe("third-party text: show as text"),
  score: z.number(),
  profit_usd: usd,
  amount: atoms.nullable().describe("partner-token atoms"),
  status: z.enum(["planned", "mined", "held"]).describe("planned until mined; held: never sent, its recipient listed"),
  tx_hash: hex.nullable().describe("once mined"),
});

/** A place not paid yet (beyond SPEC): planned or sent, with why it waits. */
const owed = z.object({
  place: z.number().int(),
  entry_id: z.string(),
  agent_id: z.number().int(),
  recipient: z.string(),
  amount: atoms,
  why: z.string(),
});

/** One season's line of GET league/seasons (and GET league's `past`). */
const seasonLine = z.object({
  number: z.number().int(),
  name: z.string(),
  status: z.enum(["upcoming", "open", "closed"]),
  missed: z.boolean().describe("closed with nobody playing"),
  starts_at: z.string(),
  ends_at: z.string(),
  entrants: z.number().int(),
  practice_entrants: z.number().int(),
  decided: z.boolean(),
  winners: z.array(winner),
  owed: z.array(owed),
  pays: z.boolean().nullable().describe("whether the decided season pays; null until decided"),
  why: z.string(),
});

/** A season's payout book (SPEC ledger): the reserve before, the gain added, the budget and what was paid. */
export const payoutBook = named(
  "PayoutBook",
  z
    .object({
      reserve_before: atoms,
      gain: atoms.describe("the stake's gains this season"),
      half_gain: atoms,
      added: atoms.describe("half the gain, added to the reserve"),
      kept_staked: atoms,
      cap: atoms.describe("the prize cap in partner-token atoms"),
      ceiling: atoms,
      reserve: atoms,
      budget: atoms.describe("the season's payout"),
      shares: z.array(atoms).describe("the three places' shares (50/30/20)"),
      paid: z.array(atoms),
      paid_total: atoms,
      reserve_after: atoms,
      cap_usd: usd,
      orbio_usd: usd.nullable().describe("the partner token's mark in USD"),
      mark_ts: unixS,
      mark_source: z.enum(["marks", "manual"]),
      status: z.enum(["settled", "provisional", "incomplete"]),
      why: z.string().nullable().describe("what an incomplete book lacks"),
      gain_transfers: z
        .array(z.object({ tx_hash: hex, block: z.number().int(), ts: unixS, amount: atoms }))
        .optional()
        .describe("the transfers that brought the stake's gains to the reserve wallet"),
    })
    .describe("A season's payout book: atoms of the partner token (18 decimals)."),
);

/** The current season's estimate of the reserve and the budget. */
const estimate = z
  .object({
    status: z.enum(["estimate", "pending", "incomplete"]),
    why: z.string().nullable().optional().describe("pending or incomplete: why"),
    reserve_before: atoms.optional(),
    gain_so_far: atoms.optional(),
    reserve: atoms.optional(),
    budget: atoms.optional(),
    shares: z.array(atoms).optional(),
    cap: atoms.optional(),
    ceiling: atoms.optional(),
    kept_staked: atoms.optional(),
    cap_usd: usd.optional(),
    orbio_usd: usd.nullable().optional().describe("the partner token's mark in USD"),
    mark_ts: unixS.optional(),
  })
  .describe("the season playing: its estimate of the reserve and the payout (atoms, 18 decimals)");

/** How the native ETH links are scanned. */
const nativeScan = z.object({
  blocks_per_step: z.number().int(),
  blocks_per_pass: z.number().int(),
  max_failures: z.number().int(),
  note: z.string(),
});

/** The published rules: what the rows are computed by, so anyone can recompute them. */
export const leagueRulesView = named(
  "LeagueRules",
  z
    .object({
      score: z.string(),
      valuation: z.object({
        marks: z.string(),
        tokens: z.array(
          z.object({
            address: z.string(),
            symbol: z.string(),
            decimals: z.number().int(),
            basis: z.enum(["fixed", "oracle", "twap"]),
            feed: z.string().nullable(),
            stock: z.boolean(),
            pool_id: z.string().nullable(),
            token_is_0: z.boolean().nullable(),
            usdg_decimals: z.number().int(),
          }),
        ),
        twap_window_s: z.number().int(),
        feed_heartbeat_s: z.number().int(),
        feed_grace_s: z.number().int(),
        unmarked: z.string(),
        lost_mark: z.string(),
        drawdown_grid_s: z.number().int(),
        drawdown: z.string(),
        capital: z.string(),
        price_outlier_bps: z.number(),
        book: z.string(),
      }),
      split: z.object({
        bps: z.array(z.number().int()).describe("50/30/20 as basis points"),
        places: z.number().int(),
        one_per_owner_cluster: z.boolean(),
        token: z.string(),
      }),
      minimum_field: z
        .object({
          clusters: z.number().int(),
          traded: z.object({ trades: z.number().int(), active_days: z.number().int() }),
        })
        .describe("a season pays only if at least this many owner clusters traded"),
      clusters: z.object({
        links: z.array(z.string()),
        hubs: z.array(z.string()),
        note: z.string(),
        native_eth: z.string(),
        native_scan: nativeScan.optional(),
      }),
      prize_cap_usd: usd,
      reserve_ceiling_seasons: z.number().int(),
      copy_trading_window_s: z.number().int(),
      copy_trading_share_bps: z.number().int(),
      copy_trading_min_trades: z.number().int(),
      copy_trading: z.string(),
      review: z.object({
        how: z.string(),
        window_s: z.number().int().optional(),
        window: z.string().optional(),
        binds: z.string(),
        never_reviewed: z.array(z.string()),
        published: z.string(),
      }),
      practice_starting_book: z.record(z.number()).describe("USDG 10,000"),
      division: z.string(),
      hosted_assets: z.object({
        pairs_against: z.string(),
        assets: z.array(z.string()),
        min_interval_s: z.number().int(),
      }),
    })
    .describe("The league's rules as published: score, valuation, split, minimum field, clusters, review."),
);

/** GET league. */
export const leagueAnswer = named(
  "League",
  z
    .object({
      season: seasonView.describe("the season playing (open) or next to play (upcoming)"),
      next_season: seasonView,
      entrants: z.number().int().describe("prize entries playing the season"),
      practice_entrants: z.number().int(),
      schedule: z
        .array(z.object({ number: z.number().int(), name: z.string(), starts_at: z.string(), ends_at: z.string() }))
        .describe("the next seasons"),
      reserve: z.object({
        on: z.boolean().describe("a reserve wallet is configured"),
        agent_id: z.number().int().nullable(),
        reserve_atoms: atoms.describe("the reserve after the last payout book"),
        cap_usd: usd.describe("the prize cap per season in USD"),
        estimate,
      }),
      rules: leagueRulesView,
      past: z.array(seasonLine).describe("the last five decided seasons"),
      now: unixS,
    })
    .describe("The league: the season playing, the schedule, the reserve, the rules and the last decided seasons."),
);

/** GET league/seasons. */
export const seasonsAnswer = named(
  "LeagueSeasons",
  z
    .object({ seasons: z.array(seasonLine).describe("every season on the calendar, newest first"), now: unixS })
    .describe("Every season, newest first, with its winners."),
);

/** GET league/seasons/<n>: the prize standings with the payout book, payouts and winners. */
export const seasonDetailAnswer = named(
  "LeagueSeason",
  standingsAnswer
    .extend({
      ledger: payoutBook.nullable(),
      withdrawal: z
        .object({
          tx_hash: hex.nullable(),
          tx_hashes: z.array(hex),
          amount: atoms,
          ts: unixS.nullable(),
          note: z.string(),
        })
        .nullable()
        .describe("the stake withdrawal that fed the reserve"),
      payouts: z.array(
        z.object({
          place: z.number().int(),
          entry_id: z.string(),
          agent_id: z.number().int(),
          recipient: z.string().describe("the winning agent's own wallet, as the partner vault records it"),
          amount: atoms,
          status: z.enum(["planned", "mined", "held"]),
          tx_hash: hex.nullable(),
          why: z.string().nullable().describe("why a place is held or still owed; null once mined"),
        }),
      ),
      owed: z.array(owed),
      winners: z.array(winner),
      settled_at: unixS.nullable(),
    })
    .describe("One season: its prize standings, payout book, withdrawal, payouts and winners."),
);

/** GET league/reserve. */
export const reserveAnswer = named(
  "LeagueReserve",
  z
    .object({
      on: z.boolean(),
      agent_id: z.number().int().nullable(),
      rows: z.array(payoutBook.extend({ season: z.number().int() })).describe("one season's ledger each, newest first"),
      estimate,
      rules: z.object({
        split_bps: z.array(z.number().int()),
        half_gain_to_reserve: z.boolean(),
        prize_cap_usd: usd,
        ceiling_seasons: z.number().int(),
        wallet: address.nullable().describe("the reserve wallet"),
      }),
    })
    .describe("The prize reserve's ledger by season and the current estimate."),
);

/** GET league/seasons/<n>/books (beyond SPEC): what `npm run league:verify` recomputes. */
export const booksAnswer = named(
  "LeagueBooks",
  z
    .object({
      season: z.number().int(),
      decided: z.boolean(),
      block: z.number().int().nullable().describe("the block the books were read at"),
      valued_at: unixS.nullable(),
      from_block: z.number().int().optional(),
      native_from_block: z.number().int().optional(),
      contracts: z.record(address).optional(),
      hubs: z.array(z.string()).optional(),
      link_tokens: z.array(z.unknown()).optional(),
      tokens: z.array(z.record(z.unknown())).optional().describe("the valuation tokens, as rules.valuation.tokens"),
      entries: z
        .array(z.object({ entry_id: z.string() }).catchall(z.unknown()))
        .optional()
        .describe("each entry's facts, with its owner's signed statement as proof"),
      books: z
        .record(z.array(z.record(z.unknown())))
        .optional()
        .describe("each entry's relayed mined trades: hash, block, time, path, plan and amounts"),
      reviews: z.array(z.record(z.unknown())).optional(),
      native_skipped: z.unknown().optional(),
    })
    .catchall(z.unknown())
    .describe("A season's published inputs: entries, statements and relayed trades, for league:verify."),
);

/** POST league/statement. */
export const statementAnswer = named(
  "LeagueStatement",
  z
    .object({
      message: z.string().describe("the text the agent's owner signs with personal_sign (EIP-191)"),
      nonce: z.string().describe("works once, for 10 minutes, for this board and entrant"),
      expires_at: unixS,
      agent_id: z.number().int(),
      board,
      entrant: z
        .string()
        .describe(
          "the Entrant line: prize league: trading wallet <wallet>, practice board: account <id>, or " +
            "practice board: hosted agent <id>",
        ),
      owner: address.describe("the partner agent's owner, who signs"),
    })
    .describe("The statement an agent's owner signs to enter or confirm."),
);

/** SPEC "League entities": an entry. */
export const entryView = named(
  "LeagueEntry",
  z
    .object({
      entry_id: z.string(),
      board,
      agent_id: z.number().int(),
      kind: z.enum(["wallet", "account", "hosted"]),
      wallet: address,
      hosted_id: z.string().nullable(),
      status: z.enum(["active", "left"]),
      from_season: z.number().int().describe("plays from this season"),
      playing: z.boolean(),
      season: z.number().int().nullable().describe("the season playing now, if any"),
      token: address,
      symbol: z.string().describe("third-party text: show as text"),
      name: z.string().describe("third-party text: show as text"),
      owner: address,
      agent_wallet: address.describe("where the agent's prizes go"),
      proof: z.string().describe("owner_key or statement"),
      entered_at: unixS,
      left_at: unixS.nullable(),
      confirmed: z.boolean().nullable().describe("prize board: the owner confirmed eligibility; null on practice"),
      confirmed_at: unixS.nullable(),
    })
    .describe("A league entry."),
);

/** POST league/enter (201). */
export const enteredAnswer = named(
  "LeagueEntered",
  entryView
    .extend({ note: z.string().describe("when it plays, and whether it wins anything before it is confirmed") })
    .describe("The entry, playing from the next season."),
);

/** POST league/leave. */
export const leftAnswer = named(
  "LeagueLeft",
  entryView.extend({ left: z.literal(true) }).describe("The entry, out at once."),
);

/** A practice book: atoms and whole units by symbol. */
const practiceBook = z.record(z.object({ atoms, amount: z.string() })).describe("by symbol");

/** GET league/me. */
export const leagueMeAnswer = named(
  "LeagueMe",
  z
    .object({
      wallet: address.describe("lower-case"),
      entries: z.array(
        entryView.extend({
          practice: z
            .object({ season: z.number().int(), book: practiceBook, trades: z.number().int() })
            .nullable()
            .optional()
            .describe("an exchange account's practice entry: its book this season; null while it does not play"),
        }),
      ),
    })
    .describe("The wallet's league entries, newest first."),
);

/** POST league/practice/order (beyond SPEC's table). */
export const practiceOrderAnswer = named(
  "LeaguePracticeOrder",
  z
    .object({
      entry_id: z.string(),
      season: z.number().int(),
      fill: z.object({
        id: z.number().int(),
        token_in: z.string(),
        token_out: z.string(),
        token_in_address: address,
        token_out_address: address,
        amount_in: atoms,
        amount_out: atoms,
        amount_usd: usd,
        fee: atoms,
        fee_bps: z.number(),
        fee_class: z.enum(["major", "other"]),
        fee_tier: z.number(),
        block: z.number().int(),
        filled_at: unixS,
      }),
      book: practiceBook.describe("the season's book after the fill"),
      equity: usd,
      profit_usd: usd,
      trades: z.number().int(),
    })
    .describe("A paper order filled at the quoter's output, and the account's book after it."),
);
