import { getAddress, zeroAddress, type Address, type Hex, type PublicClient } from "viem";
import type { Config } from "../../lib/config.js";
import type { SqlIndexedReads } from "../ports/indexed.js";
import type { Market } from "../market/index.js";
import type { Ledger } from "../trading/index.js";
import {
  erc20Flows,
  ethBalanceChange,
  ethSpentBy,
  newFlow,
  nodeTraces,
  tokenFacts,
  tracedEthIn,
  type EthFound,
  type EthMethod,
  type Flow,
  type LedgerFee,
  type WeekBlocks,
} from "./gather.js";
import {
  BUCKETS,
  bucketsFrom,
  bucketStrings,
  splitToken,
  type Bucket,
  type PerBucket,
  type TokenStatus,
} from "./split.js";
import type { Week } from "./week.js";
import { lc } from "../../lib/address.js";
import type { Common } from "../ports/common.js";

export type TokenRow = {
  token: Address;
  symbol: string;
  decimals: number;
  received: string;
  trades: number;
  outside: string;
  /** Transactions behind `outside`; null for ETH not found by trace (a balance does not count them). */
  outside_trades: number | null;
  carried_in: string;
  pool: string;
  status: TokenStatus;
  booked: PerBucket<string>;
  moved: PerBucket<string>;
  owed_in: PerBucket<string>;
  owed_out: PerBucket<string>;
  carried_out: string;
  /** The pool's value at `mark`, USD with 2 decimals rounded down; null when unpriced. */
  value_usd: string | null;
  /** USD per whole token with 8 decimals, the token's independent mark when the week was closed. */
  mark: string | null;
};
export type TransferRow = {
  bucket: Bucket;
  to: Address;
  token: Address;
  symbol: string;
  decimals: number;
  amount: string;
  tx_hash: Hex;
  block: number;
};
export type Reconciliation = {
  status: "agrees" | "accepted";
  /**
   * Per token: the fees the relay ledger booked for trades mined in the week against the chain's (logs, or
   * traces for ETH).
   */
  ledger: { token: Address; symbol: string; ledger: string; chain: string | null }[];
  eth: "trace" | "balance" | "ledger";
  counts: { ledger_trades: number; chain_fee_transfers: number; outside_transfers: number; split_transfers: number };
  /** Why a week that does not agree was recorded as the chain says; null when it agrees. */
  accepted: string | null;
};
export type WeekRow = {
  kind: "week";
  seq: number;
  status: "moved" | "booked" | "preview";
  week: { start: number; end: number; label: string; first_block: number | null; last_block: number | null };
  tokens: TokenRow[];
  transfers: TransferRow[];
  reconciliation: Reconciliation;
  prev_hash: string | null;
  hash: string | null;
  recorded_at: number;
};
/** A split transfer decided at close time, before it is signed. */
export type Planned = Omit<TransferRow, "tx_hash" | "block">;

export type CloseDeps = Pick<Common, "config" | "chain"> & {
  /** The fenced reader of code the service does not control (foreign tokens' symbol and decimals). */
  reader: PublicClient;
  indexed: SqlIndexedReads;
  market: Pick<Market, "independentMark">;
  ledger: Pick<Ledger, "feesMinedBetween">;
  /** Buckets whose share moves (a wallet set and a signer to send it). */
  moving: PerBucket<boolean>;
  /** Forces the ETH method (tests); by default trace when the node traces, else balance. */
  ethMethod?: EthMethod;
};

const decimal = (v: bigint, places: number) =>
  `${v / 10n ** BigInt(places)}.${(v % 10n ** BigInt(places)).toString().padStart(places, "0")}`;

/**
 * ETH as the week found it: the flow split, how it was found, and what the chain shows came in from fee
 * transactions.
 */
type EthWeek = { eth: Flow; method: EthFound; ethChain: bigint | null };

/**
 * ETH has no log: the ledger's fees are what trades paid; the chain says what else came in, by
 * traces when the node serves them (and the span is short enough), else by the balance's change.
 * A disagreement is added to `reasons`.
 */
