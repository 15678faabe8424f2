import { getAddress, parseUnits, zeroAddress, type Address, type PublicClient } from "viem";
import { erc20Abi } from "../../abis/erc20.js";
import { beaconAbi, launchpadAbi, partnerAgentVaultAbi, stockTokenAbi } from "../../abis/fixtures.js";
import type { Config, TokenEntry } from "../../lib/config.js";
import { fencedRead } from "../../lib/chain.js";
import { RISKS, type RiskCode } from "../../lib/risks.js";
import { Q96 } from "../../lib/v4.js";
import { BEACON_SLOT, IMPL_SLOT, slotAddress } from "../../lib/eip1967.js";
import { Refusal } from "../errors/index.js";
import { deepestPool, independentBasis, TWAP_WINDOW_S } from "../market/index.js";
import type { SqlIndexedReads, PoolState } from "../ports/indexed.js";
import { probeBuySell, type Probe } from "../ports/simulation.js";
import { lc } from "../../lib/address.js";
import type { Common } from "../ports/common.js";

export const TIER_LIMITS = { A: 10_000, B: 2_500, C: 500, blocked: 0 } as const;
const B_MIN_LIQUIDITY_USD = 250_000;

export type Risk = { code: RiskCode; severity: "severe" | "info"; detail: string };
export type TokenRecord = Record<string, unknown> & {
  address: Address;
  symbol: string;
  name: string;
  kind: string;
  tier: string;
  stock_beacon: boolean;
  risks: Risk[];
};

/**
 * What a screen reads: the trusted chain client, the fenced `reader` for the token's own code
 * (lib/chain createUntrustedReader), indexed pools and marks, the core assets by lowercase address,
 * and the time in seconds the record is stamped with.
 */
export type ScreenContext = Pick<Common, "config" | "chain"> & {
  reader: PublicClient;
  indexed: SqlIndexedReads;
  coreByAddress: Map<string, TokenEntry>;
  now: () => number;
};

/** A pool with its quote asset (USDG, or ETH at its mark) and its depth in USD. */
export type QuotedPool = { pool: PoolState; quote: TokenEntry; liquidity: number };

type Fenced<T> = { status: "success"; result: T } | { status: "failure" };
type Erc20Reads = {
  name: Fenced<string>;
  symbol: Fenced<string>;
  decimals: { status: "success"; result: number };
  supply: Fenced<bigint>;
};

export const poolVenue = (p: PoolState) => ({
  type: "v4-pool",
  pool_id: p.id,
  currency0: p.currency0,
  currency1: p.currency1,
  fee: p.fee,
  tick_spacing: p.tickSpacing,
  hooks: p.hooks,
});

/** A core asset's record kind: the issuer's stocks are `stock`, the rest `core`. */
export const coreKind = (t: TokenEntry) => (t.kind === "stock" ? "stock" : "core");

/** Risks in the order a screen finds them (the record sorts them by severity, stably). */
function riskList() {
  const risks: Risk[] = [];
  const add = (c: RiskCode, detail: string) => void risks.push({ code: c, severity: RISKS[c], detail });
  return { risks, add };
}

/** A proxy's implementation: through its beacon when the beacon slot names one, else the EIP-1967 slot. */
export async function implementationOf(
  ctx: ScreenContext,
  address: Address,
): Promise<{ impl: Address | null; beacon: Address | null }> {
  const [implSlot, beaconSlot] = await Promise.all([
    ctx.chain.getStorageAt({ address, slot: IMPL_SLOT }),
    ctx.chain.getStorageAt({ address, slot: BEACON_SLOT }),
  ]);
  const beacon = slotAddress(beaconSlot);
  if (beacon) {
    // The beacon is whatever the token's slot names: its code is fenced like the token's.
    const impl = await fencedRead(ctx.reader, { address: beacon, abi: beaconAbi, functionName: "implementation" });
    return { impl: impl.status === "success" ? getAddress(impl.result) : null, beacon };
  }
  return { impl: slotAddress(implSlot), beacon: null };
}

