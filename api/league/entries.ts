import { randomBytes } from "node:crypto";
import { getAddress, zeroAddress, type Address, type Hex } from "viem";
import { recoverMessageAddress } from "../../lib/secp.js";
import { z } from "zod";
import { partnerAgentVaultAbi } from "../../abis/fixtures.js";
import type { Config } from "../../lib/config.js";
import { calendarAt } from "../../lib/league/calendar.js";
import {
  entrantText,
  leagueStatementText,
  STATEMENT_TTL_S,
  type Entrant,
  type LeagueBoard,
} from "../../lib/league/statement.js";
import { Refusal } from "../errors/index.js";
import type { Caller } from "../http/caller.js";
import type { Db } from "../ports/store/db.js";
import type { Common } from "../ports/common.js";
import { accountBookOf } from "./practiceOrders.js";

/** A hosted agent as the league reads it (hosted's store). */
export type LeagueHostedAgent = {
  id: string;
  name: string;
  wallet: Address;
  mode: "paper" | "live";
  status: string;
  pairs: string[];
  intervalS: number;
  deletedAt: number | null;
  paperBook: Record<string, string> | null;
  brainState: Record<string, unknown> | null;
};

export type LeagueDeps = Pick<Common, "config" | "chain" | "clock"> & {
  db: Db;
  /** SANCTIONED (451) for a listed address; ENGINE_UNAVAILABLE when the list cannot be read. */
  assertNotSanctioned: (address: Address, field: string) => Promise<void>;
  hostedAgent: (id: string) => Promise<LeagueHostedAgent | null>;
};
/** The signed-in wallet the keyed league actions act for (api/http/caller.ts). */
export type LeagueWho = Caller;

/** Hosted practice entrants tick at least every 300 s, on these assets against USDG (SPEC LEAGUE_PAIRS). */
export const PRACTICE_MIN_INTERVAL_S = 300;

const agentId = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);
const board = z.enum(["prize", "practice"]);
const hostedId = z.string().regex(/^ha_[A-Za-z0-9_-]{1,32}$/, "a hosted agent id");
const signature = z.string().regex(/^0x[0-9a-fA-F]{130}$/, "a 65-byte signature");
const nonce = z.string().regex(/^[0-9a-f]{32}$/, "a statement nonce");
export const statementBody = z
  .object({ agent_id: agentId, board: board.optional(), hosted_id: hostedId.optional() })
  .strict();
export const enterBody = z
  .object({
    agent_id: agentId,
    board: board.optional(),
    hosted_id: hostedId.optional(),
    signature: signature.optional(),
    nonce: nonce.optional(),
  })
  .strict();
export const confirmBody = z.object({ agent_id: agentId, signature, nonce }).strict();
export const leaveBody = z
  .object({ board: board.optional(), hosted_id: hostedId.optional(), agent_id: agentId.optional() })
  .strict();
/** The keyed actions' input, as the edge parses it (api/league/routes.ts). */
export type StatementParameters = z.infer<typeof statementBody>;
export type EnterParameters = z.infer<typeof enterBody>;
export type ConfirmParameters = z.infer<typeof confirmBody>;
export type LeaveParameters = z.infer<typeof leaveBody>;

type PartnerAgent = {
  agent_id: number;
  token: Address;
  symbol: string;
  name: string;
  owner: Address;
  agentWallet: Address;
};
type EntryRow = {
  entry_id: string;
  board: LeagueBoard;
  agent_id: string;
  kind: Entrant["kind"];
  wallet: string;
  account_id: string | null;
  hosted_id: string | null;
  entrant: string;
  owner: string;
  agent_wallet: string;
  token: string;
  symbol: string;
  name: string;
  proof: string;
  confirmed: boolean | null;
  from_season: number;
  entered_at: string;
  confirmed_at: string | null;
  left_at: string | null;
};

const nowS = (d: LeagueDeps) => Math.floor(d.clock() / 1000);

