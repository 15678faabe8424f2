import { onClock } from "../../lib/cacheClock.js";
import { cappedMulticall } from "../../lib/chain.js";
import { LRUCache } from "lru-cache";
import { formatUnits, getAddress, type Address } from "viem";
import { erc20Abi } from "../../abis/erc20.js";
import { multicall3Abi } from "../../abis/multicall3.js";
import type { TokenEntry } from "../../lib/config.js";
import { Refusal, rpc } from "../errors/index.js";
import type { IndependentMark, Mark, Market, Unpriced } from "../market/index.js";
import type { Ledger, Volume, VolumeTier } from "../trading/index.js";
import { lc } from "../../lib/address.js";
import type { Common } from "../ports/common.js";

/** One answer per wallet is reused this long (SPEC.md "Limits": Portfolio reused 5 s). */
export const PORTFOLIO_TTL_MS = 5_000;
/** At most this many address-named tokens, the most recently traded first. */
export const PORTFOLIO_MAX_TRADED = 40;

export type HoldingKind = "native" | "core" | "stock" | "token";

/** SPEC.md "Holding (me/portfolio)". */
export type Holding = {
  token: string;
  address: Address;
  symbol: string;
  name: string;
  decimals: number;
  kind: HoldingKind;
  amount_atoms: string;
  amount: string;
  priced: boolean;
  price_usd: number | null;
  value_usd: number | null;
  mark: Mark | null;
  unpriced: Unpriced | null;
};

/** A held token the answer leaves out of total_usd, and why. */
export type UnpricedRow = { token: string; address: Address; code: Unpriced };
/** A balance that could not be read at the answer's block. */
export type UnreadRow = { token: string; address: Address; reason: string };

export type PortfolioBody = {
  wallet: string;
  block: number;
  read_at: number;
  holdings: Holding[];
  total_usd: number;
  /** The `token` of every holding counted in total_usd. */
  priced: string[];
  unpriced: UnpricedRow[];
  unread: UnreadRow[];
  volume: VolumeTier;
};
export type Portfolio = PortfolioBody & { cached: boolean };

export type PortfolioDeps = Pick<Common, "config" | "chain" | "clock"> & {
  market: Pick<Market, "independentMark">;
  ledger: Pick<Ledger, "tradedTokens">;
  volume: Pick<Volume, "tier">;
};

/** A token the answer reads: core assets from config, traded ones by address (metadata read too). */
type Wanted = { token: string; address: Address; kind: HoldingKind; core: TokenEntry | null };
/** What one token's reads gave at the pinned block. */
type Read = { atoms: bigint; symbol: string; name: string; decimals: number } | { failed: string };

const round6 = (x: number) => Math.round(x * 1e6) / 1e6;

/** Address-named tokens have no independent mark (SPEC.md me/portfolio): no read needed. */
const noMark: Promise<IndependentMark> = Promise.resolve({ mark: null, unpriced: "NO_INDEPENDENT_MARK" });

/** Indexed reads (marks, volume) and the app store failing are the trading layer being down. */
async function live<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (err) {
    // A store failing closed (ENGINE_UNAVAILABLE) is, for this route, the trading layer down.
    if (err instanceof Refusal && err.code !== "ENGINE_UNAVAILABLE") throw err;
    throw new Refusal(
      "LIVE_UNAVAILABLE",
      "marks or trade history could not be read; retry shortly",
      {},
      { cause: err, retryAfterS: 5 },
    );
  }
}

function coreWanted(d: PortfolioDeps): Wanted[] {
  return Object.values(d.config.tokens).map((t) => ({
    token: t.symbol,
    address: t.address,
    kind: t.native ? "native" : t.kind === "stock" ? "stock" : "core",
    core: t,
  }));
}

async function tradedWanted(d: PortfolioDeps, wallet: Address): Promise<Wanted[]> {
  const traded = await live(
    d.ledger.tradedTokens(
      wallet,
      Object.values(d.config.tokens).map((t) => t.address),
      PORTFOLIO_MAX_TRADED,
    ),
  );
  return traded.map((a) => ({ token: lc(a), address: getAddress(a), kind: "token", core: null }));
}

/** One token's calls: ETH through Multicall3; a token's balanceOf, plus its metadata when address-named. */
function callsFor(d: PortfolioDeps, wallet: Address, w: Wanted) {
  return w.core?.native
    ? [
        {
          address: d.config.contracts.multicall3,
          abi: multicall3Abi,
          functionName: "getEthBalance",
          args: [wallet],
        } as const,
      ]
    : [
        { address: w.address, abi: erc20Abi, functionName: "balanceOf", args: [wallet] } as const,
        ...(w.core
          ? []
          : ([
              { address: w.address, abi: erc20Abi, functionName: "decimals" },
              { address: w.address, abi: erc20Abi, functionName: "symbol" },
              { address: w.address, abi: erc20Abi, functionName: "name" },
            ] as const)),
      ];
}

type CallResult = Awaited<ReturnType<typeof cappedMulticall>>[number];

