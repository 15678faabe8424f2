import type { Address, Hex, LocalAccount } from "viem";
import {
  ELIGIBILITY_LINE,
  leagueStatementText,
  STATEMENT_TTL_S,
  type Entrant,
  type LeagueBoard,
} from "../../lib/league/statement.js";
import { PitError } from "./errors.js";
import type { Http } from "./http.js";
import type { Pins } from "./pins.js";

export type StatementRequest = { agentId: number; board?: LeagueBoard; hostedId?: string; accountId?: number };
export type Statement = {
  message: string;
  nonce: string;
  expires_at: number;
  agent_id: number;
  board: LeagueBoard;
  entrant: string;
  owner: Address;
};

/**
 * Asks for a league statement and rebuilds its text locally (lib/leagueStatement, the server's own
 * code): LEAGUE_STATEMENT when the server's text is not the client's rebuild for this wallet,
 * agent, board and entrant.
 */
export async function askStatement(http: Http, wallet: Address, pins: Pins, q: StatementRequest): Promise<Statement> {
  const st = await http.post<Statement>("/league/statement", {
    agent_id: q.agentId,
    ...(q.board ? { board: q.board } : {}),
    ...(q.hostedId ? { hosted_id: q.hostedId } : {}),
  });
  const board: LeagueBoard = q.hostedId ? "practice" : (q.board ?? "prize");
  const entrant: Entrant =
    board === "prize"
      ? { kind: "wallet", wallet }
      : q.hostedId
        ? { kind: "hosted", hosted_id: q.hostedId }
        : { kind: "account", account: q.accountId ?? Number(/account (\d+)$/.exec(st.entrant ?? "")?.[1] ?? NaN) };
  const mine = leagueStatementText({
    board,
    agent_id: q.agentId,
    owner: st.owner,
    entrant,
    nonce: st.nonce,
    issued_at: st.expires_at - STATEMENT_TTL_S,
    expires_at: st.expires_at,
    chain_id: pins.chainId,
  });
  if (st.message !== mine || st.board !== board || st.agent_id !== q.agentId)
    throw new PitError(
      "LEAGUE_STATEMENT",
      "the statement to sign is not this client's own rebuild of it " +
        "(wallet, agent, board, entrant, nonce or times differ)",
    );
  return st;
}

/**
 * The owner's signature of a statement: only a statement naming this owner, and for the prize
 * board only with the eligibility confirmation on its own line before the last (SIGNING_MISMATCH).
 */
export async function signStatement(owner: LocalAccount, st: Pick<Statement, "message" | "board">): Promise<Hex> {
  const lines = st.message.split("\n");
  const namesOwner = lines.includes(`Owner: ${owner.address.toLowerCase()}`);
  const eligibility = st.board !== "prize" || lines.at(-2) === ELIGIBILITY_LINE;
  if (!namesOwner || !eligibility)
    throw new PitError(
      "SIGNING_MISMATCH",
      `the text is not ${owner.address}'s own ${st.board} statement` +
        `${eligibility ? "" : " with the eligibility confirmation"}; nothing was signed`,
    );
  return owner.signMessage({ message: st.message });
}
