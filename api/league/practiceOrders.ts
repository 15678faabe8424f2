import { formatUnits, getAddress, parseUnits, type Address } from "viem";
import { z } from "zod";
import { lc } from "../../lib/address.js";
import type { Config, TokenEntry } from "../../lib/config.js";
import { feeFor, majorSymbols } from "../../lib/fees.js";
import { calendarAt, season as seasonOf, type Season } from "../../lib/league/calendar.js";
import { markMemo, type MarkMemo, type MarkReader } from "../../lib/league/valuation.js";
import { fillAtQuote, paperPool } from "../../lib/paperFill.js";
import { Refusal } from "../errors/index.js";
import type { Caller } from "../http/caller.js";
import type { Common } from "../ports/common.js";
import type { Db } from "../ports/store/db.js";
import { accountBook, accountFills, bookValue, PRACTICE_BOOK_USD, type PracticeFill } from "./practice.js";
import { valuationTokens } from "./prize.js";

/**
 * An exchange account's paper orders on the practice board (beyond SPEC's route table: SPEC names the
 * board, "an API exchange account or a hosted paper agent", and its refusals, not the route).
 */
export type PracticeOrderDeps = Pick<Common, "config" | "chain" | "clock"> & {
  db: Db;
  marks: MarkReader;
  /** The wallet's 30-day volume through the service (trading's volume tier): the major fee rate a live trade pays. */
  volume30d: (wallet: Address) => Promise<number>;
};

const atoms = z.string().regex(/^\d{1,78}$/, "must be a decimal string of atoms");
export const practiceOrderBody = z
  .object({
    token_in: z
      .string()
      .min(1)
      .max(64)
      .describe("USDG, or ETH, the BTC asset or the partner token (symbol or address)"),
    token_out: z.string().min(1).max(64),
    amount_in: atoms.optional().describe("atoms of token_in"),
    notional_usd: z
      .number()
      .positive()
      .max(1_000_000_000)
      .optional()
      .describe("dollars of token_in at its independent mark"),
  })
  .strict();
export type PracticeOrderParameters = z.infer<typeof practiceOrderBody>;

const nowS = (d: Pick<Common, "clock">) => Math.floor(d.clock() / 1000);

/** The practice board's assets against USDG: ETH (native), the BTC asset (the one `crypto`) and the partner token. */
const practiceAsset = (t: TokenEntry) => t.kind === "native" || t.kind === "crypto" || t.kind === "partner";
const divisionText = (config: Config) =>
  `${Object.values(config.tokens)
    .filter(practiceAsset)
    .map((t) => t.symbol)
    .join(", ")} against USDG`;

/**
 * A side of the order as a core token (symbol or address): NOT_FOUND for a symbol the service does not
 * know, LEAGUE_DIVISION for an address that is not a core token (it trades outside the practice board).
 */
function tokenOf(config: Config, param: string, field: string): TokenEntry {
  const isAddress = /^0x[0-9a-fA-F]{40}$/.test(param);
  const t = Object.values(config.tokens).find((x) =>
    isAddress ? lc(x.address) === lc(param) : x.symbol.toUpperCase() === param.toUpperCase(),
  );
  if (t) return t;
  if (isAddress)
    throw new Refusal("LEAGUE_DIVISION", `${field} ${param}: the practice board trades only ${divisionText(config)}`);
  if (!/^[A-Za-z0-9.$_-]{1,32}$/.test(param))
    throw new Refusal("BAD_REQUEST", `${field}: a token is a symbol or a 0x address`);
  throw new Refusal("NOT_FOUND", `${field}: no token ${param}; the practice board trades ${divisionText(config)}`);
}

/**
 * Both sides (and exactly one amount), in the practice board's division (LEAGUE_DIVISION otherwise): one
 * practice asset against USDG.
 */
function sidesOf(config: Config, q: PracticeOrderParameters): { tin: TokenEntry; tout: TokenEntry } {
  if ((q.amount_in === undefined) === (q.notional_usd === undefined))
    throw new Refusal("BAD_REQUEST", "send exactly one of notional_usd or amount_in");
  const tin = tokenOf(config, q.token_in, "token_in");
  const tout = tokenOf(config, q.token_out, "token_out");
  if (lc(tin.address) === lc(tout.address))
    throw new Refusal("SAME_TOKEN", "token_in and token_out are the same token");
  const usdg = (t: TokenEntry) => t.symbol === "USDG";
  if (!((usdg(tin) && practiceAsset(tout)) || (usdg(tout) && practiceAsset(tin))))
    throw new Refusal(
      "LEAGUE_DIVISION",
      `${tin.symbol}/${tout.symbol}: the practice board trades only ${divisionText(config)}`,
    );
  return { tin, tout };
}