/** The partner vault's agent: NOT_AN_AGENT when it has none with that id, LEAGUE_UNAVAILABLE when it cannot be read. */
async function partnerAgent(d: LeagueDeps, id: number): Promise<PartnerAgent> {
  let a: { token: Address; symbol: string; name: string; owner: Address; agentWallet: Address };
  try {
    const count = await d.chain.readContract({
      address: d.config.contracts.partnerAgentVault,
      abi: partnerAgentVaultAbi,
      functionName: "agentCount",
    });
    if (BigInt(id) > count) throw new Refusal("NOT_AN_AGENT", `the partner vault has no agent ${id}`);
    a = await d.chain.readContract({
      address: d.config.contracts.partnerAgentVault,
      abi: partnerAgentVaultAbi,
      functionName: "getAgent",
      args: [BigInt(id)],
    });
  } catch (err) {
    if (err instanceof Refusal) throw err;
    throw new Refusal(
      "LEAGUE_UNAVAILABLE",
      "the partner vault could not be read; try again shortly",
      {},
      { cause: err, retryAfterS: 5 },
    );
  }
  if (a.owner === zeroAddress) throw new Refusal("NOT_AN_AGENT", `the partner vault has no agent ${id}`);
  return {
    agent_id: id,
    token: getAddress(a.token),
    symbol: a.symbol,
    name: a.name,
    owner: getAddress(a.owner),
    agentWallet: getAddress(a.agentWallet),
  };
}

/** The board a request plays: a hosted agent implies practice (PRIZE_IS_LIVE when prize is asked with one). */
function boardOf(q: { board?: LeagueBoard; hosted_id?: string }): LeagueBoard {
  if (q.hosted_id && q.board === "prize")
    throw new Refusal(
      "PRIZE_IS_LIVE",
      "the prize board counts real trades only; a hosted paper agent plays the practice board",
    );
  return q.hosted_id ? "practice" : (q.board ?? "prize");
}

async function accountIdOf(d: LeagueDeps, wallet: Address): Promise<number> {
  const [r] = await d.db.query<{ id: string }>("SELECT id::text AS id FROM app.accounts WHERE wallet = $1", [
    wallet.toLowerCase(),
  ]);
  if (!r) throw new Refusal("WALLET_NOT_BOUND", "this wallet has no account");
  return Number(r.id);
}

/**
 * Who plays: the trading wallet (prize), the wallet's exchange account or a hosted paper agent (practice),
 * checked as enter checks it.
 */
async function entrantOf(d: LeagueDeps, wallet: Address, b: LeagueBoard, hosted?: string): Promise<Entrant> {
  if (b === "prize") return { kind: "wallet", wallet: wallet.toLowerCase() };
  if (!hosted) return { kind: "account", account: await accountIdOf(d, wallet) };
  const h = await d.hostedAgent(hosted);
  if (!h || h.deletedAt !== null) throw new Refusal("NOT_FOUND", `no hosted agent ${hosted}`);
  if (h.wallet.toLowerCase() !== wallet.toLowerCase())
    throw new Refusal("FORBIDDEN", `hosted agent ${hosted} belongs to another wallet`);
  if (h.status === "stopped") throw new Refusal("STOPPED", `hosted agent ${hosted} is stopped`);
  if (h.mode !== "paper") throw new Refusal("LEAGUE_PAPER_ONLY", "only paper hosted agents play the practice board");
  checkPractice(d.config, h);
  return { kind: "hosted", hosted_id: hosted };
}

/** ETH (native), the BTC asset (the one `crypto` asset) and the partner token: the practice board's hosted assets. */
function practiceAssets(config: Config): Set<string> {
  return new Set(
    Object.values(config.tokens)
      .filter((t) => t.kind === "native" || t.kind === "crypto" || t.kind === "partner")
      .map((t) => t.symbol),
  );
}

/**
 * A hosted agent playing the practice board keeps its rules when its settings change (LEAGUE_PAIRS,
 * LEAGUE_INTERVAL).
 */
export async function assertPracticeSettings(
  d: Pick<LeagueDeps, "db" | "config">,
  hostedId: string,
  next: { pairs: string[]; intervalS: number },
): Promise<void> {
  const [playing] = await d.db.query("SELECT 1 FROM app.league_entries WHERE hosted_id = $1 AND left_at IS NULL", [
    hostedId,
  ]);
  if (playing) checkPractice(d.config, next);
}

