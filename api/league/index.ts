import type { Logger } from "pino";
import type { Address } from "viem";
import type { SqlIndexedReads } from "../ports/indexed.js";
import type { PlatformSigner } from "../ports/platformSigner.js";
import { createLease } from "../ports/store/lease.js";
import {
  assertPracticeSettings,
  leagueConfirm,
  leagueEnter,
  leagueLeave,
  leagueMe,
  leagueStatement,
  leaveHosted,
  type LeagueDeps,
  type LeagueWho,
  type StatementParameters,
  type EnterParameters,
  type ConfirmParameters,
  type LeaveParameters,
} from "./entries.js";
import { practiceGate } from "./practice.js";
import { practiceOrder, type PracticeOrderParameters } from "./practiceOrders.js";
import type { PracticeAgent } from "./deps.js";
import { indexedMarkReader } from "./prize.js";
import { createLeagueReader } from "./read.js";
import { createSettler } from "./settle.js";
import { prizePayouts } from "./payouts.js";
import { createTransferLog } from "./transfers.js";
import { createBatchReader, withInFlightCap } from "../../lib/chain.js";

export type { LeagueHostedAgent, LeagueWho } from "./entries.js";
export { PRACTICE_MIN_INTERVAL_S } from "./entries.js";
export { PRACTICE_BOOK_USD } from "./practice.js";
export { leagueRules } from "./read.js";
/** Request schemas, for the OpenAPI document (api/openapi). */
export { statementBody, enterBody, confirmBody, leaveBody } from "./entries.js";
export { standingsQuery } from "./read.js";
export { practiceOrderBody, type PracticeOrderParameters } from "./practiceOrders.js";
export { indexedMarkReader, valuationTokens } from "./prize.js";
export { leaguePage, leagueSeasonPage } from "./page.js";
/** The operator's reviews of flags (npm run league:review; no route). */
export { recordReview, seasonReviews, ReviewRefused, type ReviewRequest } from "./reviews.js";

/** Chain requests the league's workers have at the node at once (lib/chain withInFlightCap). */
export const LEAGUE_READS_IN_FLIGHT = 4;

/**
 * The league (SPEC "League"): entries, the prize and practice boards, the settler that decides
 * each season once and pays its places from the reserve, and the public reading routes. Both
 * workers run once per store under a lease: the settler ("league-settler") and the standings
 * ("league-standings": its holder computes the boards not yet decided and writes them to
 * app.league_board_packed, every other instance serves what it wrote).
 */
export function createLeague(
  d: LeagueDeps & {
    indexed: SqlIndexedReads;
    reserveSigner: PlatformSigner | null;
    /** The wallet's 30-day volume (trading's tier): a practice paper order pays the fee a live trade would. */
    volume30d: (wallet: Address) => Promise<number>;
    logger?: Logger;
    cacheMs?: number;
    leaseMs?: number;
    settleIntervalMs?: number;
    onCompute?: (key: string) => Promise<void>;
  },
) {
  const marks = indexedMarkReader(d.indexed);
  const hostedAgent = (id: string) => d.hostedAgent(id) as Promise<PracticeAgent | null>;
  // Each worker's chain calls (the standings with the transfer log, the settler) take at most LEAGUE_READS_IN_FLIGHT of
  // the node at once: a season's first standings read thousands of wallets' history, and unbounded they slowed the
  // node past the callers' 2 s budget (bench/RESULTS.md, "the league's reads in flight"). Two queues: a payout's send
  // and receipt never wait behind the standings' reads. The routes keep the callers' client.
  const standings = { ...d, chain: withInFlightCap(d.chain, LEAGUE_READS_IN_FLIGHT) };
  // One transfer log for the standings and the settler: each reads only the blocks after the last read.
  const transfers = createTransferLog({ ...standings, reader: createBatchReader(d.config) });
  const reader = createLeagueReader({ ...standings, marks, hostedAgent, transfers });
  const settler = createSettler({
    ...d,
    chain: withInFlightCap(d.chain, LEAGUE_READS_IN_FLIGHT),
    marks,
    hostedAgent,
    transfers,
    signer: d.reserveSigner,
    // Three payout waits (pay.ts WAIT_MS, 60 s): a holder waiting on a payout's receipt keeps its lease, so a
    // second instance does not run a pass beside it (the stores' guards hold either way; this saves the double work).
    lease: createLease(d.db, "league-settler", 180_000),
    intervalMs: d.settleIntervalMs,
  });
  return {
    statement: (q: StatementParameters, who: LeagueWho) => leagueStatement(d, q, who),
    enter: (q: EnterParameters, who: LeagueWho) => leagueEnter(d, q, who),
    confirm: (q: ConfirmParameters, who: LeagueWho) => leagueConfirm(d, q, who),
    leave: (q: LeaveParameters, who: LeagueWho) => leagueLeave(d, q, who),
    me: (who: LeagueWho) => leagueMe(d, who),
    practiceOrder: (q: PracticeOrderParameters, who: LeagueWho) => practiceOrder({ ...d, marks }, q, who),
    leaveHosted: (hostedId: string) => leaveHosted(d, hostedId),
    assertPracticeSettings: (hostedId: string, next: { pairs: string[]; intervalS: number }) =>
      assertPracticeSettings(d, hostedId, next),
    practiceGate: (agent: PracticeAgent) => practiceGate(d, agent),
    reader,
    /** The standings worker (started and stopped with the app; computes only while it holds the standings lease). */
    boards: reader.worker,
    settler,
    /** The treasury's `prize_payouts` (newest first). */
    prizePayouts: () => prizePayouts(d),
  };
}

export type League = ReturnType<typeof createLeague>;
