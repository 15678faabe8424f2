import type { Address, Hex } from "viem";
import type { BookPool, PoolBook } from "../../lib/localQuote.js";
import { priceFromX96 } from "../../lib/twap.js";
import { Refusal } from "../errors/index.js";
import { lc } from "../../lib/address.js";

/** What the indexer tells the API about itself (Ponder's checkpoint). */
export type IndexerStatus = { block: number; timestamp: number } | null;

/**
 * Ponder checkpoints are 75 digits: block timestamp (10), chain id (16), block number (16),
 * transaction index (16), event type (1), event index (16).
 */
export function decodeCheckpointHead(checkpoint: string): IndexerStatus {
  if (!/^\d{75}$/.test(checkpoint)) return null;
  return { timestamp: Number(checkpoint.slice(0, 10)), block: Number(checkpoint.slice(26, 42)) };
}

/** Runs one parameterised SELECT ($1, $2 ...) and gives its rows. */
export type Query = (text: string, params?: unknown[]) => Promise<Record<string, unknown>[]>;

export type PoolState = {
  id: Hex;
  currency0: Address;
  currency1: Address;
  fee: number;
  tickSpacing: number;
  hooks: Address;
  sqrtPriceX96: bigint;
  priceX96: bigint;
  tick: number;
  liquidity: bigint;
  swaps: number;
  block: number;
  timestamp: number;
};

export type CurveTokenRow = {
  token: Address;
  creator: Address;
  name: string;
  symbol: string;
  feeMode: number;
  virtualEth: bigint;
  virtualToken: bigint;
  graduated: boolean;
  trades: number;
  launchedAt: number;
  block: number;
  timestamp: number;
};
/** One launchpad curve trade as its event logged it (reserves after the trade). */
export type CurveTradeRow = {
  isBuy: boolean;
  ethAmount: bigint;
  tokenAmount: bigint;
  fee: bigint;
  virtualEth: bigint;
  virtualToken: bigint;
  timestamp: number;
};

export type Mark = { feed: Address; roundId: bigint; answer: bigint; updatedAt: number; ageS: number; block: number };

export type FeeTransferRow = {
  id: string;
  direction: "in" | "out";
  token: Address;
  amount: bigint;
  from: Address;
  to: Address;
  source: "trade" | "outside";
  method: "log" | "trace" | "balance" | "transaction";
  txHash: Hex;
  block: number;
  timestamp: number;
};

const big = (v: unknown): bigint => BigInt(String(v));
const _bigOrNull = (v: unknown): bigint | null => (v === null || v === undefined ? null : big(v));
const num = (v: unknown): number => Number(v);

function poolFrom(r: Record<string, unknown>): PoolState {
  return {
    id: r.id as Hex,
    currency0: r.currency0 as Address,
    currency1: r.currency1 as Address,
    fee: num(r.fee),
    tickSpacing: num(r.tick_spacing),
    hooks: r.hooks as Address,
    sqrtPriceX96: big(r.sqrt_price_x_96),
    priceX96: big(r.price_x_96),
    tick: num(r.tick),
    liquidity: big(r.liquidity),
    swaps: num(r.swaps),
    block: num(r.block),
    timestamp: num(r.timestamp),
  };
}

function feeTransferFrom(r: Record<string, unknown>): FeeTransferRow {
  return {
    id: r.id as string,
    direction: r.direction as FeeTransferRow["direction"],
    token: r.token as Address,
    amount: big(r.amount),
    from: r.from as Address,
    to: r.to as Address,
    source: r.source as FeeTransferRow["source"],
    method: r.method as FeeTransferRow["method"],
    txHash: r.tx_hash as Hex,
    block: num(r.block),
    timestamp: num(r.timestamp),
  };
}

const ident = (s: string) => {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(s)) throw new Error(`bad schema name ${s}`);
  return `"${s}"`;
};

/** The store the reads run against: a failing-closed query and the table namer for the schema. */
type Db = { query: Query; t: (name: string) => string };