function checkPractice(config: Config, h: { pairs: string[]; intervalS: number }) {
  const assets = practiceAssets(config);
  const bad = h.pairs.find((p) => {
    const [x, y] = p.split("/") as [string, string];
    return !((y === "USDG" && assets.has(x)) || (x === "USDG" && assets.has(y)));
  });
  if (bad)
    throw new Refusal(
      "LEAGUE_PAIRS",
      `${bad}: a practice hosted agent trades only ${[...assets].join(", ")} against USDG`,
    );
  if (h.intervalS < PRACTICE_MIN_INTERVAL_S)
    throw new Refusal(
      "LEAGUE_INTERVAL",
      `a practice hosted agent ticks at most every ${PRACTICE_MIN_INTERVAL_S} s (this one: ${h.intervalS} s)`,
    );
}

/** The entry already there for this agent or entrant on the board: AGENT_ENTERED or ALREADY_ENTERED. */
async function assertFree(
  d: Pick<LeagueDeps, "db">,
  b: LeagueBoard,
  agent: number,
  entrant: string,
  o: { confirming?: boolean } = {},
) {
  const rows = await d.db.query<{ agent_id: string; entrant: string }>(
    "SELECT agent_id::text AS agent_id, entrant FROM app.league_entries WHERE board = $1 AND left_at IS " +
      "NULL AND (agent_id = $2 OR entrant = $3)",
    [b, agent, entrant],
  );
  // A statement for the entry already there (this agent, this entrant) is the one confirm takes.
  if (o.confirming && rows.length === 1 && Number(rows[0]!.agent_id) === agent && rows[0]!.entrant === entrant) return;
  if (rows.some((r) => r.entrant === entrant))
    throw new Refusal("ALREADY_ENTERED", `${entrant} already plays the ${b} board; leave first`);
  if (rows.length) throw new Refusal("AGENT_ENTERED", `partner agent ${agent} is already on the ${b} board`);
}

async function assertClean(d: LeagueDeps, addresses: [Address, string][]) {
  for (const [a, field] of addresses) await d.assertNotSanctioned(a, field);
}

/** POST league/statement: the text the owner signs, its nonce (once, 10 minutes, this board and entrant). */
export async function leagueStatement(d: LeagueDeps, q: StatementParameters, who: LeagueWho) {
  const wallet = who.wallet;
  const b = boardOf(q);
  const agent = await partnerAgent(d, q.agent_id);
  const entrant = await entrantOf(d, wallet, b, q.hosted_id);
  await assertClean(d, [
    [wallet, "wallet"],
    [agent.owner, "owner"],
    [agent.agentWallet, "agent_wallet"],
  ]);
  await assertFree(d, b, agent.agent_id, entrantText(entrant), { confirming: true });
  const n = randomBytes(16).toString("hex");
  const issued = nowS(d);
  const expires = issued + STATEMENT_TTL_S;
  const message = leagueStatementText({
    board: b,
    agent_id: agent.agent_id,
    owner: agent.owner,
    entrant,
    nonce: n,
    issued_at: issued,
    expires_at: expires,
    chain_id: d.config.chainId,
  });
  await d.db.query(
    "INSERT INTO app.league_statements (nonce, wallet, agent_id, board, entrant, owner, message, " +
      "expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    [n, wallet.toLowerCase(), agent.agent_id, b, entrantText(entrant), agent.owner.toLowerCase(), message, expires],
  );
  return {
    message,
    nonce: n,
    expires_at: expires,
    agent_id: agent.agent_id,
    board: b,
    entrant: entrantText(entrant),
    owner: agent.owner,
  };
}

/**
 * The owner's signed statement for exactly this wallet, agent, board and entrant, used once:
 * STATEMENT_EXPIRED (unknown, used, or past its 10 minutes), STATEMENT_MISMATCH, BAD_SIGNATURE
 * (not a signature), NOT_OWNER (another signer). Marks it used.
 */
