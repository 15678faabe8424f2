import { maxUint160, parseUnits, zeroAddress, type Address } from "viem";
import type { LRUCache } from "lru-cache";
import type { Config } from "../../lib/config.js";
import { bpsOf, feeFor, type FeeClass } from "../../lib/fees.js";
import { Refusal, rpc } from "../errors/index.js";
import type { Mark, Market } from "../market/index.js";
import { aggregatorQuote, AGGREGATOR_VENUES, type AggregatorRow, type AggregatorVenue } from "../ports/aggregators.js";
import { readChainSnapshot, type CallOutcome, type ChainSnapshot } from "../ports/chainSnapshot.js";
import type { CurveTokenRow, PoolState, SqlIndexedReads } from "../ports/indexed.js";
import type { ShieldReport } from "../ports/shield.js";
import type { Tokens } from "../tokens/index.js";
import { defaultSlippageBps, evaluatePolicy, LIMITS, risk, type PolicyResult, type Risk } from "./policy.js";
import type { TradeRequest } from "./request.js";
import {
  BUILDABLE_VENUES,
  bookPoolIds,
  candidateRoutes,
  CURVE_VENUE,
  GAS,
  quoteCall,
  quoteLocally,
  readQuote,
  routeFeeBps,
  routeMidAtoms,
  type Route,
  type RouteQuote,
} from "./routing.js";
import { feeClassOf, recordRisks, type Sides, type TokenInfo, type Who } from "./sides.js";
import type { Volume } from "./volume.js";
import { msSince } from "./timing.js";
import { lc } from "../../lib/address.js";
import type { Common } from "../ports/common.js";

/** What a trading call is for: quote discloses, build/prepare/simulate plan for a wallet. */
export type Kind = "quote" | "build" | "prepare" | "simulate";

/** What the stages read and share; built once by createTrading. */
export type TradingContext = Pick<Common, "config" | "chain"> & {
  tokens: Tokens;
  market: Market;
  indexed: SqlIndexedReads;
  volume: Volume;
  sides: Sides;
  /** The last winning route per pair (quote `fast`). */
  winners: LRUCache<string, string>;
  aggregators: Partial<Record<AggregatorVenue, string>>;
  now: () => number;
};

/** A quoted route in the answer's words (SPEC "Quote route row"). */
export type RouteRow = {
  id: string;
  venue: string;
  label: string;
  ok: boolean;
  amount_out: string | null;
  vs_mid_bps: number | null;
  gas: number;
  gas_usd: number | null;
  total_bps: number | null;
  impact_bps?: number | null;
  guard_bps?: number;
  error?: string;
};
export type RankedRoute = { quote: RouteQuote; midAtoms: number | null; venueFeeBps: number; row: RouteRow };

/** The disclosure fields every quote, plan and simulation answers at its top level. */
export type FeeFields = {
  fee_bps: number;
  fee_class: FeeClass;
  fee_tier: number;
  fee_side: "input" | "output";
  fee_token: Address;
  shield: boolean;
  report?: ReturnType<typeof tradeReport>;
  shield_available?: true;
};

/** The candidate routes for the pair, and the curve token among the sides if any. */
type RouteChoice = {
  routes: Route[];
  curveSide: TokenInfo | null;
  pair: string;
  fastHit: boolean;
  aggregators: AggregatorVenue[];
};

/** Size and fee of the trade, decided before the chain is read. */
type Sizing = {
  markIn: Mark | null;
  markOut: Mark | null;
  markEth: Mark | null;
  amountIn: bigint;
  feeClass: FeeClass;
  fee: { bps: number; tier: number };
  feeSide: "input" | "output";
  feeToken: TokenInfo;
  /** The fee taken from the input (input side), else 0. */
  inputFee: bigint;
  /** What the venue swaps: the input less an input-side fee. */
  swapIn: bigint;
};

