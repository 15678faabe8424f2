import { assertPracticeSettings, leagueConfirm, leagueEnter, leagueLeave, leagueMe, leagueStatement, leaveHosted, type LeagueDeps, type LeagueWho } from "./entries.js";

export type { LeagueHostedAgent, LeagueWho } from "./entries.js";
export { PRACTICE_MIN_INTERVAL_S } from "./entries.js";

/**
 * The league (issue 18), first part: the calendar and entries (statement, enter, confirm, leave,
 * me). Standings, clusters, eligibility, settlement, payouts and the reading routes and pages are
 * not built yet.
 */
export function createLeague(d: LeagueDeps) {
  return {
    statement: (body: unknown, who: LeagueWho) => leagueStatement(d, body, who),
    enter: (body: unknown, who: LeagueWho) => leagueEnter(d, body, who),
    confirm: (body: unknown, who: LeagueWho) => leagueConfirm(d, body, who),
    leave: (body: unknown, who: LeagueWho) => leagueLeave(d, body, who),
    me: (who: LeagueWho) => leagueMe(d, who),
    leaveHosted: (hostedId: string) => leaveHosted(d, hostedId),
    assertPracticeSettings: (hostedId: string, next: { pairs: string[]; intervalS: number }) => assertPracticeSettings(d, hostedId, next),
  };
}

export type League = ReturnType<typeof createLeague>;