/**
 * The checkpoint the tables are at, as one scalar subquery. Ponder is ready (`_ponder_meta`'s is_ready): its latest
 * checkpoint, committed with each block's rows. Not ready: its safe checkpoint. A historical batch commits latest =
 * safe with its rows, but crash recovery (a restart on the same schema) reverts the rows to the safe checkpoint and
 * leaves latest where the dead process stopped until its backfill ends (Ponder 0.16 database/index.js: "We don't
 * update the `_ponder_checkpoint` table here"). Read as latest, a restarted indexer looks caught up over rows it has
 * just reverted (test/indexer/recovery.test.ts holds one there).
 */
const tablesCheckpoint = (db: Db) =>
  `(SELECT CASE WHEN m.value->>'is_ready' = '1' THEN c.latest_checkpoint ELSE c.safe_checkpoint END
    FROM ${db.t("_ponder_checkpoint")} c LEFT JOIN ${db.t("_ponder_meta")} m ON m.key = 'app' LIMIT 1)`;

/** The checkpoint one statement selects as `cp`, decoded (null when there is none). */
async function checkpointOf(db: Db, select: string): Promise<IndexerStatus> {
  const cp = (await db.query(select))[0]?.cp;
  return typeof cp === "string" ? decodeCheckpointHead(cp) : null;
}

const head = (db: Db) => checkpointOf(db, `SELECT ${tablesCheckpoint(db)} AS cp`);

/**
 * Ponder's finalized checkpoint: the chain's block at its finality depth (lib/finality FINALITY_BLOCKS) when the
 * indexer last saw it. Rows at or before it are never reverted, by a reorg or a restart's recovery: what an
 * irreversible decision reads.
 */
const finalized = (db: Db) =>
  checkpointOf(db, `SELECT finalized_checkpoint AS cp FROM ${db.t("_ponder_checkpoint")} LIMIT 1`);

async function pool(db: Db, id: Hex): Promise<PoolState | null> {
  const rows = await db.query(`SELECT * FROM ${db.t("pool")} WHERE id = $1`, [lc(id)]);
  return rows[0] ? poolFrom(rows[0]) : null;
}

/** Blocks the indexer is behind `chainHead`, or null before its first checkpoint. */
async function lagBlocks(db: Db, chainHead: number): Promise<number | null> {
  const h = await head(db);
  return h ? Math.max(0, chainHead - h.block) : null;
}

/** Mid price of currency0 in currency1 (human units) from the pool's latest state. */
async function poolMid(
  db: Db,
  id: Hex,
  decimals0: number,
  decimals1: number,
): Promise<{ mid: number; block: number; timestamp: number } | null> {
  const p = await pool(db, id);
  return p ? { mid: priceFromX96(p.priceX96, decimals0, decimals1), block: p.block, timestamp: p.timestamp } : null;
}

async function curveToken(db: Db, token: Address): Promise<CurveTokenRow | null> {
  const r = (await db.query(`SELECT * FROM ${db.t("curve_token")} WHERE token = $1`, [lc(token)]))[0];
  if (!r) return null;
  return {
    token: r.token as Address,
    creator: r.creator as Address,
    name: r.name as string,
    symbol: r.symbol as string,
    feeMode: num(r.fee_mode),
    virtualEth: big(r.virtual_eth),
    virtualToken: big(r.virtual_token),
    graduated: Boolean(r.graduated),
    trades: num(r.trades),
    launchedAt: num(r.launched_at),
    block: num(r.block),
    timestamp: num(r.timestamp),
  };
}

/**
 * A curve's trades that set its price over [from, to]: the last one at or before `from` (its
 * reserves held at the window's start), then every one inside, in chain order (a block's trades
 * by their log id: their time is the block's, so only the block's last state outlives it).
 */