/** Everything quote, build, prepare and simulate know about a trade once its stages ran. */
export type Evaluation = Sizing & {
  tin: TokenInfo;
  tout: TokenInfo;
  snap: ChainSnapshot;
  notional: number;
  slippage: number;
  expectedOut: bigint;
  best: RankedRoute;
  rows: RankedRoute[];
  aggRows: AggregatorRow[];
  ethUsd: number | null;
  gasPrice: bigint;
  risks: Risk[];
  policy: PolicyResult;
  fees: FeeFields;
  timings: Record<string, number>;
  fastHit: boolean;
};

/** Stages shared by every kind: sides, routes, size and fee, one chain snapshot, ranking, risks, policy. */
export async function evaluate(
  ctx: TradingContext,
  r: TradeRequest,
  kind: Kind,
  who: Who | null,
  wallet: Address | null,
  synthetic = false,
): Promise<Evaluation> {
  const t0 = performance.now();
  const timings: Record<string, number> = {};
  const { tin, tout } = await ctx.sides.pair(r, who);
  timings.tokens_ms = msSince(t0);

  const t1 = performance.now();
  const choice = await chooseRoutes(ctx, r, kind, tin, tout);
  // The tier is the key's wallet's, for quotes too (a quote's fee is the fee its prepare gets).
  const tierWallet = (synthetic ? null : wallet) ?? who?.key.wallet ?? null;
  const sizing = await sizeAndFee(ctx, r, tin, tout, choice.routes, tierWallet);
  timings.routes_ms = msSince(t1);

  const t2 = performance.now();
  const { snap, aggRows } = await readChain(ctx, { tin, tout }, choice, sizing, wallet);
  timings.chain_ms = msSince(t2);

  const gasPrice = snap.baseFee > 0n ? snap.baseFee : 1n;
  const ethUsd = sizing.markEth?.usd ?? null;
  const rows = quoteRows(choice.routes, snap, sizing, tin, tout, gasPrice, ethUsd);
  // A size no venue answers is most often just too small: that is said with the minimum, not NO_ROUTE.
  if (!rows.some((x) => x.quote.ok)) assertNotUndersized(sizing, tin);
  const best = bestRoute(rows, choice.curveSide, snap);
  const expectedOut = BigInt(best.row.amount_out!);
  // A hint for `fast` requests of the next minute, whatever mix of local and chain rows chose it: a local row is at
  // most a few blocks older than a chain row, well inside the minute a winner is kept, and a plan quotes on chain.
  ctx.winners.set(choice.pair, best.row.id);

  const notional = notionalUsd(r, sizing, tin, tout, expectedOut);
  if (kind !== "quote") assertCurveFacts(best, choice.curveSide, snap, sizing);
  const { risks, reports } = await assessRisks(ctx, r, tin, tout, best, sizing);
  const slippage = r.slippage_bps ?? defaultSlippageBps(notional, sizing.feeClass);
  const policy = policyOf(r, { tin, tout }, sizing, snap, { best, risks, notional, slippage, expectedOut });
  timings.total_ms = msSince(t0);

  const fees = feeFields(ctx, r, sizing, reports);
  return {
    ...sizing,
    tin,
    tout,
    snap,
    notional,
    slippage,
    expectedOut,
    best,
    rows,
    aggRows,
    ethUsd,
    gasPrice,
    risks,
    policy,
    fees,
    timings,
    fastHit: choice.fastHit,
  };
}

/**
 * One chain snapshot (the routes' quotes, the curve, the stocks, the wallet) and the aggregators'
 * quotes, read at once; SANCTIONED for a sanctioned wallet, RPC_UNAVAILABLE when the list is unread.
 */
