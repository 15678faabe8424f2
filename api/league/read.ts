import { Refusal } from "../errors/index.js";
import { createBoardsWorker, storedAnswers } from "./boards.js";
import { createLease } from "../ports/store/lease.js";
import type { KeptSeasons } from "./kept.js";
import { league, reserve } from "./overview.js";
import { books, seasonDetail, seasons } from "./seasons.js";
import {
  computeBoard,
  standings,
  standingsWithCurves,
  workedKeys,
  type BoardBody,
  type ReadDeps,
  type Reading,
  type StandingsParameters,
} from "./standings.js";

export { leagueRules } from "./rules.js";
export {
  RECENT_CLOSED_SEASONS,
  standingsQuery,
  workedSeasons,
  type ReadDeps,
  type StandingsParameters,
} from "./standings.js";
export type { Season } from "../../lib/league/calendar.js";

/**
 * How long the standings lease lasts unless renewed: well over one key's computation (the holder renews it
 * before each).
 */
export const STANDINGS_LEASE_MS = 60_000;

/**
 * The league's reading routes (no key): standings computed at the marks of now while a season
 * plays, provisional once it ended, frozen once decided. Boards not decided are computed only by
 * the standings worker (boards.ts), for the seasons of `workedSeasons` that have an entry on that
 * board (at most 2 x 3 keys), on the instance holding the store's "league-standings" lease; the
 * others serve the answers it writes. A reader gets the last answer. An empty board answers
 * `emptyBoard`.
 */
export function createLeagueReader(d: ReadDeps) {
  // The lease runs on the service clock (shared by the instances; tests move it past the ttl).
  const shared = storedAnswers<BoardBody>(
    d.db,
    createLease(d.db, "league-standings", d.leaseMs ?? STANDINGS_LEASE_MS, d.clock),
    (b) => b.block ?? null,
  );
  // The prize boards' kept trades and books (issue 29 point 6): a pass adds only what came in since the last.
  const kept: KeptSeasons = new Map();
  const worker = createBoardsWorker({
    clock: d.clock,
    compute: (key) => computeBoard({ ...d, kept }, key),
    keys: async () => {
      const keys = await workedKeys(d);
      for (const n of kept.keys()) if (!keys.includes(`prize:${n}`)) kept.delete(n);
      return keys;
    },
    intervalMs: d.cacheMs ?? 15_000,
    logger: d.logger,
    onCompute: d.onCompute,
    shared,
  });
  const r: Reading = { ...d, worker };
  return {
    league: guarded(() => league(r)),
    standings: guarded((q: StandingsParameters) => standings(r, q)),
    standingsWithCurves: guarded((q: StandingsParameters) => standingsWithCurves(r, q)),
    seasons: guarded(() => seasons(r)),
    seasonDetail: guarded((raw: string) => seasonDetail(r, raw)),
    reserve: guarded(() => reserve(r)),
    books: guarded((raw: string) => books(r, raw)),
    worker,
    /** Drops the kept trades and books: the next pass reads and values every season in full (the bench's rebuild). */
    forget: () => kept.clear(),
  };
}
export type LeagueReader = ReturnType<typeof createLeagueReader>;

/**
 * A reading route whose chain, indexer or store read failed answers 503 LEAGUE_UNAVAILABLE (retryable), never a
 * 500.
 */
function guarded<A extends unknown[], R>(f: (...a: A) => Promise<R>): (...a: A) => Promise<R> {
  return async (...a) => {
    try {
      return await f(...a);
    } catch (err) {
      if (err instanceof Refusal) throw err;
      throw new Refusal(
        "LEAGUE_UNAVAILABLE",
        "the league's standings could not be read; try again shortly",
        {},
        { cause: err, retryAfterS: 5 },
      );
    }
  };
}