/** One token's results (balance, then decimals, symbol, name when address-named) as a Read. */
function readOf(w: Wanted, mine: CallResult[]): Read {
  const [balance, decimals, symbol, name] = mine;
  if (balance!.status !== "success")
    return { failed: `balance unreadable: ${balance!.error.message.split("\n")[0]!.slice(0, 120)}` };
  if (w.core)
    return {
      atoms: balance!.result as bigint,
      symbol: w.core.symbol,
      name: w.core.name,
      decimals: w.core.decimals,
    };
  if (decimals!.status !== "success") return { failed: "decimals() unreadable: the amount cannot be scaled" };
  const text = (r: CallResult | undefined) => (r?.status === "success" ? String(r.result) : "");
  return {
    atoms: balance!.result as bigint,
    symbol: text(symbol),
    name: text(name),
    decimals: Number(decimals!.result),
  };
}

/** Every balance (and traded tokens' metadata) in one eth_call at `blockNumber`. */
async function readAt(d: PortfolioDeps, wallet: Address, wanted: Wanted[], blockNumber: bigint): Promise<Read[]> {
  const perToken = wanted.map((w) => callsFor(d, wallet, w));
  // batchSize 0: one aggregate call, never split into chunks that could straddle blocks.
  // Capped (lib/chain cappedMulticall): address-named tokens are code the service does not control.
  const results = await rpc(cappedMulticall(d.chain, { contracts: perToken.flat(), blockNumber }));
  let next = 0;
  return wanted.map((w, n) => {
    const mine = results.slice(next, next + perToken[n]!.length);
    next += mine.length;
    return readOf(w, mine);
  });
}

function holdingOf(w: Wanted, r: Exclude<Read, { failed: string }>, m: IndependentMark): Holding {
  const amount = formatUnits(r.atoms, r.decimals);
  const value = m.mark ? round6(Number(amount) * m.mark.usd) : null;
  return {
    token: w.token,
    address: w.address,
    symbol: r.symbol,
    name: r.name,
    decimals: r.decimals,
    kind: w.kind,
    amount_atoms: r.atoms.toString(),
    amount,
    priced: m.mark !== null,
    price_usd: m.mark?.usd ?? null,
    value_usd: value,
    mark: m.mark,
    unpriced: m.unpriced,
  };
}

/** One fresh answer for `wallet` (see createPortfolio). */
async function buildPortfolio(d: PortfolioDeps, wallet: Address): Promise<PortfolioBody> {
  const wanted = [...coreWanted(d), ...(await tradedWanted(d, wallet))];
  // The block first, then every read pinned to it: amounts are one consistent picture.
  const blockNumber = await rpc(d.chain.getBlockNumber({ cacheTime: 0 }));
  const reads = await readAt(d, wallet, wanted, blockNumber);
  const held = wanted.flatMap((w, i) => {
    const r = reads[i]!;
    return "failed" in r || r.atoms === 0n ? [] : [{ w, r }];
  });
  const [marks, volume] = await live(
    Promise.all([
      Promise.all(held.map(({ w }) => (w.core ? d.market.independentMark(w.address) : noMark))),
      d.volume.tier(wallet),
    ]),
  );
  const holdings = held.map(({ w, r }, i) => holdingOf(w, r, marks[i]!));
  const priced = holdings.filter((h) => h.priced);
  return {
    wallet: lc(wallet),
    block: Number(blockNumber),
    read_at: Math.floor(d.clock() / 1000),
    holdings,
    total_usd: round6(priced.reduce((sum, h) => sum + h.value_usd!, 0)),
    priced: priced.map((h) => h.token),
    unpriced: holdings.flatMap((h) => (h.unpriced ? [{ token: h.token, address: h.address, code: h.unpriced }] : [])),
    unread: wanted.flatMap((w, i) => {
      const r = reads[i]!;
      return "failed" in r ? [{ token: w.token, address: w.address, reason: r.failed }] : [];
    }),
    volume,
  };
}

/**
 * GET /me/portfolio: the wallet's balances of ETH, the core assets (stock tokens included) and up
 * to 40 address-named tokens it traded through the service, all read in one multicall pinned at
 * one block, valued only at independent marks (market's rule: USDG $1, feeds, the partner token's
 * TWAP). Holdings list nonzero balances only: a token read as zero is left out (absent means zero
 * at `block`), while a balance that could not be read is listed under `unread`, never as zero.
 */
export function createPortfolio(d: PortfolioDeps) {
  const answers = new LRUCache<string, PortfolioBody>({
    max: 10_000,
    ttl: PORTFOLIO_TTL_MS,
    ...onClock(d.clock),
    fetchMethod: (wallet) => buildPortfolio(d, wallet as Address),
  });
  return {
    /** The wallet's portfolio; `cached` when the answer was built for an earlier call (within 5 s). */
    async get(wallet: Address): Promise<Portfolio> {
      const status: LRUCache.Status<string, PortfolioBody> = {};
      const body = await answers.fetch(lc(wallet), { status });
      return { ...body!, cached: status.fetch === "hit" || status.fetch === "inflight" };
    },
  };
}

export type PortfolioService = ReturnType<typeof createPortfolio>;