async function readChain(
  ctx: TradingContext,
  { tin, tout }: TradeSides,
  choice: RouteChoice,
  sizing: Sizing,
  wallet: Address | null,
) {
  const stocks = [tin, tout].filter((t) => t.stock);
  // A plan (a wallet's prepare) takes its quotes from the chain, in the snapshot its checks and simulation follow:
  // its amount_out_min never comes from a state older than the block it is built at. Quotes alone may be local.
  const local = wallet
    ? { outcomes: choice.routes.map((): CallOutcome | null => null), head: null }
    : await localOutcomes(ctx, choice.routes, sizing.swapIn);
  const remote = choice.routes.filter((_, i) => !local.outcomes[i]);
  // Every route answered from the book and nothing else to read: no round trip (issue 31 point 2).
  const offChain = !remote.length && !choice.curveSide && !stocks.length && !wallet && local.head !== null;
  const [read, aggRows] = await Promise.all([
    offChain
      ? null
      : readChainSnapshot(ctx.chain, ctx.config, {
          calls: remote.map((x) =>
            quoteCall(x, sizing.swapIn, {
              v4Quoter: ctx.config.contracts.v4Quoter,
              launchpad: ctx.config.contracts.launchpad,
            }),
          ),
          curveToken: choice.curveSide?.address ?? null,
          stockTokens: stocks.map((s) => s.address),
          wallet: wallet
            ? {
                address: wallet,
                tokens: [tin.address, tout.address],
                inputToken: tin.address === zeroAddress ? null : tin.address,
                withDelegation: choice.curveSide !== null,
              }
            : null,
        }),
    Promise.all(
      choice.aggregators.map((venue) =>
        aggregatorQuote({
          venue,
          url: ctx.aggregators[venue],
          chainId: ctx.config.chainId,
          sellToken: tin.address,
          buyToken: tout.address,
          sellAmount: sizing.amountIn,
        }),
      ),
    ),
  ]);
  const head = local.head!;
  const snap: ChainSnapshot = read
    ? { ...read, calls: mergeCalls(local.outcomes, read.calls) }
    : {
        block: BigInt(head.block),
        time: head.time,
        baseFee: head.baseFee,
        calls: mergeCalls(local.outcomes, []),
        curve: null,
        stock: null,
        wallet: null,
      };
  if (wallet && snap.wallet?.sanctioned)
    throw new Refusal("SANCTIONED", `wallet ${wallet} is on the sanctions list`, { address: wallet, field: "wallet" });
  if (wallet && snap.wallet?.sanctioned === null)
    throw new Refusal("RPC_UNAVAILABLE", "the sanctions list could not be read", {}, { retryAfterS: 2 });
  return { snap, aggRows };
}

/**
 * Each route's quote from the indexer's pool book where it is fresh and the route is ours to
 * compute (hookless v4 pools, lib/localQuote); null where the chain must answer (the V4Quoter, the
 * curve). `head`: the chain's head the book was judged against, when there is a book.
 */
async function localOutcomes(ctx: TradingContext, routes: Route[], amountIn: bigint) {
  // The book is asked only for the routes' hookless pools: none, no read (a curve pair, hooked pools).
  const ids = bookPoolIds(routes);
  const fresh = ids.length ? await ctx.market.book(ids) : null;
  const outcomes = await Promise.all(routes.map((x) => quoteLocally(x, amountIn, fresh?.book ?? null)));
  return { outcomes, head: fresh ? fresh.head : null };
}

/** The routes' outcomes in route order: the local ones, the chain's answers in the gaps. */
function mergeCalls(local: (CallOutcome | null)[], chain: CallOutcome[]): CallOutcome[] {
  let j = 0;
  return local.map((o) => o ?? chain[j++]!);
}

type TradeSides = { tin: TokenInfo; tout: TokenInfo };
type Ranked = { best: RankedRoute; risks: Risk[]; notional: number; slippage: number; expectedOut: bigint };

/** The policy's verdict on the ranked trade (SPEC "Risk and policy"). */
function policyOf(r: TradeRequest, { tin, tout }: TradeSides, sizing: Sizing, snap: ChainSnapshot, k: Ranked) {
  const stocks = [tin, tout].filter((t) => t.stock);
  return evaluatePolicy({
    notionalUsd: k.notional,
    tierLimitUsd: Math.min(tin.tierLimitUsd, tout.tierLimitUsd),
    slippageBps: k.slippage,
    feeBps: sizing.fee.bps,
    maxFeeBps: r.max_fee_bps ?? null,
    approval:
      tin.address !== zeroAddress
        ? {
            mode: r.approval_mode,
            budgetUsd: r.approval_budget_usd,
            allowUnlimited: r.allow_unlimited_approval,
            unlimitedInPlace: (snap.wallet?.allowanceToPermit2 ?? 0n) >= maxUint160,
          }
        : null,
    stock: stocks.length
      ? {
          attests: r.owner_attests_non_us,
          paused: snap.stock?.registryPaused === true || stocks.some((s) => snap.stock?.paused[lc(s.address)] === true),
          walletBlocked: snap.wallet?.stockBlocked === true,
          symbols: stocks.map((s) => s.symbol),
        }
      : null,
    risks: k.risks,
    acceptRisks: r.accept_risks,
    shield: { on: r.shield, policies: r.policies },
    vsMidBps: k.best.row.vs_mid_bps,
    midRequired: true,
    vsRefBps: vsReference(tin, tout, sizing, k.best),
    minAmountOut: r.min_amount_out !== undefined ? BigInt(r.min_amount_out) : null,
    expectedOut: k.expectedOut,
  });
}