async function curveTradesFor(db: Db, token: Address, from: number, to: number): Promise<CurveTradeRow[]> {
  const rows = await db.query(
    `(SELECT * FROM ${db.t("curve_trade")} WHERE token = $1 AND timestamp <= $2
       ORDER BY timestamp DESC, block DESC, id DESC LIMIT 1)
     UNION ALL (SELECT * FROM ${db.t("curve_trade")} WHERE token = $1 AND timestamp > $2 AND timestamp <= $3)
     ORDER BY timestamp, block, id`,
    [lc(token), from, to],
  );
  return rows.map((r) => ({
    isBuy: Boolean(r.is_buy),
    ethAmount: big(r.eth_amount),
    tokenAmount: big(r.token_amount),
    fee: big(r.fee),
    virtualEth: big(r.virtual_eth),
    virtualToken: big(r.virtual_token),
    timestamp: num(r.timestamp),
  }));
}

/**
 * A pool's prices over [from, to] as the indexer logged them (the owner-signed marks' steps,
 * lib/markSource windowPrice): the last observation at or before `from` (the price at the
 * window's start), then every one inside, in chain order.
 */
async function poolStepsFor(
  db: Db,
  poolId: Hex,
  from: number,
  to: number,
): Promise<{ ts: number; priceX96: bigint }[]> {
  const obs = db.t("pool_observation");
  const rows = await db.query(
    `(SELECT timestamp, block, log_index, price_x_96::text AS p FROM ${obs}
       WHERE pool_id = $1 AND timestamp <= $2 ORDER BY timestamp DESC, block DESC, log_index DESC LIMIT 1)
     UNION ALL (SELECT timestamp, block, log_index, price_x_96::text AS p FROM ${obs}
       WHERE pool_id = $1 AND timestamp > $2 AND timestamp <= $3)
     ORDER BY timestamp, block, log_index`,
    [lc(poolId), from, to],
  );
  return rows.map((r) => ({ ts: num(r.timestamp), priceX96: big(String(r.p)) }));
}

/** Every pool trading `token` (either side). */
async function poolsOf(db: Db, token: Address): Promise<PoolState[]> {
  const sql = `SELECT * FROM ${db.t("pool")} WHERE currency0 = $1 OR currency1 = $1 ORDER BY liquidity DESC`;
  return (await db.query(sql, [lc(token)])).map(poolFrom);
}

/**
 * A pool with more initialised ticks than this is left out of the pool book (its quotes go to the V4Quoter): anyone
 * can add 1-wei positions at many ticks, and a quote must not pay for reading and walking them all.
 */
export const MAX_BOOK_TICKS = 5_000;

/**
 * The pools `ids` (each with its slot0, liquidity and initialised ticks, ascending) with the checkpoint the tables are
 * at (tablesCheckpoint), in one statement: one snapshot of the store, and Ponder commits a block's rows with its
 * checkpoint in one transaction, so the book is exactly the chain's at that block. A pool it does not hold, or one
 * past MAX_BOOK_TICKS, is absent. null before the first checkpoint.
 */