async function useStatement(
  d: LeagueDeps,
  db: Pick<Db, "query">,
  s: { nonce: string; signature: Hex; wallet: Address; agent: PartnerAgent; board: LeagueBoard; entrant: string },
): Promise<void> {
  const [st] = await db.query<{
    wallet: string;
    agent_id: string;
    board: string;
    entrant: string;
    owner: string;
    message: string;
    expires_at: string;
    used_at: string | null;
  }>("SELECT * FROM app.league_statements WHERE nonce = $1", [s.nonce]);
  if (!st || st.used_at !== null || Number(st.expires_at) <= nowS(d))
    throw new Refusal(
      "STATEMENT_EXPIRED",
      "that statement's nonce is unknown, used or older than 10 minutes: ask for a new statement",
    );
  if (
    st.wallet !== s.wallet.toLowerCase() ||
    Number(st.agent_id) !== s.agent.agent_id ||
    st.board !== s.board ||
    st.entrant !== s.entrant
  )
    throw new Refusal("STATEMENT_MISMATCH", "that statement is for another wallet, agent, board or entrant");
  let signer: Address;
  try {
    signer = await recoverMessageAddress({ message: st.message, signature: s.signature });
  } catch {
    throw new Refusal("BAD_SIGNATURE", "the signature does not recover", {}, { context: "malformed" });
  }
  if (signer.toLowerCase() !== s.agent.owner.toLowerCase() || st.owner !== s.agent.owner.toLowerCase())
    throw new Refusal("NOT_OWNER", `the statement is not signed by the agent's owner ${s.agent.owner}`, {
      owner: s.agent.owner,
    });
  const used = await db.query(
    "UPDATE app.league_statements SET used_at = $2 WHERE nonce = $1 AND used_at IS NULL RETURNING nonce",
    [s.nonce, nowS(d)],
  );
  if (!used.length) throw new Refusal("STATEMENT_EXPIRED", "that statement was just used: ask for a new one");
}

/** The entry's row as enter writes it (in the transaction that uses its statement). */
async function insertEntry(
  db: Pick<Db, "query">,
  e: {
    id: string;
    board: LeagueBoard;
    agent: PartnerAgent;
    entrant: Entrant;
    wallet: Address;
    proof: "owner_key" | "statement";
    nonce: string | null;
    signature: string | null;
    confirmed: boolean | null;
    fromSeason: number;
    at: number;
  },
) {
  await db.query(
    `INSERT INTO app.league_entries (entry_id, board, agent_id, kind, wallet, account_id, hosted_id, entrant,
     owner, agent_wallet, token, symbol, name, proof, statement_nonce, signature, confirmed, from_season,
     entered_at, confirmed_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)`,
    [
      e.id,
      e.board,
      e.agent.agent_id,
      e.entrant.kind,
      e.wallet.toLowerCase(),
      e.entrant.kind === "account" ? e.entrant.account : null,
      e.entrant.kind === "hosted" ? e.entrant.hosted_id : null,
      entrantText(e.entrant),
      e.agent.owner.toLowerCase(),
      e.agent.agentWallet.toLowerCase(),
      e.agent.token.toLowerCase(),
      e.agent.symbol,
      e.agent.name,
      e.proof,
      e.nonce,
      e.signature,
      e.confirmed,
      e.fromSeason,
      e.at,
      e.confirmed ? e.at : null,
    ],
  );
}