/** The fee's disclosure fields, and the shield's report (or that one is available). */
function feeFields(
  ctx: TradingContext,
  r: TradeRequest,
  sizing: Sizing,
  reports: Parameters<typeof tradeReport>[0],
): FeeFields {
  return {
    fee_bps: sizing.fee.bps,
    fee_class: sizing.feeClass,
    fee_tier: sizing.fee.tier,
    fee_side: sizing.feeSide,
    fee_token: sizing.feeToken.address,
    shield: r.shield,
    ...(r.shield ? { report: tradeReport(reports, ctx.now()) } : { shield_available: true as const }),
  };
}

/**
 * Candidate routes: indexed pools (plus pools the universe names that the indexer has not seen
 * yet), the launchpad curve for a curve token, narrowed by route_id or by the pair's recent winner.
 * NO_ROUTE when no venue trades the pair; curve refusals when the curve is the only way.
 */
async function chooseRoutes(
  ctx: TradingContext,
  r: TradeRequest,
  kind: Kind,
  tin: TokenInfo,
  tout: TokenInfo,
): Promise<RouteChoice> {
  const venues = (r.venues ?? [...BUILDABLE_VENUES]).filter((v) => (BUILDABLE_VENUES as readonly string[]).includes(v));
  const aggregators = (r.venues ?? []).filter((v): v is AggregatorVenue =>
    (AGGREGATOR_VENUES as readonly string[]).includes(v),
  );
  const pools = withUniversePools(await rpc(ctx.market.pools()), ctx.config);
  const curveSide =
    [tin, tout].find((t) => !t.core && (t.record?.flags as { on_curve?: boolean } | undefined)?.on_curve) ?? null;
  const curveRow: CurveTokenRow | null = curveSide ? await ctx.indexed.curveToken(curveSide.address) : null;
  let routes = candidateRoutes({
    pools,
    currencyIn: tin.currency,
    currencyOut: tout.currency,
    connectors: [ctx.config.tokens.USDG!.address, zeroAddress],
    venues,
    // The indexer may not have seen a brand-new curve yet: the chain's own reading (in the
    // snapshot) decides graduation and the snipe window.
    curveToken: curveSide && !curveRow?.graduated ? curveSide.address : null,
  });
  if (curveSide && routes.length === 0) {
    if (curveRow?.graduated)
      throw new Refusal(
        "CURVE_GRADUATED",
        `${curveSide.symbol} has graduated from the launchpad curve and has no pool yet`,
      );
    if (tin.currency !== zeroAddress && tout.currency !== zeroAddress)
      throw new Refusal("CURVE_PAIR", `${curveSide.symbol} trades on its launchpad curve only against ETH`);
  }
  if (r.route_id !== undefined) {
    if ((AGGREGATOR_VENUES as readonly string[]).includes(r.route_id) && kind !== "quote")
      throw new Refusal("QUOTE_ONLY", `${r.route_id} is quoted for comparison only; it is never built`);
    routes = routes.filter((x) => x.id === r.route_id);
    if (!routes.length)
      throw new Refusal("NO_ROUTE", `route ${r.route_id} is not among the current routes for this pair`);
  }
  // fast: quote the pair's recent winner alone when it is still a candidate (one quote, not all).
  const pair = `${lc(tin.address)}>${lc(tout.address)}`;
  const recent = ctx.winners.get(pair);
  const fastHit = r.fast && r.route_id === undefined && recent !== undefined && routes.some((x) => x.id === recent);
  if (fastHit) routes = routes.filter((x) => x.id === recent);
  if (!routes.length)
    throw new Refusal("NO_ROUTE", `no venue trades ${tin.symbol || tin.address} for ${tout.symbol || tout.address}`);
  return { routes, curveSide, pair, fastHit, aggregators };
}