/** Full-range depth of the quote side in USD: L·√P for currency1, L/√P for currency0, both sides counted. */
export function liquidityUsd(pool: PoolState, quote: TokenEntry, quoteUsd: number): number {
  const quoteIs1 = pool.currency1.toLowerCase() === quote.address.toLowerCase();
  const atoms = quoteIs1
    ? (pool.liquidity * pool.sqrtPriceX96) / Q96
    : pool.sqrtPriceX96 > 0n
      ? (pool.liquidity * Q96) / pool.sqrtPriceX96
      : 0n;
  return 2 * (Number(atoms) / 10 ** quote.decimals) * quoteUsd;
}

/** Native ETH has no contract: its record comes from config and its pools. */
export async function nativeRecord(ctx: ScreenContext, t: TokenEntry): Promise<TokenRecord> {
  const pools = await ctx.indexed.poolsOf(t.address);
  return {
    address: t.address,
    symbol: t.symbol,
    name: t.name,
    decimals: t.decimals,
    kind: "core",
    stock_beacon: false,
    tier: "A",
    tradable: true,
    blocked_reason: null,
    venues: pools.map(poolVenue),
    reference: t.feed ? { source: "oracle", feed: t.feed } : { source: "none" },
    liquidity_usd: null,
    creator_tax_bps: 0,
    curve_fee_bps: null,
    multiplier: null,
    flags: { core: true, proxy: false, implementation: null, paused: false, on_curve: false, native: true },
    simulation: null,
    risks: [],
    limits: { max_trade_usd: TIER_LIMITS.A },
    warnings: [],
    screened_at: ctx.now(),
    screen_status: "SCREENED",
  } as TokenRecord;
}

/** The ERC-20 reads, or NOT_A_TOKEN / UNKNOWN_TOKEN when the address cannot be read as a token. */
async function readErc20(ctx: ScreenContext, address: Address): Promise<Erc20Reads> {
  const code = await ctx.chain.getCode({ address });
  if (!code || code === "0x")
    throw new Refusal("NOT_A_TOKEN", `${address} has no contract code on chain ${ctx.config.chainId}`);
  // The token's own code, each read apart with its own gas cap (one multicall would let a
  // gas-burning name() starve the rest) on the fenced reader.
  const [name, symbol, decimals, supply] = await Promise.all([
    fencedRead(ctx.reader, { address, abi: erc20Abi, functionName: "name" }),
    fencedRead(ctx.reader, { address, abi: erc20Abi, functionName: "symbol" }),
    fencedRead(ctx.reader, { address, abi: erc20Abi, functionName: "decimals" }),
    fencedRead(ctx.reader, { address, abi: erc20Abi, functionName: "totalSupply" }),
  ]);
  if (decimals.status !== "success" || supply.status !== "success")
    throw new Refusal("NOT_A_TOKEN", `${address} does not answer decimals() and totalSupply() like an ERC-20`);
  if (name.status !== "success" && symbol.status !== "success")
    throw new Refusal("UNKNOWN_TOKEN", `${address} gives neither name nor symbol: unknown token`);
  return { name, symbol, decimals, supply } as Erc20Reads;
}

/** An issuer stock's pause and UI multiplier (anyone can write the issuer's beacon into a slot: still fenced). */
async function stockState(ctx: ScreenContext, address: Address, add: (c: RiskCode, detail: string) => void) {
  const [p, m] = await Promise.all([
    fencedRead(ctx.reader, { address, abi: stockTokenAbi, functionName: "paused" }),
    fencedRead(ctx.reader, { address, abi: stockTokenAbi, functionName: "uiMultiplier" }),
  ]);
  const paused = p.status === "success" && p.result;
  const multiplier = Number(m.status === "success" ? m.result : 10n ** 18n) / 1e18;
  if (paused) add("STOCK_PAUSED", "the issuer has paused transfers of this stock token");
  return { paused, multiplier };
}

