import { describe, expect, it } from "vitest";
import type { z, ZodTypeAny } from "zod";
import type { planTrade } from "../api/trading/plan.js";
import type { quoteTrade } from "../api/trading/quote.js";
import type { Relay } from "../api/trading/relay.js";
import type { simulateTrade } from "../api/trading/simulate.js";
import type { Trading } from "../api/trading/trading.js";
import type {
  planAnswer,
  quoteAnswer,
  revokeAnswer,
  simulateAnswer,
  submitAnswer,
  tradeRecord,
} from "../api/trading/answers.js";
import type * as sessions from "../api/sessions/answers.js";
import type { sessionView } from "../api/sessions/view.js";
import type { Sessions } from "../api/sessions/index.js";
import type * as hosted from "../api/hosted/answers.js";
import type { Hosted } from "../api/hosted/index.js";
import type { practiceRow, prizeRow, standingsAnswer } from "../api/league/answers.js";
import type { practiceBoard } from "../api/league/practice.js";
import type { PrizeRowView } from "../api/league/prize.js";
import type { prizePayouts } from "../api/league/payouts.js";
import type { prizePayout, treasuryAnswer } from "../api/treasury/answers.js";
import type { TreasuryAnswer } from "../api/treasury/read.js";
import type { challengeAnswer, revokeAllAnswer, verifyAnswer } from "../api/auth/answers.js";
import type { portfolioAnswer, tradesAnswer } from "../api/account/answers.js";
import type { Portfolio } from "../api/account/index.js";
import type { myTrades } from "../api/account/trades.js";
import type { TradeRecord } from "../api/trading/index.js";
import type { createChallenge, revokeAll, verifySignIn } from "../api/auth/signin.js";
import type { standings } from "../api/league/standings.js";
import type { configAnswer, statsAnswer } from "../api/server/answers.js";
import type { publicConfig } from "../api/server/config.js";
import type { StatsBody } from "../api/server/stats.js";
import type { tokenSearchAnswer, tokenStatsAnswer } from "../api/tokens/answers.js";
import type { Tokens } from "../api/tokens/registry.js";
import type { fastAnswer, fastTermsAnswer } from "../api/fast/answers.js";
import type { fastTerms } from "../api/fast/terms.js";
import type { fastTrade } from "../api/fast/fast.js";
import type { startGrant, switchOn } from "../api/sessions/grant.js";
import type { agentSpend, aiInfo, connectOwn, disconnectOwn } from "../api/hosted/aiAccount.js";
import type * as league from "../api/league/answers.js";
import type { league as leagueOverview, reserve } from "../api/league/overview.js";
import type { books, seasonDetail, seasons } from "../api/league/seasons.js";
import type { leagueConfirm, leagueEnter, leagueLeave, leagueMe, leagueStatement } from "../api/league/entries.js";
import type { practiceOrder } from "../api/league/practiceOrders.js";

/**
 * The answer schemas are true of the code (issue 30 point 1): what each service function returns fits its route's
 * answer schema, checked by tsc (`npx tsc --noEmit -p .`) here; test/e2e holds every real answer to them at run time.
 */
type Out<F extends (...a: never[]) => unknown> = Awaited<ReturnType<F>>;
/** T with every array readonly: the code's constant tables (`as const`) fit an answer's arrays. */
type Loose<T> = T extends (infer U)[] ? readonly Loose<U>[] : T extends object ? { [K in keyof T]: Loose<T[K]> } : T;
/** Compiles only where T fits the schema S's input: every field S requires, of S's types. */
type Fits<S extends ZodTypeAny, T extends Loose<z.input<S>>> = [S, T];
/**
 * Fits, but for the fields K, which the code types loosely (each is checked apart, from what makes it, or by the e2e
 * suite, which holds every real answer to the schema).
 */
type FitsBut<S extends ZodTypeAny, K extends string, T extends Loose<Omit<z.input<S>, K>>> = [S, T];