/** Pools the universe names but the indexer has not seen yet: quotable, mid unknown. */
function withUniversePools(indexed: PoolState[], config: Config): PoolState[] {
  const pools = [...indexed];
  for (const p of config.pools) {
    if (!pools.some((x) => lc(x.id) === lc(p.id)))
      pools.push({
        id: p.id,
        currency0: p.currency0,
        currency1: p.currency1,
        fee: p.fee,
        tickSpacing: p.tickSpacing,
        hooks: p.hooks,
        sqrtPriceX96: 0n,
        priceX96: 0n,
        tick: 0,
        liquidity: 1n,
        swaps: 0,
        block: 0,
        timestamp: 0,
      });
  }
  return pools;
}

/**
 * The fee side ranks the more liquid, marked token of the pair (ETH/WETH/USDG, then oracle-marked
 * majors, then other core, then the rest); input on a tie.
 */
const feeSideRank = (t: TokenInfo) =>
  t.currency === zeroAddress || (t.symbol === "USDG" && t.core) ? 3 : t.core && t.feed ? 2 : t.core ? 1 : 0;

/** Marks, the input amount (from notional_usd at the input's mark), the fee class, tier and side. */
async function sizeAndFee(
  ctx: TradingContext,
  r: TradeRequest,
  tin: TokenInfo,
  tout: TokenInfo,
  routes: Route[],
  tierWallet: Address | null,
): Promise<Sizing> {
  const [markIn, markOut, markEth] = await rpc(
    Promise.all([
      ctx.market.mark(tin.address, tin.decimals),
      ctx.market.mark(tout.address, tout.decimals),
      ctx.market.mark(zeroAddress),
    ]),
  );
  let amountIn: bigint;
  if (r.amount_in !== undefined) amountIn = BigInt(r.amount_in);
  else {
    if (!markIn)
      throw new Refusal(
        "NO_MARK",
        `no price for ${tin.symbol || tin.address}: send amount_in instead of notional_usd`,
        {},
        { retryAfterS: 5 },
      );
    amountIn = parseUnits((r.notional_usd! / markIn.usd).toFixed(tin.decimals), tin.decimals);
    if (amountIn === 0n)
      throw new Refusal(
        "MIN_NOTIONAL",
        `notional_usd ${r.notional_usd} is zero atoms of ${tin.symbol || tin.address}: ` +
          `trades are at least $${LIMITS.minNotionalUsd}`,
      );
  }
  const feeClass: FeeClass = feeClassOf(tin, tout);
  const volumeUsd = tierWallet && feeClass === "major" ? await ctx.volume.usd30d(tierWallet) : 0;
  const fee = feeFor({ feeClass, volume30dUsd: volumeUsd, shield: r.shield });
  const curveOnly = routes.every((x) => x.venue === CURVE_VENUE);
  const feeSide: "input" | "output" = curveOnly
    ? tin.currency === zeroAddress
      ? "input"
      : "output"
    : feeSideRank(tin) >= feeSideRank(tout)
      ? "input"
      : "output";
  const inputFee = feeSide === "input" ? bpsOf(amountIn, fee.bps) : 0n;
  return {
    markIn,
    markOut,
    markEth,
    amountIn,
    feeClass,
    fee,
    feeSide,
    feeToken: feeSide === "input" ? tin : tout,
    inputFee,
    swapIn: amountIn - inputFee,
  };
}

/**
 * A route's gas in USD and its cost against the mid in bps: what the whole input would buy at the
 * mid, against the output net of gas (our fee is already out of `amountOut`). Ranks routes.
 */
