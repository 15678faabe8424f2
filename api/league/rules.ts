import type { Config } from "../../lib/config.js";
import { MIN_ACTIVE_DAYS, MIN_CLUSTERS, MIN_TRADES, PRIZE_SPLIT_BPS } from "../../lib/league/rules.js";
import { GRID_S, LEAGUE_TWAP_WINDOW_S } from "../../lib/league/valuation.js";
import { FEED_GRACE_S, FEED_HEARTBEAT_S } from "../../lib/markStale.js";
import { OUTLIER_BPS } from "../../lib/league/book.js";
import { COPY_MIN_TRADES, COPY_SHARE_BPS, COPY_WINDOW_S } from "../../lib/league/copy.js";
import { NEVER_REVIEWED, REVIEW_WINDOW_S } from "../../lib/league/review.js";
import { PRACTICE_BOOK_USD } from "./practice.js";
import { hubsOf, valuationTokens } from "./prize.js";
import { NATIVE_BLOCKS_PER_READ, NATIVE_STEP_BLOCKS } from "./transfers.js";
import { NATIVE_MAX_FAILURES } from "../../lib/league/native.js";
import { PRACTICE_MIN_INTERVAL_S } from "./entries.js";

/** How the native ETH links are scanned, bounded (published as `rules.clusters.native_scan`). */
const NATIVE_SCAN = {
  blocks_per_step: Number(NATIVE_STEP_BLOCKS),
  blocks_per_pass: Number(NATIVE_BLOCKS_PER_READ),
  max_failures: NATIVE_MAX_FAILURES,
  note:
    "scanned in steps, progress kept after each; a scan not yet through the block flags LINKS and holds " +
    "the decision; a block (or a step's state reads) failing max_failures times in a row is skipped and " +
    "flags LINKS with the blocks named (published with the books as native_skipped); never a silent pass",
};

/** The published rules (GET league `rules`): what the rows are computed by, so anyone can recompute them. */
export function leagueRules(config: Config) {
  return {
    score: "season profit in USD (six decimals); highest wins; return and drawdown are context",
    valuation: {
      marks:
        "independent only: USDG at $1, oracle feeds (a round older than the heartbeat plus grace is no mark; " +
        "stock feeds count session time), the partner token at its USDG pool's TWAP",
      tokens: valuationTokens(config),
      twap_window_s: LEAGUE_TWAP_WINDOW_S,
      feed_heartbeat_s: FEED_HEARTBEAT_S,
      feed_grace_s: FEED_GRACE_S,
      unmarked: "at cost while held, at proceeds when sold, written off if held at season end",
      lost_mark: "a marked token without a mark at the valuation counts nothing",
      drawdown_grid_s: GRID_S,
      drawdown:
        "largest fall of the profit from its peak, on each day's 00:00 UTC of the season and at the end, " +
        "over the capital",
      capital: "half the book's largest gross exposure at the marks of its trades",
      price_outlier_bps: OUTLIER_BPS,
      book:
        "every trade the service relayed for the trading wallet and that was mined in the season (own key, " +
        "fast, session, hosted live); deposits, withdrawals and outside trades do not count",
    },
    split: {
      bps: PRIZE_SPLIT_BPS,
      places: 3,
      one_per_owner_cluster: true,
      token: "the partner token, to each winner's agent wallet as the partner vault records it",
    },
    minimum_field: { clusters: MIN_CLUSTERS, traded: { trades: MIN_TRADES, active_days: MIN_ACTIVE_DAYS } },
    clusters: {
      links: ["address", "transfer", "funder"],
      hubs: [...hubsOf(config)],
      note:
        "hubs never link; transfer is a token or native ETH transfer between two entries' addresses; funder is " +
        "the first non-hub transfer (token or ETH) into two entries' addresses from one address",
      native_eth:
        "read from debug_traceBlockByNumber (callTracer, internal calls included, reverted calls excluded) over " +
        "the blocks where an address's nonce or ETH balance changed (found by halving on an archive node); a node " +
        "that cannot answer flags rule LINKS",
      native_scan: NATIVE_SCAN,
    },
    prize_cap_usd: config.league.prizeCapUsd,
    reserve_ceiling_seasons: config.league.ceilingSeasons,
    copy_trading_window_s: COPY_WINDOW_S,
    copy_trading_share_bps: COPY_SHARE_BPS,
    copy_trading_min_trades: COPY_MIN_TRADES,
    copy_trading:
      `rule COPY_TRADING flags for review an entry more than ${COPY_SHARE_BPS / 100} % of whose season volume ` +
      `(at the marks of each trade's block; by trades when none is valued), in at least ${COPY_MIN_TRADES} ` +
      "trades, follows another owner cluster's trades: a trade follows when, of that cluster's trades of the " +
      `same pair and direction mined within ${COPY_WINDOW_S} s of it in another block, the nearest came before`,
    review: {
      how: "an operator's verdict (pass or fail) on one entry's flagged rule in a season not yet decided",
      window_s: REVIEW_WINDOW_S,
      window:
        "a season is not decided while an entry that reviews could make eligible has an open flag, until " +
        "window_s after its end; then it is decided with the flags left unreviewed as fails",
      binds:
        "to the flag's reason as reviewed: new evidence changes the reason and the rule is a flag again; the " +
        "latest review of a flag applies",
      never_reviewed: Object.keys(NEVER_REVIEWED),
      published: "every review with the season's books (who, when, why); the rule shows reviewed and the verdict",
    },
    practice_starting_book: { USDG: PRACTICE_BOOK_USD },
    division:
      "spot trades on chain 4663; the practice board's paper orders (exchange accounts' and hosted agents') trade " +
      "the hosted assets against USDG, filled at the V4Quoter's output at the latest block after the live fee; an " +
      "account's order outside them is refused LEAGUE_DIVISION",
    hosted_assets: {
      pairs_against: "USDG",
      assets: Object.values(config.tokens)
        .filter((t) => t.kind === "native" || t.kind === "crypto" || t.kind === "partner")
        .map((t) => t.symbol),
      min_interval_s: PRACTICE_MIN_INTERVAL_S,
    },
  };
}