/** POST league/enter: plays from the next season. */
export async function leagueEnter(d: LeagueDeps, q: EnterParameters, who: LeagueWho) {
  const wallet = who.wallet;
  if ((q.signature === undefined) !== (q.nonce === undefined))
    throw new Refusal("BAD_REQUEST", "signature and nonce come together (the owner's signed statement)");
  const b = boardOf(q);
  const agent = await partnerAgent(d, q.agent_id);
  const entrant = await entrantOf(d, wallet, b, q.hosted_id);
  const entrantKey = entrantText(entrant);
  await assertClean(d, [
    [wallet, "wallet"],
    [agent.owner, "owner"],
    [agent.agentWallet, "agent_wallet"],
  ]);
  await assertFree(d, b, agent.agent_id, entrantKey);
  const proof: "owner_key" | "statement" = q.signature ? "statement" : "owner_key";
  if (proof === "owner_key" && wallet.toLowerCase() !== agent.owner.toLowerCase())
    throw new Refusal(
      "NOT_OWNER",
      `the signed-in wallet is not agent ${agent.agent_id}'s owner and no owner statement came`,
      { owner: agent.owner },
    );
  const cal = calendarAt(nowS(d));
  const id = `le_${randomBytes(8).toString("hex")}`;
  // The prize board's confirmation is the owner's signed statement (with its eligibility line); practice has none.
  const confirmed = b === "prize" ? proof === "statement" : null;
  try {
    // The statement is used and the entry written together: an entry that loses a race leaves the statement good.
    await d.db.tx(async (tx) => {
      if (q.signature && q.nonce)
        await useStatement(d, tx, {
          nonce: q.nonce,
          signature: q.signature as Hex,
          wallet,
          agent,
          board: b,
          entrant: entrantKey,
        });
      await insertEntry(tx, {
        id,
        board: b,
        agent,
        entrant,
        wallet,
        proof,
        nonce: q.nonce ?? null,
        signature: q.signature ?? null,
        confirmed,
        fromSeason: cal.next.number,
        at: nowS(d),
      });
    });
  } catch (err) {
    // Two enters racing: the unique indexes decide, with the same codes.
    if (/league_entries_entrant/.test(String((err as Error).message)))
      throw new Refusal("ALREADY_ENTERED", `${entrantKey} already plays the ${b} board; leave first`);
    if (/league_entries_agent/.test(String((err as Error).message)))
      throw new Refusal("AGENT_ENTERED", `partner agent ${agent.agent_id} is already on the ${b} board`);
    throw err;
  }
  const entry = await entryById(d, id);
  const unconfirmed =
    "; it wins nothing until the owner confirms eligibility with a signed prize statement " +
    "(POST /api/v1/league/confirm)";
  const note = `plays from ${cal.next.name} (${cal.next.starts_at})${confirmed === false ? unconfirmed : ""}`;
  return { ...entry, note };
}

/** POST league/confirm: the owner's signed prize statement for the entry of the signed-in trading wallet. */
export async function leagueConfirm(d: LeagueDeps, q: ConfirmParameters, who: LeagueWho) {
  const wallet = who.wallet;
  const [r] = await d.db.query<EntryRow>(
    "SELECT * FROM app.league_entries WHERE board = 'prize' AND agent_id = $1 AND left_at IS NULL",
    [q.agent_id],
  );
  if (!r) throw new Refusal("NOT_ENTERED", `partner agent ${q.agent_id} has no prize entry`);
  if (r.wallet !== wallet.toLowerCase()) throw new Refusal("FORBIDDEN", "only the entry's trading wallet confirms it");
  const agent = await partnerAgent(d, q.agent_id);
  await assertClean(d, [
    [wallet, "wallet"],
    [agent.owner, "owner"],
    [agent.agentWallet, "agent_wallet"],
  ]);
  // The owner on record signs; an owner changed in the vault since entry is not the one who entered.
  if (agent.owner.toLowerCase() !== r.owner)
    throw new Refusal(
      "NOT_OWNER",
      `the vault's owner of agent ${q.agent_id} is no longer the entry's owner ${getAddress(r.owner)}`,
      { owner: getAddress(r.owner) },
    );
  // The confirmation's time is kept: a season decided before it stays as decided.
  const done = await d.db.tx(async (tx) => {
    await useStatement(d, tx, {
      nonce: q.nonce,
      signature: q.signature as Hex,
      wallet,
      agent,
      board: "prize",
      entrant: r.entrant,
    });
    return tx.query(
      "UPDATE app.league_entries SET confirmed = true, confirmed_at = COALESCE(confirmed_at, $4), " +
        "statement_nonce = $2, signature = $3 WHERE entry_id = $1 AND left_at IS NULL RETURNING entry_id",
      [r.entry_id, q.nonce, q.signature, nowS(d)],
    );
  });
  if (!done.length) throw new Refusal("NOT_ENTERED", `the entry of partner agent ${q.agent_id} has left`);
  return entryById(d, r.entry_id);
}

