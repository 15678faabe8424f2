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

/**
 * The answer schemas are true of the code (issue 30 point 1): what each service function returns fits its route's
 * answer schema, checked by tsc (`npx tsc --noEmit -p .`) here; test/e2e holds every real answer to them at run time.
 */
type Out<F extends (...a: never[]) => unknown> = Awaited<ReturnType<F>>;
/** Compiles only where T fits the schema S's input: every field S requires, of S's types. */
type Fits<S extends ZodTypeAny, T extends z.input<S>> = [S, T];
/** Fits, but for the fields K, which the code types loosely (each is checked apart, from what makes it). */
type FitsBut<S extends ZodTypeAny, K extends string, T extends Omit<z.input<S>, K>> = [S, T];

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
];

describe("answer schemas", () => {
  it("fit the code's answers (checked by tsc)", () => {
    const checked: Checked | null = null;
    expect(checked).toBeNull();
  });
});