async function poolBook(db: Db, ids: readonly Hex[]): Promise<PoolBook | null> {
  const rows = await db.query(
    `SELECT ${tablesCheckpoint(db)} AS cp,
       (SELECT coalesce(json_agg(json_build_array(p.id, p.currency0, p.currency1, p.fee, p.tick_spacing, p.hooks,
          p.sqrt_price_x_96::text, p.tick, p.liquidity::text, p.protocol_fee, t.ticks)), '[]')
        FROM ${db.t("pool")} p
        CROSS JOIN LATERAL (SELECT coalesce(json_agg(json_build_array(x.tick, x.liquidity_net::text) ORDER BY x.tick),
            '[]') AS ticks, count(*) AS n
          FROM (SELECT tick, liquidity_net FROM ${db.t("pool_tick")} WHERE pool_id = p.id ORDER BY tick
            LIMIT ${MAX_BOOK_TICKS + 1}) x) t
        WHERE p.id = ANY($1::text[]) AND t.n <= ${MAX_BOOK_TICKS}) AS pools`,
    [ids.map(lc)],
  );
  const r = rows[0];
  const h = typeof r?.cp === "string" ? decodeCheckpointHead(r.cp) : null;
  if (!r || !h) return null;
  const json = (v: unknown) => (typeof v === "string" ? JSON.parse(v) : v) as unknown[][];
  const pools = new Map<string, BookPool>();
  for (const [id, currency0, currency1, fee, tickSpacing, hooks, sqrtP, tick, liquidity, protocolFee, ticks] of json(
    r.pools,
  ))
    pools.set(lc(id as string), {
      id: id as Hex,
      key: {
        currency0: currency0 as Address,
        currency1: currency1 as Address,
        fee: num(fee),
        tickSpacing: num(tickSpacing),
        hooks: hooks as Address,
      },
      sqrtPriceX96: big(sqrtP),
      tick: num(tick),
      liquidity: big(liquidity),
      protocolFee: num(protocolFee),
      ticks: (ticks as [unknown, unknown][]).map(([t, net]) => ({ tick: num(t), liquidityNet: big(net) })),
    });
  return { block: h.block, timestamp: h.timestamp, pools };
}

async function pools(db: Db): Promise<PoolState[]> {
  return (await db.query(`SELECT * FROM ${db.t("pool")} ORDER BY block, id`)).map(poolFrom);
}

/**
 * Time-weighted arithmetic mean of priceX96 over [from, to] (unix seconds), or null when the
 * pool has no observation at or before `from` (not enough history to say).
 */
async function twapX96(db: Db, poolId: Hex, from: number, to: number): Promise<bigint | null> {
  if (!(to > from)) throw new RangeError("twap window must have to > from");
  const rows = await db.query(
    `WITH a AS (
       SELECT price_x_96, cumulative_x_96, timestamp FROM ${db.t("pool_observation")}
       WHERE pool_id = $1 AND timestamp <= $2 ORDER BY timestamp DESC, block DESC, log_index DESC LIMIT 1
     ), b AS (
       SELECT price_x_96, cumulative_x_96, timestamp FROM ${db.t("pool_observation")}
       WHERE pool_id = $1 AND timestamp <= $3 ORDER BY timestamp DESC, block DESC, log_index DESC LIMIT 1
     )
     SELECT ((b.cumulative_x_96 + b.price_x_96 * ($3 - b.timestamp))
       - (a.cumulative_x_96 + a.price_x_96 * ($2 - a.timestamp)))::text AS diff
     FROM a, b`,
    [lc(poolId), from, to],
  );
  const diff = rows[0]?.diff;
  return diff === undefined || diff === null ? null : big(String(diff).split(".")[0]) / BigInt(to - from);
}

async function latestMark(db: Db, feed: Address, now: number): Promise<Mark | null> {
  const rows = await db.query(`SELECT * FROM ${db.t("feed")} WHERE address = $1`, [lc(feed)]);
  const r = rows[0];
  if (!r) return null;
  const updatedAt = num(r.updated_at);
  return {
    feed: r.address as Address,
    roundId: big(r.round_id),
    answer: big(r.answer),
    updatedAt,
    ageS: Math.max(0, now - updatedAt),
    block: num(r.block),
  };
}

/** Every round a feed logged, in chain order, with its block's time (the league's marks). */
async function feedRounds(
  db: Db,
  feed: Address,
): Promise<{ round_id: string; answer: bigint; updated_at: number; block: number; ts: number }[]> {
  const rows = await db.query(
    `SELECT round_id::text AS round_text, answer::text AS answer_text, updated_at, block, timestamp
     FROM ${db.t("feed_round")} WHERE feed = $1 ORDER BY block, round_id`,
    [lc(feed)],
  );
  return rows.map((r) => ({
    round_id: String(r.round_text),
    answer: big(r.answer_text),
    updated_at: num(r.updated_at),
    block: num(r.block),
    ts: num(r.timestamp),
  }));
}

