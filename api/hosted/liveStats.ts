import type { Address } from "viem";
import type { TradeRecord } from "../trading/index.js";
import type { HostedContext } from "./deps.js";
import type { StoredAgent } from "./store.js";

/** A token side of a live trade: its symbol, address and decimals (me/trades' token_in/token_out). */
type Side = { symbol: string; address: string; decimals: number };
/**
 * One mined live trade of the agent: the amounts me/trades lists (amount_out the actual received), and
 * from the agent's own trade row the USD it was worth when sent (notional, fee included) and its fee.
 */
export type LiveTrade = {
  token_in: Side;
  token_out: Side;
  amount_in: bigint;
  amount_out: bigint;
  usd: number;
  fee_bps: number;
};

const whole = (atoms: bigint, decimals: number) => Number(atoms) / 10 ** decimals;
const round2 = (x: number) => Math.round(x * 100) / 100;

/**
 * SPEC "Hosted agent" live_stats from the agent's mined live trades, oldest first: how many, their
 * volume (USD when sent), the fees they paid (their fee_bps of that), and profit by average cost.
 * A token the agent bought carries what it cost (the input's USD when sent, fee included); selling
 * it realises the sale's USD less the cost of the share sold; what is still held is open profit at
 * `markOf` (a token without a mark counts at cost: no open profit). A token sold that the agent never
 * bought (the wallet's own funds) costs what it was worth when sold, so its sale realises nothing.
 * `positions`: the net atoms each token moved (in as minus, out as plus), which me/trades sums to.
 */
export function liveStats(trades: LiveTrade[], pending: number, markOf: (address: string) => number | null) {
  const held = new Map<string, { side: Side; atoms: bigint; cost: number }>();
  const net = new Map<string, { side: Side; atoms: bigint }>();
  let volume = 0;
  let fees = 0;
  let realised = 0;
  const move = (side: Side, atoms: bigint) => {
    const k = side.address.toLowerCase();
    net.set(k, { side, atoms: (net.get(k)?.atoms ?? 0n) + atoms });
  };
  for (const t of trades) {
    volume += t.usd;
    fees += (t.usd * t.fee_bps) / 10_000;
    const kin = t.token_in.address.toLowerCase();
    const h = held.get(kin) ?? { side: t.token_in, atoms: 0n, cost: 0 };
    const fromHeld = h.atoms < t.amount_in ? h.atoms : t.amount_in;
    const share = h.atoms > 0n ? Number(fromHeld) / Number(h.atoms) : 0;
    const outside = t.amount_in > 0n ? Number(t.amount_in - fromHeld) / Number(t.amount_in) : 0;
    const released = h.cost * share + t.usd * outside;
    realised += t.usd - released;
    held.set(kin, { side: h.side, atoms: h.atoms - fromHeld, cost: h.cost - h.cost * share });
    const kout = t.token_out.address.toLowerCase();
    const o = held.get(kout) ?? { side: t.token_out, atoms: 0n, cost: 0 };
    held.set(kout, { side: o.side, atoms: o.atoms + t.amount_out, cost: o.cost + t.usd });
    move(t.token_in, -t.amount_in);
    move(t.token_out, t.amount_out);
  }
  let open = 0;
  for (const [k, h] of held) {
    const m = markOf(k);
    if (h.atoms > 0n && m !== null) open += whole(h.atoms, h.side.decimals) * m - h.cost;
  }
  return {
    trades: trades.length,
    pending,
    volume_usd: round2(volume),
    fees_usd: round2(fees),
    realised_usd: round2(realised),
    open_usd: round2(open),
    profit_usd: round2(realised + open),
    positions: Object.fromEntries(
      [...net.values()].map((p) => [p.side.symbol, { atoms: p.atoms.toString(), decimals: p.side.decimals }]),
    ),
  };
}

export type LiveStats = ReturnType<typeof liveStats>;

/** What live_stats reads: the owner wallet's trades by hash as me/trades lists them, and marks now. */
export type LiveStatsDeps = Pick<HostedContext, "store" | "market"> & {
  tradesOf: (wallet: Address, hashes: string[]) => Promise<TradeRecord[]>;
};

const sideOf = (t: TradeRecord["token_in"]): Side | null =>
  t?.address && t.decimals !== null
    ? { symbol: t.symbol ?? t.address, address: t.address, decimals: t.decimals }
    : null;

/**
 * The agent's live_stats: its live trade rows (hash, USD when sent, fee) joined with the owner
 * wallet's trade records of those hashes; only mined ones count, relayed ones not yet mined are
 * `pending`. null for a paper agent (it never trades live).
 */
export async function liveStatsOf(d: LiveStatsDeps, a: Pick<StoredAgent, "id" | "mode" | "wallet">) {
  if (a.mode === "paper") return null;
  const rows = await d.store.db.query<{ body: string }>(
    "SELECT body FROM app.hosted_logs WHERE agent_id = $1 AND kind = 'trade' ORDER BY id",
    [a.id],
  );
  const sent = new Map<string, { usd: number; fee_bps: number }>();
  for (const r of rows) {
    const b = JSON.parse(r.body) as { mode?: string; tx_hash?: string; amount_usd?: number; fee_bps?: number };
    if (b.mode === "live" && b.tx_hash)
      sent.set(b.tx_hash.toLowerCase(), { usd: Number(b.amount_usd ?? 0), fee_bps: Number(b.fee_bps ?? 0) });
  }
  const records = await d.tradesOf(a.wallet, [...sent.keys()]);
  const mined: LiveTrade[] = [];
  for (const r of records) {
    const tin = sideOf(r.token_in);
    const tout = sideOf(r.token_out);
    const s = r.tx_hash ? sent.get(r.tx_hash.toLowerCase()) : undefined;
    if (r.status !== "mined" || !tin || !tout || !s) continue;
    mined.push({
      token_in: tin,
      token_out: tout,
      amount_in: BigInt(r.amount_in ?? "0"),
      amount_out: BigInt(r.amount_out ?? "0"),
      ...s,
    });
  }
  const marks = new Map<string, number | null>();
  for (const t of mined)
    for (const side of [t.token_in, t.token_out]) {
      const k = side.address.toLowerCase();
      if (!marks.has(k)) marks.set(k, (await d.market.mark(side.address as Address))?.usd ?? null);
    }
  const pending = records.filter((r) => r.status === "pending").length;
  return liveStats(mined, pending, (k) => marks.get(k) ?? null);
}
