import { season as seasonAt, seasonNumberAt, type Season } from "../../lib/league/calendar.js";
import type { PlatformSigner } from "../ports/platformSigner.js";
import type { Lease } from "../ports/store/lease.js";
import { DROP_AFTER_S } from "../trading/index.js";
import { practiceBoard } from "./practice.js";
import { prizeBoard, publishedBooks, seasonEntries, type BoardDeps, type PrizeAnchor } from "./prize.js";
import { payoutBookOf, partnerToken, reserveAfter, reserveBefore } from "./reserve.js";
import { payOwed } from "./pay.js";
import { reviewHold } from "../../lib/league/review.js";
import { workerPass } from "../../lib/metrics.js";
import { FINALITY_BLOCKS } from "../../lib/finality.js";

export type SettleDeps = Omit<BoardDeps, "kept"> & {
  /** None: a decision reads every trade afresh, with its plan (a kept read leaves plans out; it publishes them). */
  kept?: never;
  /** The reserve wallet's signer (the platform signer port); null: payouts stay planned. */
  signer: PlatformSigner | null;
};

const nowS = (d: Pick<SettleDeps, "clock">) => Math.floor(d.clock() / 1000);

/**
 * Whether season `s` can be decided now: it ended, the indexer's finalized block is past its end (a decision is
 * never undone, so nothing it counts may still be reorganised away: FINALITY_BLOCKS, as payouts and the treasury's
 * weeks wait), and no trade of an entrant relayed before the end is still waiting for its receipt (it may count).
 */
async function ready(d: SettleDeps, s: Season): Promise<{ ok: true; block: bigint } | { ok: false; why: string }> {
  if (nowS(d) < s.ends) return { ok: false, why: "the season has not ended" };
  const head = await d.indexed.head();
  if (!head || head.timestamp < s.ends) return { ok: false, why: "the indexer has not reached the season's end" };
  const final = await d.indexed.finalized();
  if (!final || final.timestamp < s.ends)
    return { ok: false, why: `the season's end is not ${FINALITY_BLOCKS} blocks deep yet` };
  const wallets = (await seasonEntries(d.db, "prize", s)).map((e) => e.wallet);
  // A trade pending past DROP_AFTER_S is dropped (never mined): it cannot hold a season back.
  const [pending] = wallets.length
    ? await d.db.query(
        "SELECT 1 FROM app.trades WHERE wallet = ANY($1) AND status = 'pending' AND tx_hash IS NOT NULL AND " +
          "created_at < $2 AND created_at >= $3 LIMIT 1",
        [wallets, s.ends, nowS(d) - DROP_AFTER_S],
      )
    : [];
  if (pending) return { ok: false, why: "an entrant's trade relayed before the end has no receipt yet" };
  return { ok: true, block: BigInt(head.block) };
}

/**
 * Decides season `s` once: both boards' standings frozen at the season's last second, the reserve
 * ledger, and the paid places planned (one row each). Written in one transaction guarded by the
 * results' primary key: a second instance (or a second run) decides nothing. Decided only on
 * complete reads: a sanctions or vault read that failed at `block` decides nothing and answers why
 * (`incomplete`; the next pass reads again), so a flag from a failed read is never the final
 * record; a failed transfer read throws (the pass fails and is retried). Flags a review could
 * still clear wait up to REVIEW_WINDOW_S after the season's end (`reviews` says why), so a node
 * that cannot trace, flagging LINKS everywhere, does not decide a season that pays nothing.
 */
export async function decideSeason(
  d: SettleDeps,
  s: Season,
  block: bigint,
): Promise<{ decided: boolean; incomplete: string | null; reviews?: string }> {
  const valuedAt = s.ends - 1;
  const anchor: PrizeAnchor = { valuedAt, block, ended: true, decided: true, shares: null };
  const prize = await prizeBoard(d, s, anchor);
  if (prize.unreadable.length)
    return {
      decided: false,
      incomplete:
        `unreadable at block ${block}: ${prize.unreadable.slice(0, 3).join("; ")}` +
        `${prize.unreadable.length > 3 ? ` and ${prize.unreadable.length - 3} more` : ""}`,
    };
  // Flags a review could still clear hold the decision for a while (lib/league/review REVIEW_WINDOW_S).
  const hold = reviewHold(prize.rows, s.ends, nowS(d));
  if (hold) return { decided: false, incomplete: null, reviews: hold };
  const before = await reserveBefore(d.db, s.number);
  const book = await payoutBookOf(d, s, { before, pays: prize.outcome.pays, valuedAt, block, settled: false });
  const token = partnerToken(d.config);
  const payouts = prize.rows.filter(
    (r) =>
      r.place !== null &&
      BigInt(book.shares[r.place - 1]!) > 0n &&
      r.eligibility.rules.find((x) => x.rule === "PAYABLE")?.status === "pass",
  );
  for (const r of prize.rows) r.prize_atoms = r.place !== null ? book.shares[r.place - 1]! : null;
  book.reserve_after = reserveAfter(
    book,
    payouts.map((r) => ({ amount: book.shares[r.place! - 1]! })),
  ).toString();
  const practice = await practiceBoard(d, s, valuedAt);
  const at = nowS(d);
  // The frozen books carry every trade as published (league:verify recomputes a decided season from them alone).
  const books = { ...prize.published, books: publishedBooks(prize.ledgers) };
  const prizeAnswer = {
    rows: prize.rows,
    outcome: prize.outcome,
    places: prize.places,
    amounts_atoms: book.shares,
    valued_at: valuedAt,
    block: Number(block),
  };
  const decided = await d.db.tx(async (tx) => {
    const first = await tx.query(
      "INSERT INTO app.league_results (season, board, decided_at, valued_at, block, answer, books) VALUES " +
        "($1, 'prize', $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING RETURNING season",
      [s.number, at, valuedAt, Number(block), JSON.stringify(prizeAnswer), JSON.stringify(books)],
    );
    if (!first.length) return false;
    await tx.query(
      "INSERT INTO app.league_results (season, board, decided_at, valued_at, block, answer) VALUES ($1, " +
        "'practice', $2, $3, $4, $5)",
      [s.number, at, valuedAt, Number(block), JSON.stringify({ rows: practice, valued_at: valuedAt })],
    );
    await tx.query("INSERT INTO app.league_ledgers (season, ledger) VALUES ($1, $2)", [s.number, JSON.stringify(book)]);
    for (const r of payouts) {
      const recipient = prize.recipients.get(r.entry_id)!;
      await tx.query(
        "INSERT INTO app.league_payouts (season, place, entry_id, agent_id, recipient, token, amount, " +
          "status, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, 'planned', $8)",
        [
          s.number,
          r.place,
          r.entry_id,
          r.agent_id,
          recipient,
          token!.address.toLowerCase(),
          book.shares[r.place! - 1],
          at,
        ],
      );
    }
    return true;
  });
  return { decided, incomplete: null };
}

