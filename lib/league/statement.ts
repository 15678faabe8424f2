/**
 * The league statement an agent's owner signs (EIP-191) to enter or confirm an entry: exactly
 * these lines, so the server, the SDK and anyone checking a signature build the same bytes. A
 * prize statement carries the owner's eligibility confirmation on its own line before the last.
 */
export type LeagueBoard = "prize" | "practice";
export type Entrant =
  | { kind: "wallet"; wallet: string }
  | { kind: "account"; account: number }
  | { kind: "hosted"; hosted_id: string };

export const ELIGIBILITY_LINE =
  "Eligibility: I, the owner, am 18 or older, not a US person, not in a sanctioned country or region and not on a " +
  "sanctions list, eligible to take part under the laws that apply to me, and I accept the prize-league rules.";

/**
 * The Entrant line's words (SPEC): `prize league: trading wallet <wallet>`, `practice board: account <id>`, `practice
 * board: hosted agent <id>`.
 */
export function entrantText(e: Entrant): string {
  if (e.kind === "wallet") return `prize league: trading wallet ${e.wallet.toLowerCase()}`;
  if (e.kind === "account") return `practice board: account ${e.account}`;
  return `practice board: hosted agent ${e.hosted_id}`;
}

export function leagueStatementText(s: {
  board: LeagueBoard;
  agent_id: number;
  owner: string;
  entrant: Entrant;
  nonce: string;
  issued_at: number;
  expires_at: number;
  chain_id: number;
}): string {
  return [
    "pit trading league entry",
    `Board: ${s.board}`,
    `Agent: ${s.agent_id}`,
    `Owner: ${s.owner.toLowerCase()}`,
    `Entrant: ${entrantText(s.entrant)}`,
    `Nonce: ${s.nonce}`,
    `Issued: ${new Date(s.issued_at * 1000).toISOString()}`,
    `Expires: ${new Date(s.expires_at * 1000).toISOString()}`,
    ...(s.board === "prize" ? [ELIGIBILITY_LINE] : []),
    `Chain: ${s.chain_id}`,
  ].join("\n");
}

/** A statement is good for 10 minutes, once, for its board and entrant (SPEC "Limits"). */
export const STATEMENT_TTL_S = 600;