export function costVsMid(p: {
  amountOut: number;
  gas: number | null;
  amountIn: bigint;
  midAtoms: number | null;
  gasPrice: bigint;
  ethUsd: number | null;
  markOut: Mark | null;
  outDecimals: number;
}) {
  const gasUsd = p.gas !== null && p.ethUsd !== null ? ((p.gas * Number(p.gasPrice)) / 1e18) * p.ethUsd : null;
  const outUnitUsd = p.markOut ? p.markOut.usd / 10 ** p.outDecimals : null;
  const net = p.amountOut - (gasUsd !== null && outUnitUsd ? gasUsd / outUnitUsd : 0);
  const ideal = p.midAtoms ? Number(p.amountIn) * p.midAtoms : null;
  return {
    gasUsd: gasUsd === null ? null : Math.round(gasUsd * 1e6) / 1e6,
    totalBps: ideal ? Math.round((1 - net / ideal) * 10_000) : null,
  };
}

/** Every route's quote from the snapshot, in the answer's words, with its mid, impact and cost. */
function quoteRows(
  routes: Route[],
  snap: ChainSnapshot,
  s: Sizing,
  tin: TokenInfo,
  tout: TokenInfo,
  gasPrice: bigint,
  ethUsd: number | null,
): RankedRoute[] {
  const curve = snap.curve;
  return routes.map((route, i) => {
    const o = snap.calls[i]!;
    const q = readQuote(
      route,
      o.ok ? { status: "success", result: o.result } : { status: "failure", error: new Error(o.error) },
    );
    const gross = q.amountOut;
    let amountOut = s.feeSide === "output" && route.venue !== CURVE_VENUE ? gross - bpsOf(gross, s.fee.bps) : gross;
    if (route.venue === CURVE_VENUE && !route.buy) amountOut = gross - bpsOf(gross, s.fee.bps);
    const midAtoms = routeMidAtoms(
      route,
      curve?.state ? { virtualEth: curve.state.virtualEth, virtualToken: curve.state.virtualToken } : undefined,
    );
    const vsMid = q.ok && midAtoms ? Math.round((Number(gross) / (Number(s.swapIn) * midAtoms) - 1) * 10_000) : null;
    const venueFeeBps =
      route.venue === CURVE_VENUE
        ? curve?.fees
          ? Number(curve.fees.protocol + curve.fees.creator + curve.fees.snipe)
          : 0
        : routeFeeBps(route);
    const extraGas =
      GAS.tx +
      (route.venue === CURVE_VENUE
        ? 0n
        : GAS.router +
          GAS.fee +
          (tin.address !== zeroAddress ? GAS.pullErc20 : 0n) +
          (tin.currency !== tin.address || tout.currency !== tout.address ? GAS.wrap : 0n));
    const gas = q.ok ? q.gas + extraGas : 0n;
    const { gasUsd, totalBps } = costVsMid({
      amountOut: Number(amountOut),
      gas: Number(gas),
      amountIn: s.amountIn,
      midAtoms,
      gasPrice,
      ethUsd,
      markOut: s.markOut,
      outDecimals: tout.decimals,
    });
    const impact = vsMid !== null ? Math.max(0, -vsMid - Math.round(venueFeeBps)) : null;
    return {
      quote: q,
      midAtoms,
      venueFeeBps,
      row: {
        id: route.id,
        venue: route.venue,
        label: route.label,
        ok: q.ok,
        amount_out: q.ok ? amountOut.toString() : null,
        vs_mid_bps: vsMid,
        gas: Number(gas),
        gas_usd: gasUsd,
        total_bps: q.ok ? totalBps : null,
        ...(!tin.core || !tout.core ? { impact_bps: impact, guard_bps: LIMITS.maxVsMidBps } : {}),
        ...(q.error ? { error: q.error } : {}),
      },
    };
  });
}

/**
 * The cheapest route that answered. With none: CURVE_GRADUATED for a graduated curve, VENUE_FAILED
 * (502, retryable) when a venue's read failed, NO_ROUTE when every venue answered but gives nothing
 * for this size.
 */
