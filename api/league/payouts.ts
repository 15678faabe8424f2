import type { Config } from "../../lib/config.js";
import { PRIZE_SPLIT_BPS } from "../../lib/league/rules.js";
import type { Db } from "../ports/store/db.js";
import { partnerToken, stakeWithdrawal, type PayoutBook } from "./reserve.js";

/**
 * The treasury's `prize_payouts` (SPEC GET treasury): each season that planned payouts, newest
 * first, with its stake, cap and reserve figures and every recipient's transfer. Names agents and
 * their prize wallets (published by the vault), never a trading wallet.
 */
export async function prizePayouts(d: { db: Db; config: Config }) {
  const token = partnerToken(d.config);
  const ledgers = await d.db.query<{ season: number; ledger: string }>(
    "SELECT l.season, l.ledger FROM app.league_ledgers l WHERE EXISTS (SELECT 1 FROM app.league_payouts " +
      "p WHERE p.season = l.season) ORDER BY l.season DESC",
  );
  const out = [];
  for (const r of ledgers) {
    const l = JSON.parse(r.ledger) as PayoutBook;
    const pays = await d.db.query<{
      place: number;
      agent_id: string;
      recipient: string;
      amount: string;
      status: string;
      tx_hash: string | null;
    }>(
      "SELECT place, agent_id::text AS agent_id, recipient, amount, status, tx_hash FROM " +
        "app.league_payouts WHERE season = $1 ORDER BY place",
      [r.season],
    );
    out.push({
      season: r.season,
      token: token?.address ?? null,
      symbol: token?.symbol ?? null,
      decimals: token?.decimals ?? null,
      stake: { gain: l.gain, to_reserve: l.added, kept_staked: l.kept_staked },
      cap: { usd: l.cap_usd, orbio_usd: l.orbio_usd, amount: l.cap },
      reserve: {
        before: l.reserve_before,
        added: l.added,
        ceiling: l.ceiling,
        payout: l.budget,
        paid: l.paid_total,
        after: l.reserve_after,
      },
      recipients: pays.map((p) => ({
        rank: p.place,
        agent: Number(p.agent_id),
        wallet: p.recipient,
        share_bps: PRIZE_SPLIT_BPS[p.place - 1],
        amount: p.amount,
        tx_hash: p.status === "mined" ? p.tx_hash : null,
      })),
      stake_withdrawal: (({ tx_hash, tx_hashes, amount, note }) => ({ tx_hash, tx_hashes, amount, note }))(
        stakeWithdrawal(l),
      ),
      distributor: d.config.league.reserveWallet,
      note: pays.some((p) => p.status === "held")
        ? "held: a recipient is on the sanctions list; its transfer is not sent and its share stays in the reserve " +
          "wallet, set aside"
        : pays.every((p) => p.status === "mined")
          ? "paid"
          : "owed: transfers not all mined yet; paid in order, oldest season first",
    });
  }
  return out;
}