async function ethOfWeek(
  d: CloseDeps,
  blocks: WeekBlocks,
  fees: LedgerFee[],
  ownTxs: Hex[],
  maxTraceBlocks: number,
  reasons: string[],
): Promise<EthWeek> {
  const platform = d.config.feeRecipient;
  const ethFees = fees.filter((f) => f.token === zeroAddress);
  const eth: Flow = {
    received: ethFees.reduce((s, f) => s + f.amount, 0n),
    trades: new Set(ethFees.map((f) => lc(f.txHash))),
    outside: 0n,
    outsideTxs: new Set(),
  };
  const span = blocks.first === null || blocks.last === null ? 0 : blocks.last - blocks.first + 1;
  const traceable = span <= maxTraceBlocks && (await nodeTraces(d.chain));
  const method: EthMethod = d.ethMethod ?? (traceable ? "trace" : "balance");
  if (method === "trace") {
    const traced = await tracedEthIn(d.chain, platform, blocks);
    const feeTxs = new Set(ethFees.map((f) => lc(f.feeTxHash ?? f.txHash)));
    let ethChain = 0n;
    for (const [tx, value] of traced) {
      if (feeTxs.has(tx)) ethChain += value;
      else {
        eth.outside += value;
        eth.outsideTxs.add(tx);
      }
    }
    if (ethChain !== eth.received)
      reasons.push(`ETH fees: the ledger has ${eth.received} wei, traces show ${ethChain} wei in those transactions`);
    // What the chain shows arrived is what is split, never the ledger's estimate of it.
    eth.received = ethChain;
    return { eth, method, ethChain };
  }
  const change = await ethBalanceChange(d.chain, platform, blocks);
  if (change === null) {
    reasons.push(
      `ETH: the node serves neither traces nor balances at blocks ${blocks.first}-${blocks.last}; ` +
        "ETH from outside trades is not counted",
    );
    return { eth, method: "ledger", ethChain: null };
  }
  const outside = change - eth.received + (await ethSpentBy(d.chain, ownTxs));
  if (outside < 0n) {
    reasons.push(
      `ETH: the balance rose ${-outside} wei less than the ledger's fees and the record's own transfers explain`,
    );
    // Only what the balance shows is split: the ledger's fees are cut to it.
    eth.received = eth.received + outside > 0n ? eth.received + outside : 0n;
  }
  eth.outside = outside > 0n ? outside : 0n;
  return { eth, method, ethChain: null };
}

/**
 * The week's tokens: those that reached the wallet (ERC-20 flows, ETH), and those the row before
 * still carries or owes. Anyone can send the wallet tokens: past MAX_FOREIGN_TOKENS tokens outside
 * config in a week, the rest are left out of `flows` (and said so in `reasons`).
 */
function tokensOfWeek(
  config: Config,
  flows: Map<Address, Flow>,
  eth: Flow,
  prev: WeekRow | null,
  reasons: string[],
): Address[] {
  const foreign = [...flows.keys()].filter((t) => !isCore(config, t)).sort(byAddress);
  for (const t of foreign.slice(MAX_FOREIGN_TOKENS)) flows.delete(t);
  if (foreign.length > MAX_FOREIGN_TOKENS)
    reasons.push(
      `${foreign.length - MAX_FOREIGN_TOKENS} more tokens outside config reached the wallet and are not listed`,
    );
  const tokens = new Set<Address>([...flows.keys()]);
  if (eth.received > 0n || eth.outside > 0n) tokens.add(zeroAddress);
  for (const t of prev?.tokens ?? []) {
    if (BigInt(t.carried_out) > 0n || BUCKETS.some((b) => BigInt(t.owed_out[b]) > 0n)) tokens.add(getAddress(t.token));
  }
  return [...tokens].sort(byAddress);
}

/** One token's row (its split over what came in, carried and owed) and the split transfers it plans. */
async function tokenRowOf(
  d: CloseDeps,
  token: Address,
  flow: Flow,
  before: TokenRow | undefined,
  method: EthFound,
): Promise<{ row: TokenRow; planned: Planned[] }> {
  const facts = await factsOf(d, token);
  const m = await d.market.independentMark(token);
  const markE8 = m.mark ? BigInt(Math.round(m.mark.usd * 1e8)) : null;
  const owedIn = bucketsFrom(before?.owed_out);
  const s = splitToken({
    carriedIn: BigInt(before?.carried_out ?? "0"),
    received: flow.received,
    outside: flow.outside,
    owedIn,
    decimals: facts.decimals,
    markE8,
    bucketSet: d.moving,
  });
  const row: TokenRow = {
    token,
    ...facts,
    received: flow.received.toString(),
    trades: flow.trades.size,
    outside: flow.outside.toString(),
    outside_trades: token === zeroAddress && method !== "trace" ? null : flow.outsideTxs.size,
    carried_in: (before?.carried_out ?? "0").toString(),
    pool: s.pool.toString(),
    status: s.status,
    booked: bucketStrings(s.booked),
    moved: bucketStrings(s.moved),
    owed_in: bucketStrings(owedIn),
    owed_out: bucketStrings(s.owedOut),
    carried_out: s.carriedOut.toString(),
    value_usd: s.valueUsdCents === null ? null : decimal(s.valueUsdCents, 2),
    mark: markE8 === null ? null : decimal(markE8, 8),
  };
  const planned: Planned[] = [];
  for (const b of BUCKETS) {
    const to = d.config.treasuryBuckets[b];
    if (s.moved[b] > 0n && to)
      planned.push({
        bucket: b,
        to,
        token,
        symbol: facts.symbol,
        decimals: facts.decimals,
        amount: s.moved[b].toString(),
      });
  }
  return { row, planned };
}