type AccountEntry = { entry_id: string; from_season: number };

/** The signed-in wallet's account entry on the practice board (NOT_ENTERED without one). */
async function accountEntry(db: Db, wallet: Address): Promise<AccountEntry> {
  const [e] = await db.query<AccountEntry>(
    "SELECT entry_id, from_season FROM app.league_entries WHERE board = 'practice' AND kind = 'account' AND " +
      "wallet = $1 AND left_at IS NULL",
    [lc(wallet)],
  );
  if (!e)
    throw new Refusal(
      "NOT_ENTERED",
      "this wallet's exchange account does not play the practice board: POST /api/v1/league/enter with board " +
        "practice first",
    );
  return e;
}

/**
 * The season the entry plays now: SEASON_CLOSED between seasons (before the first) or before the
 * entry's first season (an entry plays from the season after it entered), with why and when it opens.
 */
function playingSeason(d: Pick<Common, "clock">, e: AccountEntry): Season {
  const cal = calendarAt(nowS(d));
  if (cal.current.status === "open" && cal.current.number >= e.from_season) return cal.current;
  const first = seasonOf(Math.max(e.from_season, cal.next.number), nowS(d));
  const why = cal.current.status === "open" ? "entry_not_yet_playing" : "league_not_started";
  throw new Refusal(
    "SEASON_CLOSED",
    `no practice season is open for this account: it plays from ${first.name}, starting ${first.starts_at}`,
    { why, season: first.number, starts_at: first.starts_at },
  );
}

/** A side's independent mark now (NO_MARK without one: the order's dollars and the book's value need it). */
async function markNow(marks: MarkMemo, t: TokenEntry, time: number): Promise<number> {
  const m = await marks.at(t.address, { time });
  if (!m) throw new Refusal("NO_MARK", `${t.symbol} has no independent mark now; retry once its feed or pool moves`);
  return m.usd;
}

/** The order's input in atoms: amount_in, or notional_usd at the input's mark. */
function amountOf(q: PracticeOrderParameters, tin: TokenEntry, markIn: number): bigint {
  if (q.amount_in !== undefined) return BigInt(q.amount_in);
  return parseUnits((q.notional_usd! / markIn).toFixed(tin.decimals), tin.decimals);
}

/** BAD_REQUEST when the season's book does not hold the order's input (with what it holds). */
function assertHeld(book: Record<string, string>, tin: TokenEntry, amountIn: bigint) {
  const held = BigInt(book[lc(tin.address)] ?? "0");
  if (amountIn > held)
    throw new Refusal(
      "BAD_REQUEST",
      `the practice book holds ${formatUnits(held, tin.decimals)} ${tin.symbol}, less than the order's ` +
        `${formatUnits(amountIn, tin.decimals)}`,
      { held: held.toString() },
    );
}

/**
 * Paper orders one account entry may fill in a season: about one every ten minutes around the clock for
 * the two weeks. Each order reads and replays the season's fills (its book), so an uncapped account would
 * make every order of its own slower and the table grow without bound.
 */
export const PRACTICE_ORDERS_PER_SEASON = 2_000;

/**
 * RATE_LIMITED (429, the catalogue's code for "too many requests"; this route is beyond SPEC's table) once the
 * entry holds PRACTICE_ORDERS_PER_SEASON fills this season, retrying when the next season opens.
 */
export function assertOrderRoom(fills: number, s: Season, now: number) {
  if (fills < PRACTICE_ORDERS_PER_SEASON) return;
  throw new Refusal(
    "RATE_LIMITED",
    `this account filled ${fills} paper orders in ${s.name}, the most a season takes ` +
      `(${PRACTICE_ORDERS_PER_SEASON}); its book plays on until the season ends`,
    { limit: PRACTICE_ORDERS_PER_SEASON, season: s.number },
    { retryAfterS: Math.max(1, s.ends - now) },
  );
}

/**
 * POST league/practice/order: one paper order of the signed-in wallet's exchange account on the
 * practice board, filled at the V4Quoter's output at the latest block after the fee a live trade of
 * the wallet would pay (lib/paperFill, the hosted paper agents' fill). The book is the season's
 * 10,000 USDG moved by the account's fills; the answer shows the fill and the book after it.
 */
