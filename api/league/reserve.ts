import type { Config } from "../../lib/config.js";
import { sharesOf } from "../../lib/league/rules.js";
import { markAt, type MarkReader } from "../../lib/league/valuation.js";
import type { Season } from "../../lib/league/calendar.js";
import type { Db } from "../ports/store/db.js";
import { valuationTokens } from "./prize.js";
import type { TransferLog } from "./transfers.js";
import { lc } from "../../lib/address.js";
import type { Common } from "../ports/common.js";

/**
 * One season's payout book, served as `ledger` (SPEC GET league/seasons/<n>, docs/league.md "The payout book").
 * The reserve wallet holds the partner token; what reaches it in a season (the reserve agent's
 * stake gains) is `gain`. Half is added to the prize reserve, the rest stays staked (with what
 * would pass the ceiling). A season's budget is the reserve up to the cap (prize_cap_usd in the
 * partner token at its mark), paid only when the season pays; what is not paid stays.
 */
export type PayoutBook = {
  reserve_before: string;
  gain: string;
  half_gain: string;
  added: string;
  kept_staked: string;
  cap: string;
  ceiling: string;
  reserve: string;
  budget: string;
  shares: string[];
  paid: string[];
  paid_total: string;
  reserve_after: string;
  cap_usd: number;
  orbio_usd: number | null;
  mark_ts: number;
  mark_source: "marks" | "manual";
  status: "settled" | "provisional" | "incomplete";
  why: string | null;
  /**
   * Beyond SPEC: the transfers that brought the stake's gains to the reserve wallet in the season
   * (the stake withdrawals), whose hashes the season's `withdrawal` and the treasury carry.
   */
  gain_transfers?: GainTransfer[];
};

/** One arrival of the stake's gains in the reserve wallet: its transaction, block, time and amount. */
export type GainTransfer = { tx_hash: string; block: number; ts: number; amount: string };

export type ReserveDeps = Pick<Common, "config" | "chain"> & { marks: MarkReader; transfers: TransferLog };

/** The partner token (payouts and the reserve are in it). */
export const partnerToken = (config: Config) => Object.values(config.tokens).find((t) => t.kind === "partner") ?? null;

/**
 * Partner-token atoms that reached the reserve wallet in [from, to) (its Transfer logs' own values, by block time),
 * and the transfers that brought them.
 */
export async function reserveGain(
  d: ReserveDeps,
  from: number,
  to: number,
  toBlock: bigint,
): Promise<{ gain: bigint; transfers: GainTransfer[] }> {
  const wallet = d.config.league.reserveWallet;
  const token = partnerToken(d.config);
  if (!wallet || !token) return { gain: 0n, transfers: [] };
  // The league's transfer log (read from its last block) carries every link token, the partner token among them.
  const ins = (await d.transfers.read([wallet], toBlock)).filter(
    (t) => t.token === lc(token.address) && t.to === lc(wallet) && t.from !== lc(wallet),
  );
  let gain = 0n;
  const transfers: GainTransfer[] = [];
  for (const t of ins) {
    const ts = await d.transfers.blockTime(t.block);
    if (ts < from || ts >= to) continue;
    gain += t.amount;
    transfers.push({ tx_hash: t.tx_hash, block: t.block, ts, amount: t.amount.toString() });
  }
  return { gain, transfers };
}

/**
 * The payout book of season `s` at `valuedAt`, from the previous season's reserve_after and whether the season
 * pays.
 */
