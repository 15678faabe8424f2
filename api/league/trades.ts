/**
 * The relayed trades the prize board reads: rows of app.trades with their plans, and each as a
 * season's mined trade (amounts from the receipt, the plan `league:verify` recomputes them with).
 */
import { LRUCache } from "lru-cache";
import { getAddress } from "viem";
import { relayedPlanOf, type TokenRef } from "../trading/index.js";
import type { RelayedPlan } from "../../lib/tradeOutcome.js";
import type { Db } from "../ports/store/db.js";
import type { SeasonTrade } from "../../lib/league/valuation.js";
import { lc } from "../../lib/address.js";

/** A relayed trade's row with its plan, as the league reads it (tradeRows). */
export type TradeRow = {
  id: string;
  wallet: string;
  path: string;
  tx_hash: string;
  block_number: string | null;
  block_time: string | null;
  outcome: string | null;
  mined: boolean;
  final: boolean;
  execution: string;
  p_token_in: string;
  p_token_out: string;
  /** The plan's transactions and summary, JSON text; null where the read left them out (`plans` false). */
  txs: string | null;
  summary: string | null;
};

/**
 * Relayed trades (with their plans) matching `where` over `t`, by block then id. `t` is app.trades, or `source`: a
 * FROM item that names its rows `t` (the kept read's per-wallet index scans). `plans` false leaves out the plan's
 * transactions and summary: a standings pass never publishes a plan, and a live plan carries its calldata (a
 * kilobyte or more a trade, read 100,000 times by a full read).
 */
export function tradeRows(
  db: Db,
  where: string,
  params: unknown[],
  { source = "app.trades t", plans = true }: { source?: string; plans?: boolean } = {},
): Promise<TradeRow[]> {
  return db.query<TradeRow>(
    `SELECT t.id::text AS id, t.wallet, t.path, t.tx_hash, t.block_number::text AS block_number,
       t.block_time::text AS block_time, t.outcome, t.final,
       (t.status = 'mined' AND NOT t.fee_unpaid AND t.outcome IS NOT NULL) AS mined,
       p.execution, p.token_in AS p_token_in, p.token_out AS p_token_out,
       ${plans ? "p.txs, p.summary" : "NULL AS txs, NULL AS summary"}
     FROM ${source} JOIN app.plans p ON p.id = t.plan_id
     WHERE ${where}
     ORDER BY t.block_number, t.id`,
    params,
  );
}

/** A token reference's text parsed once (a season's 100,000 trades name a few dozen tokens); never mutated. */
const tokenRefs = new LRUCache<string, { ref: Readonly<TokenRef>; token: Readonly<SeasonTrade["token_in"]> | null }>({
  max: 10_000,
});
function tokenOf(text: string) {
  let t = tokenRefs.get(text);
  if (!t) {
    const ref = Object.freeze(JSON.parse(text) as TokenRef);
    const token =
      ref.address && ref.decimals !== null ? Object.freeze({ address: lc(ref.address), decimals: ref.decimals }) : null;
    tokenRefs.set(text, (t = { ref, token }));
  }
  return t;
}

/** A row read with its plan (tradeRows `plans`). */
type PlannedRow = TradeRow & { txs: string; summary: string };
const hasPlan = (r: TradeRow): r is PlannedRow => r.txs !== null && r.summary !== null;

/**
 * A season's mined trade, read from its row. The plan only matters where the trades are published (a decision, the
 * books route): built on the first read of `plan`, so a standings pass does not parse 100,000 plans' JSON it never
 * looks at, and a getter on the class, not a closure per trade (issue 29 point 6: the allocations of a full read).
 */
class MinedRow {
  private built: RelayedPlan | null | undefined;
  /** The row, kept only while it has a plan to build (a kept read's rows have none: not held for the season). */
  private readonly row: PlannedRow | null;
  readonly wallet: string;
  readonly path: string;
  /** Whether its block was final when the row was read (a kept list is replaced when a row of it changes). */
  readonly final: boolean;
  constructor(
    row: TradeRow,
    readonly trade: SeasonTrade,
  ) {
    this.row = hasPlan(row) ? row : null;
    this.wallet = lc(row.wallet);
    this.path = row.path;
    this.final = row.final === true;
  }
  get plan(): RelayedPlan | null {
    if (this.built === undefined) {
      const r = this.row;
      // A kept standings read (kept.ts) leaves the plans out; nothing it answers publishes one.
      if (r === null) throw new Error(`trade ${this.trade.id}: its plan was not read`);
      const [tin, tout] = [tokenOf(r.p_token_in).ref, tokenOf(r.p_token_out).ref];
      this.built = relayedPlanOf(
        getAddress(r.wallet),
        r.execution,
        tin,
        tout,
        JSON.parse(r.txs),
        JSON.parse(r.summary),
      );
    }
    return this.built;
  }
}

/**
 * A row as a season's mined trade: amounts from the receipt, the plan that verify needs; null when it is not
 * mined in [from, to) or its outcome lacks an amount or a token.
 */
export function minedTradeOf(r: TradeRow, from: number, to: number): MinedRow | null {
  if (!r.mined || r.outcome === null || r.block_time === null || r.block_number === null) return null;
  if (Number(r.block_time) < from || Number(r.block_time) >= to) return null;
  const o = JSON.parse(r.outcome) as { amountIn: string | null; amountOut: string | null };
  const [tin, tout] = [tokenOf(r.p_token_in).token, tokenOf(r.p_token_out).token];
  if (!o.amountIn || !o.amountOut || !tin || !tout) return null;
  return new MinedRow(r, {
    id: r.id,
    tx_hash: r.tx_hash,
    block: Number(r.block_number),
    ts: Number(r.block_time),
    token_in: tin,
    amount_in: BigInt(o.amountIn),
    token_out: tout,
    amount_out: BigInt(o.amountOut),
  });
}
export type MinedTrade = NonNullable<ReturnType<typeof minedTradeOf>>;

/**
 * The trades the service relayed for `wallets` and that were mined in [from, to): amounts from the receipt, the
 * plan that verify needs.
 */
export async function minedTrades(db: Db, wallets: string[], from: number, to: number): Promise<MinedTrade[]> {
  if (!wallets.length) return [];
  const rows = await tradeRows(
    db,
    `t.wallet = ANY($1) AND t.status = 'mined' AND NOT t.fee_unpaid
       AND t.block_time >= $2 AND t.block_time < $3 AND t.outcome IS NOT NULL`,
    [wallets.map(lc), from, to],
  );
  const out: MinedTrade[] = [];
  await eachInSlices(rows, (r) => {
    const m = minedTradeOf(r, from, to);
    if (m) out.push(m);
  });
  return out;
}

/** Rows handled between two yields to the event loop (a few milliseconds). */
const ROWS_PER_SLICE = 2_000;

/**
 * `f` over `rows`, yielding to the event loop every ROWS_PER_SLICE: a season's first read is 100,000 rows, and the
 * process's other work (the board's chain reads, whose timeouts count wall time, and every request it serves) runs
 * between slices instead of waiting a second or two.
 */
export async function eachInSlices<T>(rows: T[], f: (row: T) => void): Promise<void> {
  for (let i = 0; i < rows.length; i++) {
    if (i > 0 && i % ROWS_PER_SLICE === 0) await new Promise((r) => setImmediate(r));
    f(rows[i]!);
  }
}