export async function practiceOrder(d: PracticeOrderDeps, q: PracticeOrderParameters, who: Caller) {
  const { tin, tout } = sidesOf(d.config, q);
  const entry = await accountEntry(d.db, who.wallet);
  const s = playingSeason(d, entry);
  const now = nowS(d);
  const marks = await marksNow(d, now);
  const markIn = await markNow(marks, tin, now);
  await markNow(marks, tout, now);
  const amountIn = amountOf(q, tin, markIn);
  const amountUsd = Number(formatUnits(amountIn, tin.decimals)) * markIn;
  if (amountUsd < 1)
    throw new Refusal("MIN_NOTIONAL", `the order is worth $${amountUsd.toFixed(4)}: a practice order is at least $1`);
  const held = await accountFills(d.db, entry.entry_id, s.number);
  assertOrderRoom(held.length, s, now);
  const book = accountBook(d.config, held);
  assertHeld(book, tin, amountIn);
  const pool = paperPool(d.config, tin, tout);
  if (!pool) throw new Refusal("NO_ROUTE", `no hookless pool for ${tin.symbol}/${tout.symbol}`);
  const majors = majorSymbols(d.config.tokens);
  const feeClass: "major" | "other" = majors.includes(tin.symbol) && majors.includes(tout.symbol) ? "major" : "other";
  const volume = feeClass === "major" ? await d.volume30d(who.wallet) : 0;
  const fee = feeFor({ feeClass, volume30dUsd: volume, shield: false });
  const { block, filled } = await quoted(d, { pool, tin, tout, amountIn, feeBps: fee.bps }, book);
  const fill = {
    token_in: lc(tin.address),
    token_out: lc(tout.address),
    amount_in: amountIn.toString(),
    amount_out: filled.amountOut.toString(),
    fee: filled.feeAtoms.toString(),
    fee_bps: fee.bps,
    fee_class: feeClass,
    fee_tier: fee.tier,
    amount_usd: amountUsd,
    block: block.toString(),
  };
  const fills = await commitFill(d, entry, s, fill, (after) => bookValue(marks, after, now));
  return answerOf(d.config, entry, s, fills, await bookValue(marks, accountBook(d.config, fills), now));
}

/**
 * Every valuation token's independent mark at `time`, read once (the order, its fill's value and the
 * answer then read the memo): LEAGUE_UNAVAILABLE when the marks cannot be read.
 */
async function marksNow(d: PracticeOrderDeps, time: number): Promise<MarkMemo> {
  const tokens = valuationTokens(d.config);
  const marks = markMemo(d.marks, tokens);
  try {
    await Promise.all(tokens.map((t) => marks.at(t.address, { time })));
  } catch (err) {
    throw new Refusal(
      "LEAGUE_UNAVAILABLE",
      "the league's marks could not be read; try again shortly",
      {},
      {
        cause: err,
        retryAfterS: 5,
      },
    );
  }
  return marks;
}

/**
 * The paper fill at the latest block (on a copy of the book: the stored fills are the book): RPC_UNAVAILABLE
 * when the chain gives no block, VENUE_FAILED when the quoter does not answer for the order.
 */
async function quoted(
  d: PracticeOrderDeps,
  o: Omit<Parameters<typeof fillAtQuote>[2], "block">,
  book: Record<string, string>,
) {
  let block: bigint;
  try {
    block = await d.chain.getBlockNumber();
  } catch (err) {
    throw new Refusal("RPC_UNAVAILABLE", "the chain RPC did not answer", {}, { cause: err, retryAfterS: 2 });
  }
  try {
    return { block, filled: await fillAtQuote(d.chain, d.config, { ...o, block }, { ...book }) };
  } catch (err) {
    throw new Refusal("VENUE_FAILED", `the V4Quoter did not quote this order at block ${block}`, {}, { cause: err });
  }
}

type NewFill = Omit<PracticeFill, "id" | "value_usd" | "created_at">;

/**
 * Stores the fill under the entry's row lock, against the book as it is then: an order of the same
 * account that filled meanwhile is in it, and the input must still be held (BAD_REQUEST otherwise).
 * Answers the season's fills with this one last.
 */