/** Kind: core list, issuer list (core stocks), partner vault, launchpad curve, else plain ERC-20. */
async function kindOf(
  ctx: ScreenContext,
  address: Address,
  core: TokenEntry | undefined,
  onCurve: boolean,
): Promise<string> {
  if (core) return coreKind(core);
  const vault = ctx.config.contracts.partnerAgentVault;
  let kind = "erc20";
  const count = await ctx.chain
    .readContract({ address: vault, abi: partnerAgentVaultAbi, functionName: "agentCount" })
    .catch(() => 0n);
  for (let id = 1n; id <= count && id <= 500n; id++) {
    const agent = await ctx.chain
      .readContract({ address: vault, abi: partnerAgentVaultAbi, functionName: "getAgent", args: [id] })
      .catch(() => null);
    if (agent && agent.token.toLowerCase() === address.toLowerCase()) kind = "partner_agent";
  }
  if (kind === "erc20" && onCurve) kind = "launchpad";
  return kind;
}

/** The token's pools quoted in USDG, or in ETH when ETH has a mark, deepest first. */
export function rankQuoted(config: Config, address: Address, pools: PoolState[], ethUsd: number | null): QuotedPool[] {
  const usdg = config.tokens.USDG!;
  return pools
    .map((p) => {
      const other = p.currency0.toLowerCase() === address.toLowerCase() ? p.currency1 : p.currency0;
      const quote =
        other.toLowerCase() === usdg.address.toLowerCase()
          ? usdg
          : other === zeroAddress && ethUsd
            ? config.tokens.ETH!
            : null;
      return quote ? { pool: p, quote, liquidity: liquidityUsd(p, quote, quote === usdg ? 1 : ethUsd!) } : null;
    })
    .filter((x): x is NonNullable<typeof x> => x !== null)
    .sort((a, b) => b.liquidity - a.liquidity);
}

/** A $100 buy and sell through the deepest pool, simulated; HONEYPOT and the measured tax as risks. */
async function probeOf(
  ctx: ScreenContext,
  address: Address,
  best: QuotedPool,
  ethUsd: number | null,
  add: (c: RiskCode, detail: string) => void,
): Promise<Probe> {
  const { config } = ctx;
  const usdg = config.tokens.USDG!;
  const amount = best.quote === usdg ? parseUnits("100", usdg.decimals) : parseUnits((100 / ethUsd!).toFixed(18), 18);
  const probe: Probe = await probeBuySell({
    chain: ctx.chain,
    router: config.contracts.universalRouter,
    quoter: config.contracts.v4Quoter,
    poolKey: {
      currency0: best.pool.currency0,
      currency1: best.pool.currency1,
      fee: best.pool.fee,
      tickSpacing: best.pool.tickSpacing,
      hooks: best.pool.hooks,
    },
    token: address,
    quote: best.quote.address,
    quoteAmount: amount,
  }).catch((err: Error) => ({
    ok: false,
    buyTaxBps: null,
    sellTaxBps: null,
    honeypot: false,
    reason: `simulation failed: ${err.message.slice(0, 200)}`,
    funded_by_overrides: true as const,
  }));
  if (probe.honeypot) add("HONEYPOT", `buying works but selling fails (${probe.reason ?? "no output"})`);
  const tax = Math.max(probe.buyTaxBps ?? 0, probe.sellTaxBps ?? 0);
  if (tax >= 1000) add("SELL_TAX_HIGH", `measured transfer tax ${tax} bps`);
  else if (tax >= 10) add("TRANSFER_TAX", `measured transfer tax ${tax} bps`);
  return probe;
}

/** The launchpad curve's fee and creator tax (null when unreadable), with their risks. */
async function curveTerms(ctx: ScreenContext, address: Address, add: (c: RiskCode, detail: string) => void) {
  const fees = await ctx.chain
    .readContract({
      address: ctx.config.contracts.launchpad,
      abi: launchpadAbi,
      functionName: "feeBps",
      args: [address],
    })
    .catch(() => null);
  if (fees && fees[1] > 0n) add("CREATOR_TAX", `the curve pays ${fees[1]} bps of each trade to the creator`);
  add("CURVE_TOKEN", "trades on the launchpad bonding curve until it graduates");
  return fees ? { curveFeeBps: Number(fees[0] + fees[2]), creatorTaxBps: Number(fees[1]) } : null;
}