/** The week's reconciliation: the ledger against the chain per token, the counts, and why it is accepted if it is. */
function reconcile(
  d: CloseDeps,
  fees: LedgerFee[],
  flows: Map<Address, Flow>,
  found: EthWeek,
  rows: TokenRow[],
  planned: Planned[],
  reasons: string[],
): Reconciliation {
  const { eth, method } = found;
  const ledger = ledgerAgainstChain(d, fees, flows, found.ethChain, rows);
  for (const l of ledger)
    if (l.chain !== null && l.chain !== l.ledger && l.token !== zeroAddress)
      reasons.push(`${l.symbol}: the ledger has ${l.ledger} atoms of fees, trade transfers on chain ${l.chain}`);
  const chainFeeTransfers =
    [...flows.values()].reduce((s, f) => s + f.trades.size, 0) + (method === "trace" ? eth.trades.size : 0);
  return {
    status: reasons.length ? "accepted" : "agrees",
    ledger,
    eth: method,
    counts: {
      ledger_trades: fees.length,
      chain_fee_transfers: chainFeeTransfers,
      outside_transfers: [...flows.values()].reduce((s, f) => s + f.outsideTxs.size, 0) + eth.outsideTxs.size,
      split_transfers: planned.length,
    },
    accepted: reasons.length ? reasons.join("; ") : null,
  };
}

/**
 * A week's row as the chain, the indexer and the relay ledger say it, without transfers, hash or
 * seq (the closer adds them): per token what came in, the pool, its split and what is carried;
 * and the reconciliation of the ledger against the chain. `prev` is the row before (carried and
 * owed amounts come from it).
 */
export async function draftWeek(
  d: CloseDeps,
  week: Week,
  blocks: WeekBlocks,
  prev: WeekRow | null,
  ownTxs: Hex[],
  opts: { maxTraceBlocks?: number } = {},
): Promise<{
  row: Omit<WeekRow, "seq" | "prev_hash" | "hash" | "recorded_at" | "transfers" | "status">;
  planned: Planned[];
}> {
  const flows = await erc20Flows(d.indexed, d.config.feeRecipient, week);
  const fees = await d.ledger.feesMinedBetween(week.start, week.end);
  const reasons: string[] = [];
  const found = await ethOfWeek(d, blocks, fees, ownTxs, opts.maxTraceBlocks ?? Number.POSITIVE_INFINITY, reasons);
  const rows: TokenRow[] = [];
  const planned: Planned[] = [];
  for (const token of tokensOfWeek(d.config, flows, found.eth, prev, reasons)) {
    const flow = token === zeroAddress ? found.eth : (flows.get(token) ?? newFlow());
    const before = prev?.tokens.find((t) => lc(t.token) === lc(token));
    const t = await tokenRowOf(d, token, flow, before, found.method);
    rows.push(t.row);
    planned.push(...t.planned);
  }
  return {
    row: {
      kind: "week",
      week: { start: week.start, end: week.end, label: week.label, first_block: blocks.first, last_block: blocks.last },
      tokens: rows,
      reconciliation: reconcile(d, fees, flows, found, rows, planned, reasons),
    },
    planned,
  };
}

/**
 * The platform wallet's own transactions (split transfers of earlier rows) mined inside [first, last]: the
 * balance method adds back what they spent.
 */
export function ownTxsIn(rows: Pick<WeekRow, "transfers">[], first: number | null, last: number | null): Hex[] {
  if (first === null || last === null) return [];
  return rows.flatMap((r) => r.transfers.filter((t) => t.block >= first && t.block <= last).map((t) => t.tx_hash));
}

function ledgerAgainstChain(
  d: CloseDeps,
  fees: { token: Address; amount: bigint }[],
  flows: Map<Address, Flow>,
  ethChain: bigint | null,
  rows: TokenRow[],
): Reconciliation["ledger"] {
  const byToken = new Map<Address, bigint>();
  for (const f of fees) byToken.set(getAddress(f.token), (byToken.get(getAddress(f.token)) ?? 0n) + f.amount);
  const tokens = new Set<Address>([...byToken.keys(), ...flows.keys()]);
  return [...tokens]
    .sort(byAddress)
    .map((token) => ({
      token,
      symbol: rows.find((r) => lc(r.token) === lc(token))?.symbol ?? symbolOf(d.config, token),
      ledger: (byToken.get(token) ?? 0n).toString(),
      chain:
        token === zeroAddress
          ? ethChain === null
            ? null
            : ethChain.toString()
          : (flows.get(token)?.received ?? 0n).toString(),
    }))
    .filter((l) => l.ledger !== "0" || (l.chain !== null && l.chain !== "0"));
}

/** Tokens outside config listed in one week at most; the rest of a flood of airdropped tokens is left out. */
export const MAX_FOREIGN_TOKENS = 50;
const byAddress = (a: Address, b: Address) => (lc(a) < lc(b) ? -1 : 1);
const isCore = (config: Config, token: Address) =>
  Object.values(config.tokens).some((t) => lc(t.address) === lc(token));
const symbolOf = (config: Config, token: Address) =>
  Object.values(config.tokens).find((t) => lc(t.address) === lc(token))?.symbol ?? "?";

async function factsOf(d: CloseDeps, token: Address): Promise<{ symbol: string; decimals: number }> {
  const core = Object.values(d.config.tokens).find((t) => lc(t.address) === lc(token));
  return core ? { symbol: core.symbol, decimals: core.decimals } : tokenFacts(d.reader, token);
}