async function commitFill(
  d: PracticeOrderDeps,
  entry: AccountEntry,
  s: Season,
  fill: NewFill,
  worth: (book: Record<string, string>) => Promise<number>,
): Promise<PracticeFill[]> {
  return d.db.tx(async (tx) => {
    const live = await tx.query("SELECT 1 FROM app.league_entries WHERE entry_id = $1 AND left_at IS NULL FOR UPDATE", [
      entry.entry_id,
    ]);
    if (!live.length) throw new Refusal("NOT_ENTERED", "this account left the practice board");
    // A fill belongs to the season it was gated in only while that season still plays.
    if (d.clock() >= s.ends * 1000)
      throw new Refusal("SEASON_CLOSED", `${s.name} ended while the order was filled; nothing was stored`, {
        why: "season_ended",
        season: s.number + 1,
        starts_at: seasonOf(s.number + 1, nowS(d)).starts_at,
      });
    const before = await accountFills(tx, entry.entry_id, s.number);
    // Under the lock: two orders that both passed the first check cannot both take the last place.
    assertOrderRoom(before.length, s, nowS(d));
    const tin = Object.values(d.config.tokens).find((t) => lc(t.address) === fill.token_in)!;
    assertHeld(accountBook(d.config, before), tin, BigInt(fill.amount_in));
    const row = { ...fill, id: "", value_usd: 0, created_at: String(d.clock()) };
    row.value_usd = await worth(accountBook(d.config, [...before, row]));
    const [stored] = await tx.query<{ id: string }>(
      `INSERT INTO app.league_practice_fills (entry_id, season, token_in, token_out, amount_in, amount_out, fee,
       fee_bps, fee_class, fee_tier, amount_usd, value_usd, block, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING id::text AS id`,
      [
        entry.entry_id,
        s.number,
        row.token_in,
        row.token_out,
        row.amount_in,
        row.amount_out,
        row.fee,
        row.fee_bps,
        row.fee_class,
        row.fee_tier,
        row.amount_usd,
        row.value_usd,
        row.block,
        row.created_at,
      ],
    );
    return [...before, { ...row, id: stored!.id }];
  });
}

/** The book as the answer shows it: atoms and whole units by symbol. */
export function bookView(config: Config, book: Record<string, string>) {
  const out: Record<string, { atoms: string; amount: string }> = {};
  for (const t of Object.values(config.tokens)) {
    const a = book[lc(t.address)];
    if (a !== undefined) out[t.symbol] = { atoms: a, amount: formatUnits(BigInt(a), t.decimals) };
  }
  return out;
}

/** The order's answer: the fill (symbols and the token addresses), the season's book after it, its value and trades. */
function answerOf(config: Config, entry: AccountEntry, s: Season, fills: PracticeFill[], equity: number) {
  const f = fills.at(-1)!;
  const symbolOf = (a: string) => Object.values(config.tokens).find((t) => lc(t.address) === a)!.symbol;
  const round6 = (x: number) => Math.round(x * 1e6) / 1e6;
  return {
    entry_id: entry.entry_id,
    season: s.number,
    fill: {
      id: Number(f.id),
      token_in: symbolOf(f.token_in),
      token_out: symbolOf(f.token_out),
      token_in_address: getAddress(f.token_in),
      token_out_address: getAddress(f.token_out),
      amount_in: f.amount_in,
      amount_out: f.amount_out,
      amount_usd: round6(f.amount_usd),
      fee: f.fee,
      fee_bps: f.fee_bps,
      fee_class: f.fee_class,
      fee_tier: f.fee_tier,
      block: Number(f.block),
      filled_at: Math.floor(Number(f.created_at) / 1000),
    },
    book: bookView(config, accountBook(config, fills)),
    equity: round6(equity),
    profit_usd: round6(equity - PRACTICE_BOOK_USD),
    trades: fills.length,
  };
}

/**
 * An exchange account entry's practice book as league/me shows it: the season playing now, its book
 * and trades; null while the entry does not play (between seasons, before its first, or left).
 */
export async function accountBookOf(
  d: Pick<PracticeOrderDeps, "db" | "config" | "clock">,
  e: { entry_id: string; from_season: number; left_at: string | null },
) {
  const cal = calendarAt(nowS(d));
  if (e.left_at !== null || cal.current.status !== "open" || cal.current.number < e.from_season) return null;
  const fills = await accountFills(d.db, e.entry_id, cal.current.number);
  return {
    season: cal.current.number,
    book: bookView(d.config, accountBook(d.config, fills)),
    trades: fills.length,
  };
}