function bestRoute(rows: RankedRoute[], curveSide: TokenInfo | null, snap: ChainSnapshot): RankedRoute {
  const ranked = rows
    .filter((x) => x.quote.ok)
    .sort(
      (a, b) =>
        (a.row.total_bps ?? 1e9) - (b.row.total_bps ?? 1e9) ||
        (BigInt(b.row.amount_out!) > BigInt(a.row.amount_out!) ? 1 : -1),
    );
  if (ranked[0]) return ranked[0];
  if (curveSide && snap.curve?.state?.graduated)
    throw new Refusal("CURVE_GRADUATED", `${curveSide.symbol} has graduated from the launchpad curve`);
  const failed = rows.filter((x) => x.quote.failed);
  if (failed.length)
    throw new Refusal(
      "VENUE_FAILED",
      `the venue quote failed: ${failed.map((x) => `${x.row.id}: ${x.quote.error}`).join("; ")}`,
      {},
      { retryAfterS: 2 },
    );
  throw new Refusal(
    "NO_ROUTE",
    `no route gives any output for this size: ${
      rows
        .map((x) => x.quote.error)
        .filter(Boolean)
        .join("; ") || "no output"
    }`,
  );
}

/**
 * MIN_NOTIONAL naming the minimum, in dollars and in the input's atoms, for an input worth less than
 * SPEC's minimum at its mark (a 1-wei trade): no venue gives it any output, and NO_ROUTE would send
 * the caller looking for another venue rather than a larger amount. Without a mark it is not judged.
 */
export function assertNotUndersized(
  s: Pick<Sizing, "amountIn" | "markIn">,
  tin: Pick<TokenInfo, "symbol" | "address" | "decimals">,
) {
  if (!s.markIn || !(s.markIn.usd > 0)) return;
  const usd = (Number(s.amountIn) / 10 ** tin.decimals) * s.markIn.usd;
  if (usd >= LIMITS.minNotionalUsd) return;
  const min = LIMITS.minNotionalUsd;
  const atoms = parseUnits((min / s.markIn.usd).toFixed(tin.decimals), tin.decimals) + 1n;
  throw new Refusal(
    "MIN_NOTIONAL",
    `the trade is $${usd.toFixed(usd < 0.01 ? 6 : 2)} (${s.amountIn} atoms of ${tin.symbol || tin.address}), below ` +
      `the $${min} minimum: send amount_in of at least ${atoms} atoms, or notional_usd of at least ${min}`,
  );
}

/** Notional (fee included): the request's dollars, else the input at its mark, else the output at its mark. */
function notionalUsd(r: TradeRequest, s: Sizing, tin: TokenInfo, tout: TokenInfo, expectedOut: bigint): number {
  if (r.notional_usd !== undefined) return r.notional_usd;
  if (s.markIn) return (Number(s.amountIn) / 10 ** tin.decimals) * s.markIn.usd;
  if (s.markOut) return (Number(expectedOut) / 10 ** tout.decimals) * s.markOut.usd;
  throw new Refusal(
    "NO_MARK",
    "neither token has a price: the trade's dollar size cannot be checked",
    {},
    { retryAfterS: 5 },
  );
}

/** Curve refusals that are facts of the chain, not policy (graduated, snipe tax, a fee of zero, a graduating buy). */
export function assertCurveFacts(best: RankedRoute, curveSide: TokenInfo | null, snap: ChainSnapshot, s: Sizing): void {
  const route = best.quote.route;
  if (route.venue !== CURVE_VENUE) return;
  const curve = snap.curve;
  // Graduation, the snipe tax and the graduation level decide whether the trade may go: unread, it may not.
  if (!curve?.state || !curve.fees || curve.graduationWei === null)
    throw new Refusal(
      "VENUE_FAILED",
      `the launchpad curve of ${curveSide?.symbol || route.token} could not be read`,
      {},
      { retryAfterS: 2 },
    );
  if (curve.state.graduated)
    throw new Refusal("CURVE_GRADUATED", `${curveSide!.symbol} has graduated from the launchpad curve`);
  if (curve.fees.snipe > 0n) {
    const left = Math.max(1, 60 - (snap.time - Number(curve.state.launchedAt)));
    throw new Refusal(
      "SNIPE_TAX",
      `the launch snipe tax (${curve.fees.snipe} bps) is still on; retry in about ${left} s`,
      {},
      { retryAfterS: 60 },
    );
  }
  const ourFee = route.buy ? s.inputFee : bpsOf(best.quote.amountOut, s.fee.bps);
  if (ourFee === 0n) throw new Refusal("FEE_TOO_SMALL", "the service fee rounds to zero at this size; trade more");
  if (route.buy) {
    const curveFee = bpsOf(s.swapIn, Number(curve.fees.protocol + curve.fees.creator + curve.fees.snipe));
    if (curve.state.realEth + s.swapIn - curveFee >= curve.graduationWei)
      throw new Refusal("CURVE_GRADUATED", "this buy would graduate the curve with a partial fill; buy less");
  }
}