const NOT_HELD = "another instance settles";

/**
 * The league settler (started by createApp): under its lease (one instance per store), decides
 * every ended season in order, then pays the places owed, oldest season first. A season with no entries on either
 * board is not decided (nothing to publish).
 */
export function createSettler(d: SettleDeps & { lease: Lease; intervalMs?: number }) {
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<{ decided: number[]; waiting: string | null }> | null = null;
  /** One pass: the seasons it decided, or why it waits (null: nothing to do, or another instance holds the lease). */
  async function once(): Promise<{ decided: number[]; waiting: string | null }> {
    if (!(await d.lease.hold())) return { decided: [], waiting: NOT_HELD };
    let out: { decided: number[]; waiting: string | null };
    try {
      out = await decideDue();
    } catch (err) {
      // A decision that failed (a read that threw) never skips the places owed: they are paid, then the pass fails.
      await pay().catch((e) => d.logger?.warn({ err: e }, "league payouts failed after a failed decision"));
      throw err;
    }
    await pay();
    return out;
  }
  /** Decides every ended season in turn: the seasons decided, or why the next one waits. */
  async function decideDue(): Promise<{ decided: number[]; waiting: string | null }> {
    const decided: number[] = [];
    const [first] = await d.db.query<{ n: number | null }>("SELECT min(from_season) AS n FROM app.league_entries");
    const last = seasonNumberAt(nowS(d)) - 1;
    const [done] = await d.db.query<{ n: number | null }>("SELECT max(season) AS n FROM app.league_results");
    // Each season is decided in turn, whether or not an earlier one's places are paid yet: a place not
    // paid stays owed (its amount left the reserve's book at its decision) and is paid in order after.
    for (let n = Math.max(Number(first?.n ?? last + 1), Number(done?.n ?? 0) + 1); n <= last; n++) {
      const s = seasonAt(n, nowS(d));
      const r = await ready(d, s);
      if (!r.ok) {
        d.logger?.info({ season: n, why: r.why }, "league season not ready to decide");
        return { decided, waiting: `season ${n}: ${r.why}` };
      }
      if (!(await d.lease.hold())) return { decided, waiting: "the lease moved to another instance" };
      const done = await decideSeason(d, s, r.block);
      if (done.incomplete) {
        d.logger?.warn(
          { season: n, why: done.incomplete },
          "league season not decided: a read at its decision block failed; the next pass reads again",
        );
        return { decided, waiting: `season ${n}: ${done.incomplete}` };
      }
      if (done.reviews) {
        d.logger?.info({ season: n, why: done.reviews }, "league season not decided yet: flags wait for review");
        return { decided, waiting: `season ${n}: ${done.reviews}` };
      }
      if (done.decided) decided.push(n);
    }
    return { decided, waiting: null };
  }
  /** Pays the places owed, in order (and settles the ledgers paid); the lease is renewed first. */
  async function pay() {
    if (await d.lease.hold()) await payOwed(d, () => d.lease.hold());
  }
  return {
    /** One pass (tests drive it; the timer runs it in the service). */
    runOnce: () => (running ??= counted(once).finally(() => (running = null))),
    start() {
      if (timer) return;
      const tick = () => {
        void this.runOnce()
          .catch((err) => d.logger?.warn({ err }, "league settler pass failed"))
          .finally(() => (timer = setTimeout(tick, d.intervalMs ?? 30_000)));
      };
      timer = setTimeout(tick, 0);
    },
    async stop() {
      if (timer) clearTimeout(timer);
      timer = null;
      await running?.catch(() => undefined);
      // A store that is gone has nothing to release: stopping never fails on it.
      await d.lease.release().catch(() => undefined);
    },
  };
}
export type Settler = ReturnType<typeof createSettler>;

/** A settler pass with its outcome in pit_worker_passes_total (league_settler). */
async function counted(once: () => Promise<{ decided: number[]; waiting: string | null }>) {
  try {
    const out = await once();
    const outcome = out.waiting === NOT_HELD ? "not_held" : out.waiting ? "waiting" : "ran";
    workerPass("league_settler", outcome);
    return out;
  } catch (err) {
    workerPass("league_settler", "failed");
    throw err;
  }
}
