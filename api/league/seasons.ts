import { calendarAt, season as seasonAt } from "../../lib/league/calendar.js";
import { Refusal } from "../errors/index.js";
import { stakeWithdrawal, type PayoutBook } from "./reserve.js";
import { splitIds, tradeBooks } from "./prize.js";
import { boardOf, decided, entrantsOf, liveBody, nowS, standings, type ReadDeps, type Reading } from "./standings.js";

/** A season's payouts as stored, by place. */
async function payoutsOf(d: ReadDeps, n: number) {
  return d.db.query<{
    place: number;
    entry_id: string;
    agent_id: string;
    recipient: string;
    amount: string;
    status: string;
    tx_hash: string | null;
    block: string | null;
    token: string;
    why: string | null;
  }>(
    "SELECT place, entry_id, agent_id::text AS agent_id, recipient, amount, status, tx_hash, block::text " +
      "AS block, token, why FROM app.league_payouts WHERE season = $1 ORDER BY place",
    [n],
  );
}

/**
 * The season's places not paid yet (beyond SPEC: `owed` on the season): planned or signed, not
 * mined and not held, each with why it waits. They are paid in order, oldest season first, then place.
 */
function owedOf(pays: Awaited<ReturnType<typeof payoutsOf>>) {
  return pays
    .filter((p) => p.status === "planned" || p.status === "sent")
    .map((p) => ({
      place: p.place,
      entry_id: p.entry_id,
      agent_id: Number(p.agent_id),
      recipient: p.recipient,
      amount: p.amount,
      why:
        p.status === "sent" ? (p.why ?? "signed and sent; waiting for it to mine") : (p.why ?? "owed: paid in order"),
    }));
}

/** The placed rows of a prize board with what each place was (or is to be) paid. */
async function winnersOf(d: ReadDeps, n: number, rows: Record<string, unknown>[]) {
  const pays = await payoutsOf(d, n);
  return rows
    .filter((r) => r.place !== null && r.place !== undefined)
    .map((r) => {
      const p = pays.find((x) => x.place === r.place);
      return {
        place: r.place,
        entry_id: r.entry_id,
        agent_id: r.agent_id,
        symbol: r.symbol,
        label: r.label,
        score: r.score,
        profit_usd: r.profit_usd,
        amount: p?.amount ?? r.prize_atoms ?? null,
        status: shownStatus(p?.status),
        tx_hash: p?.status === "mined" ? p.tx_hash : null,
      };
    });
}

/** A decided season's stored payout book and when it was settled, or null. */
async function payoutBookRow(d: ReadDeps, n: number): Promise<{ book: PayoutBook; settled_at: number | null } | null> {
  const [r] = await d.db.query<{ ledger: string; settled_at: string | null }>(
    "SELECT ledger, settled_at::text AS settled_at FROM app.league_ledgers WHERE season = $1",
    [n],
  );
  return r
    ? { book: JSON.parse(r.ledger) as PayoutBook, settled_at: r.settled_at === null ? null : Number(r.settled_at) }
    : null;
}

/** A season on the calendar (1 to the next), from a path segment: 404 NO_SEASON otherwise. */
function seasonNumber(d: ReadDeps, raw: string): number {
  const n = /^[1-9][0-9]{0,5}$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n) || n > calendarAt(nowS(d)).next.number)
    throw new Refusal("NO_SEASON", `no season ${raw}`);
  return n;
}