/** Risks: both tokens' screens, the route's impact, stale marks, Shield's verdicts; severe first. */
async function assessRisks(
  ctx: TradingContext,
  r: TradeRequest,
  tin: TokenInfo,
  tout: TokenInfo,
  best: RankedRoute,
  s: Sizing,
): Promise<{ risks: Risk[]; reports: Record<string, ShieldReport> }> {
  const risks: Risk[] = recordRisks(tin, tout);
  const impact = best.row.vs_mid_bps !== null ? Math.max(0, -best.row.vs_mid_bps - Math.round(best.venueFeeBps)) : 0;
  if (impact >= LIMITS.highPriceImpactBps)
    risks.push(risk("HIGH_PRICE_IMPACT", `this size moves the price about ${impact} bps`));
  else if (impact >= LIMITS.priceImpactBps)
    risks.push(risk("PRICE_IMPACT", `this size moves the price about ${impact} bps`));
  for (const [t, m] of [
    [tin, s.markIn],
    [tout, s.markOut],
  ] as const)
    if (m?.stale) risks.push(risk("STALE_MARK", `the oracle mark is ${m.age_s} s old`, t.symbol));
  const reports: Record<string, ShieldReport> = {};
  if (r.shield)
    for (const t of [tin, tout].filter((x) => !x.core)) reports[lc(t.address)] = await ctx.tokens.report(t.address);
  for (const [addr, rep] of Object.entries(reports))
    if (rep.verdict !== "verified") risks.push(risk("UNVERIFIED", `Shield verdict: ${rep.verdict}`, addr));
  risks.sort((a, b) => (a.severity === b.severity ? 0 : a.severity === "severe" ? -1 : 1));
  return { risks, reports };
}

/** The route's price against the oracle reference when both sides have one (pool fees taken out). */
function vsReference(tin: TokenInfo, tout: TokenInfo, s: Sizing, best: RankedRoute): number | null {
  if (!(tin.feed && tout.feed && s.markIn && s.markOut) || best.quote.route.venue === CURVE_VENUE) return null;
  const refAtoms = (s.markIn.usd / s.markOut.usd) * 10 ** (tout.decimals - tin.decimals);
  return Math.round((Number(best.quote.amountOut) / (Number(s.swapIn) * refAtoms) - 1) * 10_000 + best.venueFeeBps);
}

const VERDICT_ORDER = { flagged: 0, unverified: 1, verified: 2 } as const;
/**
 * A trade's Shield report: the token record's fields ({verdict, url, source, checked_at}) of its
 * worst verdict, plus every token's own under `tokens`. Core assets get no verdict; a trade of
 * core assets only reports verdict null (never "verified" without a verdict).
 */
export function tradeReport(reports: Record<string, ShieldReport>, now: number) {
  const worst = Object.values(reports).sort((a, b) => VERDICT_ORDER[a.verdict] - VERDICT_ORDER[b.verdict])[0];
  return worst
    ? { ...worst, tokens: reports }
    : { verdict: null, url: null, source: "core assets only", checked_at: now, tokens: {} };
}

/** Markers for answers: a mark as the answer shows it. */
export const markView = (m: Mark | null) =>
  m ? { usd: m.usd, source: m.source, age_s: m.age_s, stale: m.stale } : null;