/** POST league/leave: out at once; may enter again for the next season. */
export async function leagueLeave(d: LeagueDeps, q: LeaveParameters, who: LeagueWho) {
  const wallet = who.wallet.toLowerCase();
  if (q.hosted_id && q.board === "prize")
    throw new Refusal("BAD_REQUEST", "a hosted agent plays the practice board only");
  const b = boardOf(q);
  let rows: EntryRow[];
  if (q.agent_id !== undefined) {
    rows = await d.db.query<EntryRow>(
      "SELECT * FROM app.league_entries WHERE board = $1 AND agent_id = $2 AND left_at IS NULL",
      [b, q.agent_id],
    );
    if (rows[0] && rows[0].wallet !== wallet && rows[0].owner !== wallet)
      throw new Refusal("FORBIDDEN", "only the entering wallet or the agent's owner takes this entry out");
  } else {
    const entrant =
      b === "prize"
        ? entrantText({ kind: "wallet", wallet })
        : q.hosted_id
          ? entrantText({ kind: "hosted", hosted_id: q.hosted_id })
          : entrantText({ kind: "account", account: await accountIdOf(d, getAddress(wallet)) });
    rows = await d.db.query<EntryRow>(
      "SELECT * FROM app.league_entries WHERE board = $1 AND entrant = $2 AND left_at IS NULL",
      [b, entrant],
    );
    if (rows[0] && rows[0].wallet !== wallet) throw new Refusal("FORBIDDEN", "that entrant is not this wallet's");
  }
  const r = rows[0];
  if (!r) throw new Refusal("NOT_ENTERED", `nothing of this wallet plays the ${b} board`);
  await d.db.query("UPDATE app.league_entries SET left_at = $2 WHERE entry_id = $1 AND left_at IS NULL", [
    r.entry_id,
    nowS(d),
  ]);
  return { ...(await entryById(d, r.entry_id)), left: true as const };
}

/** A stopped or deleted hosted agent leaves the league at once. */
export async function leaveHosted(d: Pick<LeagueDeps, "db" | "clock">, hostedId: string): Promise<void> {
  await d.db.query("UPDATE app.league_entries SET left_at = $2 WHERE hosted_id = $1 AND left_at IS NULL", [
    hostedId,
    Math.floor(d.clock() / 1000),
  ]);
}

/** GET league/me: the wallet's entries, newest first; an exchange account's practice entry with its book now. */
export async function leagueMe(d: LeagueDeps, who: LeagueWho) {
  const wallet = who.wallet;
  const rows = await d.db.query<EntryRow>("SELECT * FROM app.league_entries WHERE wallet = $1 ORDER BY seq DESC", [
    wallet.toLowerCase(),
  ]);
  const entries = [];
  for (const r of rows)
    entries.push(
      r.kind === "account" && r.board === "practice"
        ? { ...entryView(d, r), practice: await accountBookOf(d, r) }
        : entryView(d, r),
    );
  // Lowercase, as every other answer names the key's wallet (me/portfolio, me/trades, me/sessions, auth/verify).
  return { wallet: wallet.toLowerCase(), entries };
}

async function entryById(d: LeagueDeps, id: string) {
  const [r] = await d.db.query<EntryRow>("SELECT * FROM app.league_entries WHERE entry_id = $1", [id]);
  return entryView(d, r!);
}

/** SPEC's entry: `playing` once its first season began and while it has not left. */
function entryView(d: Pick<LeagueDeps, "clock">, r: EntryRow) {
  const cal = calendarAt(Math.floor(d.clock() / 1000));
  const current = cal.current.status === "open" ? cal.current.number : 0;
  return {
    entry_id: r.entry_id,
    board: r.board,
    agent_id: Number(r.agent_id),
    kind: r.kind,
    wallet: getAddress(r.wallet),
    hosted_id: r.hosted_id,
    status: r.left_at === null ? ("active" as const) : ("left" as const),
    from_season: r.from_season,
    playing: r.left_at === null && current >= r.from_season,
    season: current || null,
    token: getAddress(r.token),
    symbol: r.symbol,
    name: r.name,
    owner: getAddress(r.owner),
    agent_wallet: getAddress(r.agent_wallet),
    proof: r.proof,
    entered_at: Number(r.entered_at),
    left_at: r.left_at === null ? null : Number(r.left_at),
    confirmed: r.board === "practice" ? null : r.confirmed === true,
    confirmed_at: r.confirmed_at === null ? null : Number(r.confirmed_at),
  };
}