/** A pool's price observations in chain order, with the running integral the indexer keeps (lib/twap). */
async function poolObservations(
  db: Db,
  poolId: Hex,
): Promise<{ ts: number; block: number; log: number; priceX96: bigint; cumulativeX96: bigint }[]> {
  const rows = await db.query(
    `SELECT timestamp, block, log_index, price_x_96::text AS p, cumulative_x_96::text AS c
     FROM ${db.t("pool_observation")} WHERE pool_id = $1 ORDER BY block, log_index`,
    [lc(poolId)],
  );
  return rows.map((r) => ({
    ts: num(r.timestamp),
    block: num(r.block),
    log: num(r.log_index),
    priceX96: big(r.p),
    cumulativeX96: big(String(r.c).split(".")[0]),
  }));
}

/** Unix time of the first transfer that reached the fee wallet, or null. */
async function firstFeeTransferAt(db: Db): Promise<number | null> {
  const rows = await db.query(`SELECT min(timestamp)::text AS t FROM ${db.t("fee_transfer")} WHERE direction = 'in'`);
  const v = rows[0]?.t;
  return typeof v === "string" ? Number(v) : null;
}

/** Fee-wallet transfers with from <= timestamp < to (a treasury week), in chain order. */
async function feeTransfersBetween(db: Db, from: number, to: number): Promise<FeeTransferRow[]> {
  const rows = await db.query(
    `SELECT * FROM ${db.t("fee_transfer")} WHERE timestamp >= $1 AND timestamp < $2 ORDER BY block, id`,
    [from, to],
  );
  return rows.map(feeTransferFrom);
}

/** Hex stored by Ponder is lower-case. */

/**
 * Typed reads over Ponder's tables. `schema` is Ponder's schema (embedded) or the views schema
 * (PostgreSQL with --views-schema); the same SQL serves both. Rows of unfinalised blocks can
 * vanish on a reorg, so nothing here assumes a row read once stays.
 */
export function sqlIndexedReads(read: Query, schema?: string) {
  // Fails closed: an indexed store that cannot answer is 503 ENGINE_UNAVAILABLE, never "no rows".
  const query: Query = async (text, params) => {
    try {
      return await read(text, params);
    } catch (err) {
      throw new Refusal(
        "ENGINE_UNAVAILABLE",
        "the indexer's store did not answer; try again shortly",
        {},
        { cause: err, retryAfterS: 2 },
      );
    }
  };
  const db: Db = { query, t: (name: string) => (schema ? `${ident(schema)}.${name}` : name) };
  return {
    head: () => head(db),
    finalized: () => finalized(db),
    pool: (id: Hex) => pool(db, id),
    lagBlocks: (chainHead: number) => lagBlocks(db, chainHead),
    poolMid: (id: Hex, decimals0: number, decimals1: number) => poolMid(db, id, decimals0, decimals1),
    curveToken: (token: Address) => curveToken(db, token),
    curveTradesFor: (token: Address, from: number, to: number) => curveTradesFor(db, token, from, to),
    poolStepsFor: (poolId: Hex, from: number, to: number) => poolStepsFor(db, poolId, from, to),
    poolsOf: (token: Address) => poolsOf(db, token),
    pools: () => pools(db),
    poolBook: (ids: readonly Hex[]) => poolBook(db, ids),
    twapX96: (poolId: Hex, from: number, to: number) => twapX96(db, poolId, from, to),
    latestMark: (feed: Address, now: number) => latestMark(db, feed, now),
    feedRounds: (feed: Address) => feedRounds(db, feed),
    poolObservations: (poolId: Hex) => poolObservations(db, poolId),
    firstFeeTransferAt: () => firstFeeTransferAt(db),
    feeTransfersBetween: (from: number, to: number) => feeTransfersBetween(db, from, to),
  };
}

export type SqlIndexedReads = ReturnType<typeof sqlIndexedReads>;