export async function payoutBookOf(
  d: ReserveDeps,
  s: Season,
  o: { before: bigint; pays: boolean; valuedAt: number; block: bigint; paid?: bigint[]; settled: boolean },
): Promise<PayoutBook> {
  const token = partnerToken(d.config);
  const t = token ? valuationTokens(d.config).find((v) => v.address === lc(token.address)) : undefined;
  const mark = t ? await markAt(d.marks, t, { time: o.valuedAt }) : null;
  const { gain, transfers } = await reserveGain(d, s.starts, Math.min(s.ends, o.valuedAt + 1), o.block);
  const half = gain / 2n;
  const capUsd = d.config.league.prizeCapUsd;
  const cap =
    mark && token ? (BigInt(Math.floor((capUsd / mark.usd) * 1e6)) * 10n ** BigInt(token.decimals)) / 1_000_000n : 0n;
  const ceiling = cap * BigInt(d.config.league.ceilingSeasons);
  const reserve = o.before + half > ceiling && mark ? (ceiling > o.before ? ceiling : o.before) : o.before + half;
  const added = reserve - o.before;
  const budget = o.pays && mark ? (reserve < cap ? reserve : cap) : 0n;
  const shares = sharesOf(budget);
  const paid = o.paid ?? [0n, 0n, 0n];
  const paidTotal = paid.reduce((x, y) => x + y, 0n);
  const why = !d.config.league.reserveWallet
    ? "no reserve wallet is configured"
    : !mark
      ? "the partner token has no mark at the season's end"
      : null;
  return {
    reserve_before: o.before.toString(),
    gain: gain.toString(),
    half_gain: half.toString(),
    added: added.toString(),
    kept_staked: (gain - added).toString(),
    cap: cap.toString(),
    ceiling: ceiling.toString(),
    reserve: reserve.toString(),
    budget: budget.toString(),
    shares,
    paid: paid.map(String),
    paid_total: paidTotal.toString(),
    reserve_after: (reserve - paidTotal).toString(),
    cap_usd: capUsd,
    orbio_usd: mark?.usd ?? null,
    mark_ts: o.valuedAt,
    mark_source: "marks",
    status: why ? "incomplete" : o.settled ? "settled" : "provisional",
    why,
    gain_transfers: transfers,
  };
}

/**
 * A decided season's reserve after its places: each planned place leaves the reserve's book at the
 * decision (paid, still owed, or held aside), so the next season is decided without waiting for the
 * transfers. A ledger stored before that rule kept its reserve until paid: the lower of the two.
 */
export function reserveAfter(book: Pick<PayoutBook, "reserve" | "reserve_after">, planned: { amount: string }[]) {
  const after = BigInt(book.reserve) - planned.reduce((a, p) => a + BigInt(p.amount), 0n);
  const stored = BigInt(book.reserve_after);
  return stored < after ? stored : after;
}

/**
 * A season's stake withdrawal (SPEC seasons/<n> `withdrawal`, treasury `stake_withdrawal`): the
 * reserve wallet receives the stake's gains itself, so the withdrawal is the transfer that brought
 * them (the last of several; `tx_hashes` lists each). None arrived, or a ledger stored before the
 * transfers were kept: tx_hash null, and the note says which.
 */
export function stakeWithdrawal(l: PayoutBook) {
  const t = l.gain_transfers;
  const last = t?.length ? t[t.length - 1]! : null;
  return {
    tx_hash: last?.tx_hash ?? null,
    tx_hashes: t?.map((x) => x.tx_hash) ?? [],
    amount: l.added,
    ts: last?.ts ?? null,
    note: !t
      ? "the reserve wallet receives the stake's gains itself; this ledger predates keeping their transfers"
      : !last
        ? "no stake gains reached the reserve wallet this season; no withdrawal transaction"
        : `the stake's gains reached the reserve wallet in ${t.length} transfer(s); half of them is added to ` +
          "the prize reserve",
  };
}

/** The reserve after the last payout book before season `n` (0 before the first). */
export async function reserveBefore(db: Db, n: number): Promise<bigint> {
  const [r] = await db.query<{ season: number; ledger: string }>(
    "SELECT season, ledger FROM app.league_ledgers WHERE season < $1 ORDER BY season DESC LIMIT 1",
    [n],
  );
  if (!r) return 0n;
  const planned = await db.query<{ amount: string }>("SELECT amount FROM app.league_payouts WHERE season = $1", [
    r.season,
  ]);
  return reserveAfter(JSON.parse(r.ledger) as PayoutBook, planned);
}