/** GET league/seasons/<n>: the prize standings with the payout book (`ledger`), payouts and winners. */
export async function seasonDetail(r: Reading, raw: string) {
  const n = seasonNumber(r, raw);
  const st = await standings(r, { season: n, board: "prize" });
  const l = await payoutBookRow(r, n);
  const body = (await boardOf(r, n, "prize")).body;
  const ledger = l?.book ?? body.ledger ?? null;
  const pays = await payoutsOf(r, n);
  return {
    ...st,
    ledger,
    withdrawal: ledger ? stakeWithdrawal(ledger) : null,
    payouts: pays.map((p) => ({
      place: p.place,
      entry_id: p.entry_id,
      agent_id: Number(p.agent_id),
      recipient: p.recipient,
      amount: p.amount,
      status: shownStatus(p.status),
      tx_hash: p.status === "held" ? null : p.tx_hash,
      // Beyond SPEC: why a place is held (its sanctions read) or still owed; null once mined.
      why: p.status === "mined" ? null : p.status === "sent" ? "signed and sent; waiting for it to mine" : p.why,
    })),
    owed: owedOf(pays),
    winners: await winnersOf(r, n, st.rows),
    settled_at: l?.settled_at ?? null,
  };
}

/** One season's line of GET league/seasons. */
export async function seasonSummary(d: ReadDeps, n: number) {
  const s = seasonAt(n, nowS(d));
  const [entrants, practice, done] = await Promise.all([
    entrantsOf(d, "prize", n),
    entrantsOf(d, "practice", n),
    decided(d, n, "prize"),
  ]);
  const outcome = done?.outcome ?? null;
  return {
    number: n,
    name: s.name,
    status: s.status,
    missed: s.status === "closed" && entrants + practice === 0,
    starts_at: s.starts_at,
    ends_at: s.ends_at,
    entrants,
    practice_entrants: practice,
    decided: !!done,
    winners: done ? await winnersOf(d, n, done.rows) : [],
    owed: done ? owedOf(await payoutsOf(d, n)) : [],
    pays: outcome ? outcome.pays : null,
    why: outcome
      ? outcome.why
      : s.status === "closed"
        ? entrants + practice === 0
          ? "nobody played"
          : "not decided yet"
        : s.status === "open"
          ? "playing"
          : "not started",
  };
}

/** GET league/seasons: every season on the calendar, the next first. */
export async function seasons(d: ReadDeps) {
  const cal = calendarAt(nowS(d));
  const out = [];
  for (let n = cal.next.number; n >= 1; n--) out.push(await seasonSummary(d, n));
  return { seasons: out, now: nowS(d) };
}

/**
 * A season's published inputs (beyond SPEC): the entries with their owners' signed statements,
 * and each entry's relayed trades with the plan `league:verify` recomputes from the receipt.
 */
export async function books(r: Reading, raw: string) {
  const n = seasonNumber(r, raw);
  const [row] = await r.db.query<{ books: string | null; block: string; valued_at: string }>(
    "SELECT books, block::text AS block, valued_at::text AS valued_at FROM app.league_results WHERE " +
      "season = $1 AND board = 'prize'",
    [n],
  );
  if (row)
    return {
      season: n,
      decided: true,
      block: Number(row.block),
      valued_at: Number(row.valued_at),
      ...(JSON.parse(row.books ?? "{}") as object),
    };
  const s = seasonAt(n, nowS(r));
  if (s.status === "upcoming")
    return {
      season: n,
      decided: false,
      block: null,
      valued_at: null,
      from_block: r.config.startBlock,
      entries: [],
      books: {},
    };
  const body = await liveBody(r, s, "prize");
  // The worker keeps each entry's trade ids; the trades themselves are read here, for this request only.
  const { trade_ids, ...published } = (body.published ?? {}) as { trade_ids?: Record<string, string | string[]> };
  return {
    season: n,
    decided: false,
    block: body.block ?? null,
    valued_at: body.valued_at ?? null,
    from_block: r.config.startBlock,
    ...published,
    ...(trade_ids ? { books: await tradeBooks(r.db, splitIds(trade_ids), s) } : {}),
  };
}

/**
 * A payout's status as answered: `planned` until mined (signed and sent too), `mined`, or `held` (settle.ts
 * PayoutStatus: never sent, its recipient is listed).
 */
function shownStatus(s: string | undefined): "planned" | "mined" | "held" {
  return s === "mined" || s === "held" ? s : "planned";
}