/**
 * Where the token's price comes from; independent marks are market's rule (USDG $1, feeds, the partner
 * token's USDG-pool TWAP).
 */
export function referenceOf(
  config: Config,
  address: Address,
  core: TokenEntry | undefined,
  pools: PoolState[],
  best: QuotedPool | null,
  onCurve: boolean,
) {
  const basis = independentBasis(core);
  const twapPool = basis === "twap" ? deepestPool(pools, address, config.tokens.USDG!.address) : null;
  const reference = core?.feed
    ? { source: "oracle", feed: core.feed }
    : twapPool
      ? { source: "twap", pool_id: twapPool.id, window_s: TWAP_WINDOW_S }
      : best
        ? // Market prices other pool tokens at the pool's mid: say so (not independent).
          { source: "spot", pool_id: best.pool.id }
        : onCurve
          ? { source: "curve", curve: config.contracts.launchpad }
          : { source: "none" };
  return { reference, independent: !(basis === null || (basis === "twap" && !twapPool)) };
}

/**
 * The tier and why a token is blocked, from what the screen found: no venue, a honeypot or a
 * paused stock blocks; core assets are A; B needs depth, no severe risk (a missing independent
 * mark aside) and under 1 % tax; the rest C. Sorts `risks` by severity (stably) as the record shows them.
 */
export function gradeOf(s: {
  core: boolean;
  venues: number;
  honeypot: boolean;
  paused: boolean;
  liquidity: number;
  creatorTaxBps: number;
  risks: Risk[];
}) {
  s.risks.sort((a, b) => (a.severity === b.severity ? 0 : a.severity === "severe" ? -1 : 1));
  const severe = s.risks.some((r) => r.severity === "severe" && r.code !== "NO_INDEPENDENT_MARK");
  const blockedReason = s.venues === 0 ? "NO_ROUTE" : s.honeypot ? "HONEYPOT" : s.paused ? "STOCK_PAUSED" : null;
  const tier = blockedReason
    ? "blocked"
    : s.core
      ? "A"
      : s.liquidity >= B_MIN_LIQUIDITY_USD && !severe && s.creatorTaxBps < 100
        ? "B"
        : "C";
  const warnings: string[] = [];
  if (tier === "C") warnings.push("Tier C: small trades only; expect thin liquidity or taxes.");
  if (blockedReason === "NO_ROUTE") warnings.push("No pool or curve trades this token: nothing can be built.");
  if (s.creatorTaxBps > 0) warnings.push(`Transfers lose about ${s.creatorTaxBps} bps to taxes or creator fees.`);
  return { tier: tier as keyof typeof TIER_LIMITS, blockedReason, warnings };
}

/** The venues a token trades on: its pools, the launchpad curve while on it, and WETH's wrap. */
function venuesOf(config: Config, pools: PoolState[], core: TokenEntry | undefined, curveGraduated: boolean | null) {
  const venues: Record<string, unknown>[] = pools.map(poolVenue);
  if (curveGraduated !== null)
    venues.push({ type: "curve", curve: config.contracts.launchpad, graduated: curveGraduated });
  // WETH trades as ETH: the router wraps and unwraps.
  if (core?.kind === "wrapped") venues.push({ type: "wrap", with: "ETH", via: config.contracts.universalRouter });
  return venues;
}

/** The ETH mark in USD from the indexed feed, or null without one. */
async function ethUsdOf(ctx: ScreenContext): Promise<number | null> {
  const eth = ctx.config.tokens.ETH;
  const ethMark = eth?.feed ? await ctx.indexed.latestMark(eth.feed, ctx.now()).catch(() => null) : null;
  return ethMark ? Number(ethMark.answer) / 1e8 : null;
}

/** The token's depth in USD: its deepest quoted pool's, else the ETH its launchpad curve holds, else none. */
function liquidityOf(best: QuotedPool | null, curveEthWei: bigint | null, ethUsd: number | null): number {
  if (best) return Math.round(best.liquidity);
  return curveEthWei !== null ? Math.round((Number(curveEthWei) / 1e18) * (ethUsd ?? 0)) : 0;
}