type Checked = [
  Fits<typeof quoteAnswer, Out<typeof quoteTrade>>,
  Fits<typeof planAnswer, Out<typeof planTrade>>,
  Fits<typeof simulateAnswer, Out<typeof simulateTrade>>,
  Fits<typeof revokeAnswer, Out<Trading["revoke"]>>,
  Fits<typeof submitAnswer, Out<Relay["submit"]>>,
  Fits<typeof sessions.sessionTradeAnswer, Out<Sessions["trade"]>>,
  Fits<typeof sessions.sessionRevokedAnswer, Out<Sessions["revoke"]>>,
  Fits<typeof sessions.sessionView, Out<typeof sessionView>>,
  Fits<typeof sessions.hostedSummary, Out<Hosted["summaries"]>[number]>,
  Fits<typeof hosted.agentAnswer, Out<Hosted["detail"]>>,
  Fits<typeof hosted.agentsAnswer, Out<Hosted["list"]>>,
  Fits<typeof hosted.createdAnswer, Out<Hosted["create"]>>,
  Fits<typeof hosted.agentAnswer, Out<Hosted["update"]>>,
  Fits<typeof hosted.agentAnswer, Out<Hosted["pause"]>>,
  Fits<typeof hosted.agentAnswer, Out<Hosted["resume"]>>,
  Fits<typeof hosted.stoppedAnswer, Out<Hosted["stop"]>>,
  Fits<typeof hosted.deletedAnswer, Out<Hosted["remove"]>>,
  Fits<typeof hosted.logsAnswer, Out<Hosted["logs"]>>,
  Fits<typeof hosted.webhookSecretAnswer, Out<Hosted["rotateWebhookSecret"]>>,
  Fits<typeof hosted.executorAnswer, Out<Hosted["executor"]>>,
  Fits<typeof hosted.agentAnswer, Out<Hosted["attachSession"]>>,
  Fits<typeof hosted.agentAnswer, Out<Hosted["stockAttestation"]>>,
  Fits<typeof hosted.attestationRevokedAnswer, Out<Hosted["revokeStockAttestation"]>>,
  Fits<typeof hosted.refundAnswer, Out<Hosted["refundGas"]>>,
  Fits<typeof hosted.rotatedAnswer, Out<Hosted["rotateExecutor"]>>,
  FitsBut<typeof standingsAnswer, "rows", Out<typeof standings>>,
  Fits<typeof prizeRow, PrizeRowView>,
  Fits<typeof practiceRow, Out<typeof practiceBoard>[number]>,
  FitsBut<typeof treasuryAnswer, "prize_payouts", TreasuryAnswer>,
  Fits<typeof prizePayout, Out<typeof prizePayouts>[number]>,
  Fits<typeof challengeAnswer, Out<typeof createChallenge>>,
  Fits<typeof verifyAnswer, Out<typeof verifySignIn>>,
  Fits<typeof revokeAllAnswer, Out<typeof revokeAll>>,
  FitsBut<typeof tradesAnswer, "trades", Out<typeof myTrades>>,
  FitsBut<typeof tradeRecord, "path" | "status" | "token_in" | "code", TradeRecord>,
  Fits<typeof portfolioAnswer, Portfolio>,
  Fits<typeof configAnswer, ReturnType<typeof publicConfig>>,
  Fits<typeof statsAnswer, StatsBody>,
  Fits<typeof tokenStatsAnswer, Out<Tokens["stats"]>>,
  FitsBut<typeof tokenSearchAnswer, "tokens" | "query", Out<Tokens["search"]>>,
  Fits<typeof fastTermsAnswer, Out<typeof fastTerms>>,
  Fits<typeof fastAnswer, Out<typeof fastTrade>>,
  FitsBut<typeof sessions.grantStartAnswer, "setup", Out<typeof startGrant>>,
  FitsBut<typeof sessions.grantActiveAnswer, "setup", Out<typeof switchOn>>,
  Fits<typeof hosted.aiInfoAnswer, Out<typeof aiInfo>>,
  Fits<typeof hosted.spendAnswer, Out<typeof agentSpend>>,
  Fits<typeof hosted.ownFundingAnswer, Out<typeof connectOwn>>,
  Fits<typeof hosted.ownDisconnectedAnswer, Out<typeof disconnectOwn>>,
  FitsBut<typeof league.leagueAnswer, "past", Out<typeof leagueOverview>>,
  Fits<typeof league.reserveAnswer, Out<typeof reserve>>,
  FitsBut<typeof league.seasonsAnswer, "seasons", Out<typeof seasons>>,
  FitsBut<typeof league.seasonDetailAnswer, "rows" | "winners", Out<typeof seasonDetail>>,
  FitsBut<typeof league.booksAnswer, "books", Out<typeof books>>,
  Fits<typeof league.statementAnswer, Out<typeof leagueStatement>>,
  Fits<typeof league.enteredAnswer, Out<typeof leagueEnter>>,
  Fits<typeof league.entryView, Out<typeof leagueConfirm>>,
  Fits<typeof league.leftAnswer, Out<typeof leagueLeave>>,
  Fits<typeof league.leagueMeAnswer, Out<typeof leagueMe>>,
  Fits<typeof league.practiceOrderAnswer, Out<typeof practiceOrder>>,
];

describe("answer schemas", () => {
  it("fit the code's answers (checked by tsc)", () => {
    const checked: Checked | null = null;
    expect(checked).toBeNull();
  });
});