/** The probe trade as the record shows it. */
const simulationView = (probe: Probe) => ({
  ok: probe.ok,
  buy_tax_bps: probe.buyTaxBps,
  sell_tax_bps: probe.sellTaxBps,
  honeypot: probe.honeypot,
  reason: probe.reason,
  funded_by_overrides: true,
});

/**
 * A token's record as read now from the chain and the indexer: what it is, where it trades, what
 * a probe trade measures, its risks and its tier. Symbols and names are stored exactly as read.
 */
export async function screenToken(ctx: ScreenContext, address: Address): Promise<TokenRecord> {
  const { config } = ctx;
  const coreEntry = ctx.coreByAddress.get(address.toLowerCase());
  if (coreEntry?.native) return nativeRecord(ctx, coreEntry);
  const { name, symbol, decimals } = await readErc20(ctx, address);
  const core = coreEntry;
  const { impl, beacon } = await implementationOf(ctx, address);
  const stockBeacon = beacon !== null && lc(beacon) === lc(config.contracts.stockBeacon);
  const { risks, add } = riskList();
  const { paused, multiplier } = stockBeacon
    ? await stockState(ctx, address, add)
    : { paused: false, multiplier: null };

  const curve = await ctx.chain
    .readContract({ address: config.contracts.launchpad, abi: launchpadAbi, functionName: "curves", args: [address] })
    .catch(() => null);
  const onCurve = curve !== null && curve[3] > 0n;
  const kind = await kindOf(ctx, address, core, onCurve);
  const pools = await ctx.indexed.poolsOf(address);
  const venues = venuesOf(config, pools, core, onCurve ? curve![2] : null);
  const ethUsd = await ethUsdOf(ctx);
  const best = rankQuoted(config, address, pools, ethUsd)[0] ?? null;
  const liquidity = liquidityOf(best, onCurve ? curve![6] : null, ethUsd);

  const probe = best && !core ? await probeOf(ctx, address, best, ethUsd, add) : null;
  let creatorTaxBps = probe ? Math.max(probe.buyTaxBps ?? 0, probe.sellTaxBps ?? 0) : 0;
  let curveFeeBps: number | null = null;
  const terms = onCurve ? await curveTerms(ctx, address, add) : null;
  if (terms) ({ curveFeeBps, creatorTaxBps } = terms);
  if (impl && !stockBeacon) add("UPGRADEABLE", `behind a proxy: its code (now ${impl}) can be replaced`);
  if (!core && liquidity < 50_000 && venues.length > 0)
    add("LOW_LIQUIDITY", `about $${liquidity.toLocaleString("en-US")} of pool depth`);
  const { reference, independent } = referenceOf(config, address, core, pools, best, onCurve);
  if (!independent)
    add(
      "NO_INDEPENDENT_MARK",
      `no oracle: priced from the ${reference.source === "none" ? "nothing" : reference.source}`,
    );
  const { tier, blockedReason, warnings } = gradeOf({
    core: !!core,
    venues: venues.length,
    honeypot: !!probe?.honeypot,
    paused,
    liquidity,
    creatorTaxBps,
    risks,
  });

  return {
    address,
    symbol: symbol.status === "success" ? symbol.result : "",
    name: name.status === "success" ? name.result : "",
    decimals: decimals.result,
    kind,
    stock_beacon: stockBeacon,
    tier,
    tradable: tier !== "blocked",
    blocked_reason: blockedReason,
    venues,
    reference,
    liquidity_usd: liquidity,
    creator_tax_bps: creatorTaxBps,
    curve_fee_bps: curveFeeBps,
    multiplier,
    flags: { core: !!core, proxy: impl !== null, implementation: impl, paused, on_curve: onCurve },
    simulation: probe ? simulationView(probe) : null,
    risks,
    limits: { max_trade_usd: TIER_LIMITS[tier] },
    warnings,
    screened_at: ctx.now(),
    screen_status: "SCREENED",
  } as TokenRecord;
}
